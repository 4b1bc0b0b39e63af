// What the app reads of a request besides its body: the socket it came on, its address, its path as sent, its bearer
// credential and its query.
import type { HttpBindings } from '@hono/node-server';
import type { Context } from 'hono';
import type { IncomingMessage } from 'node:http';

/** The app's bindings: @hono/node-server's (the request's IncomingMessage), and what the middleware sets. */
export type Env = {
  Bindings: Partial<HttpBindings>;
  Variables: { requestId: string; chaos?: { index: number; did: string } };
};

/** The request's IncomingMessage (@hono/node-server's binding); absent when the app is called in-process (tests). */
export function incomingOf(c: Context<Env>): IncomingMessage | undefined {
  return c.env?.incoming;
}

export function clientIp(c: Context<Env>, trustProxy: boolean): string {
  if (trustProxy) {
    const xff = c.req.header('x-forwarded-for');
    if (xff) return (xff.split(',')[0] ?? '').trim();
  }
  return incomingOf(c)?.socket?.remoteAddress ?? '127.0.0.1';
}

/** The path as the request sent it, when it has a `.` or `..` segment (also percent-encoded), which a URL resolves. */
export function dotted(c: Context<Env>): string | undefined {
  const target = incomingOf(c)?.url ?? '';
  const path = target.split('?')[0] ?? '';
  return /(^|\/)(\.|%2e){1,2}(\/|$)/i.test(path) ? path : undefined;
}

/** The `Authorization: Bearer` credential: null without the header, '' when it is not a bearer. */
export function bearerOf(c: Context<Env>): string | null {
  const h = c.req.header('authorization');
  if (!h) return null;
  const m = /^Bearer\s+(\S+)\s*$/i.exec(h);
  return m?.[1] ?? '';
}

/** The query as the endpoint's schema takes it: a parameter given once is a string, one repeated an array. */
export function queryOf(c: Context<Env>): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const [k, values] of Object.entries(c.req.queries())) out[k] = values.length === 1 ? values[0]! : values;
  return out;
}
