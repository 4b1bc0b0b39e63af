// The HTTP composition: request id, version header, body reading, authentication and validation from the
// endpoint tables, then one handler per operation name; every error leaves as a Problem.
import { Hono, type Context } from 'hono';
import type { z } from 'zod';
import { SERVICE_VERSION, VERSION_HEADER } from '../../contract/common.js';
import { endpoints, type Endpoint, type EndpointName } from '../../contract/endpoints.js';
import { sandboxEndpoints, type SandboxEndpointName } from '../../contract/sandbox.js';
import { Empty } from '../../contract/common.js';
import { newId } from '../../lib/ids.js';
import type { Logger } from '../../lib/log.js';
import type { Caller } from '../core/access.js';
import { ServiceError } from '../core/errors.js';
import { problemResponse } from './problem.js';
import { validate } from './validate.js';

export const MAX_BODY_BYTES = 40 * 1024 * 1024;

export interface Reply {
  status?: number;
  body?: unknown;
  headers?: Record<string, string>;
  /** A non-JSON body (raw message source, HTML pages). */
  raw?: { body: string | Uint8Array; contentType: string };
}

type BodyOf<E> = E extends { body: infer S extends z.ZodType } ? z.output<S> : undefined;
type QueryOf<E> = E extends { query: infer S extends z.ZodType } ? z.output<S> : Record<string, never>;

export interface RequestContext<E> {
  body: BodyOf<E>;
  query: QueryOf<E>;
  params: Record<string, string>;
  caller: Caller;
  ip: string;
  requestId: string;
  headers: Headers;
}

export type V1Handlers = { [N in EndpointName]: (ctx: RequestContext<(typeof endpoints)[N]>) => Promise<Reply | void> | Reply | void };
export type SandboxHandlers = {
  [N in SandboxEndpointName]: (ctx: RequestContext<(typeof sandboxEndpoints)[N]>) => Promise<Reply | void> | Reply | void;
};

export interface AppDeps {
  log: Logger;
  trustProxy: boolean;
  authorize(req: Pick<Endpoint, 'auth' | 'workspace' | 'scope' | 'role'>, bearer: string | null, ip: string): Promise<Caller>;
  /** Checks the sandbox admin credential: the admin token as a bearer, or the inbox page's cookie (constant time). */
  isAdmin(bearer: string | null, req: Request): boolean;
  v1: V1Handlers;
  sandbox: SandboxHandlers;
  /** Extra plain routes (inbox page, verify-email page, tracking). */
  extra?: (app: Hono<any>) => void;
}

type Route = { method: string; pattern: RegExp };
export type Env = { Variables: { requestId: string } };

/** The caller of an operation that takes no credential (and of sandbox routes, once the admin token checked out). */
const ANONYMOUS: Caller = { principal: null as never, workspace: null, role: null };

function patternOf(path: string): RegExp {
  return new RegExp('^' + path.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replace(/:(\w+)/g, '[^/]+') + '/?$');
}

export function clientIp(c: Context, trustProxy: boolean): string {
  if (trustProxy) {
    const xff = c.req.header('x-forwarded-for');
    if (xff) return xff.split(',')[0]!.trim();
  }
  const incoming = (c.env as { incoming?: { socket?: { remoteAddress?: string } } } | undefined)?.incoming;
  return incoming?.socket?.remoteAddress ?? '127.0.0.1';
}

function bearerOf(c: Context): string | null {
  const h = c.req.header('authorization');
  if (!h) return null;
  const m = /^Bearer\s+(\S+)\s*$/i.exec(h);
  return m ? m[1]! : '';
}

const tooLarge = () => new ServiceError('payload_too_large', 'The request body is larger than 40 MiB.');

/**
 * Reads the body as text with the 40 MiB cap; empty string when there is none. Under node it reads the socket's
 * IncomingMessage directly (building a web ReadableStream per request costs more than the rest of a send).
 */
async function readBody(c: Context): Promise<string> {
  const declared = Number(c.req.header('content-length') ?? '0');
  if (declared > MAX_BODY_BYTES) throw tooLarge();
  const incoming = (c.env as { incoming?: NodeJS.ReadableStream & { readableEnded?: boolean } } | undefined)?.incoming;
  const chunks: Uint8Array[] = [];
  let size = 0;
  const add = (chunk: Uint8Array) => {
    size += chunk.byteLength;
    if (size > MAX_BODY_BYTES) throw tooLarge();
    chunks.push(chunk);
  };
  if (incoming && !incoming.readableEnded) {
    for await (const chunk of incoming) add(chunk as Uint8Array);
  } else if (c.req.raw.body) {
    const reader = c.req.raw.body.getReader();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      try {
        add(value);
      } catch (err) {
        await reader.cancel().catch(() => {});
        throw err;
      }
    }
  }
  return Buffer.concat(chunks).toString('utf8');
}

function parseJsonBody(c: Context, text: string, schema: z.ZodType | undefined): unknown {
  if (text.length === 0 && !schema) return undefined;
  const type = (c.req.header('content-type') ?? '').split(';')[0]!.trim().toLowerCase();
  if (type !== 'application/json') {
    throw new ServiceError('unsupported_content_type', 'Send the request body as JSON with "Content-Type: application/json".');
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new ServiceError('invalid_json', `The request body is not valid JSON: ${(err as Error).message}`);
  }
  return validate(schema ?? Empty, value, 'body');
}

function queryOf(c: Context): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const [k, values] of Object.entries(c.req.queries())) out[k] = values.length === 1 ? values[0]! : values;
  return out;
}

function send(c: Context, defaultStatus: number, reply: Reply | void): Response {
  const r = reply ?? {};
  const status = r.status ?? defaultStatus;
  const headers = new Headers(r.headers);
  if (r.raw) {
    headers.set('Content-Type', r.raw.contentType);
    return new Response(r.raw.body as BodyInit, { status, headers });
  }
  if (status === 204 || r.body === undefined) return new Response(null, { status, headers });
  headers.set('Content-Type', 'application/json');
  return new Response(JSON.stringify(r.body), { status, headers });
}

export function createApp(deps: AppDeps): Hono<Env> {
  const app = new Hono<Env>();
  const routes: Route[] = [];

  app.use('*', async (c, next) => {
    const requestId = newId('req');
    c.set('requestId', requestId);
    const started = performance.now();
    const version = c.req.header(VERSION_HEADER);
    if (version !== undefined && version !== SERVICE_VERSION) {
      c.res = problemResponse(
        new ServiceError('unsupported_version', `Service-Version "${version.slice(0, 40)}" is not supported; the only supported version is ${SERVICE_VERSION}.`),
        requestId,
      );
    } else {
      await next();
    }
    c.res.headers.set(VERSION_HEADER, SERVICE_VERSION);
    c.res.headers.set('X-Request-Id', requestId);
    deps.log.info('request', {
      request_id: requestId, method: c.req.method, path: c.req.path, status: c.res.status,
      ms: Math.round(performance.now() - started),
    });
  });

  function register<E extends { method: string; path: string; body?: z.ZodType; query?: z.ZodType; success: readonly [number, unknown] }>(
    fullPath: string,
    e: E,
    authorize: (c: Context, ip: string) => Promise<Caller>,
    handler: (ctx: RequestContext<E>) => Promise<Reply | void> | Reply | void,
  ) {
    routes.push({ method: e.method, pattern: patternOf(fullPath) });
    app.on(e.method, fullPath, async (c) => {
      const requestId = c.get('requestId');
      const ip = clientIp(c, deps.trustProxy);
      const caller = await authorize(c, ip);
      const rawBody = c.req.method === 'GET' || c.req.method === 'HEAD' ? '' : await readBody(c);
      const body = parseJsonBody(c, rawBody, e.body) as BodyOf<E>;
      const query = (e.query ? validate(e.query, queryOf(c), 'query') : {}) as QueryOf<E>;
      const reply = await handler({ body, query, params: c.req.param() as Record<string, string>, caller, ip, requestId, headers: c.req.raw.headers });
      return send(c, e.success[0], reply);
    });
  }

  for (const [name, e] of Object.entries(endpoints) as [EndpointName, Endpoint][]) {
    register(`/v1${e.path}`, e, (c, ip) => (e.auth === 'none' ? Promise.resolve(ANONYMOUS) : deps.authorize(e, bearerOf(c), ip)), deps.v1[name] as never);
  }
  for (const [name, e] of Object.entries(sandboxEndpoints)) {
    register(
      e.path,
      e,
      async (c) => {
        if (!deps.isAdmin(bearerOf(c), c.req.raw)) {
          throw new ServiceError('missing_credentials', 'Sandbox routes take the admin token printed at start: "Authorization: Bearer <admin_token>".');
        }
        return ANONYMOUS;
      },
      deps.sandbox[name as SandboxEndpointName] as never,
    );
  }
  deps.extra?.(app);

  app.notFound((c) => {
    const requestId = c.get('requestId');
    const allowed = routes.filter((r) => r.pattern.test(c.req.path)).map((r) => r.method);
    if (allowed.length) {
      return problemResponse(
        new ServiceError('method_not_allowed', `${c.req.method} is not allowed on ${c.req.path}; allowed: ${allowed.join(', ')}.`),
        requestId,
        { Allow: [...new Set(allowed)].join(', ') },
      );
    }
    return problemResponse(new ServiceError('not_found', `No route ${c.req.method} ${c.req.path}.`), requestId);
  });

  app.onError((err, c) => {
    const requestId = (c.get('requestId')) ?? newId('req');
    if (err instanceof ServiceError) {
      const headers: Record<string, string> = {};
      if (err.code === 'missing_credentials' || err.code.startsWith('invalid_') && ERR_401.has(err.code)) {
        headers['WWW-Authenticate'] = 'Bearer';
      }
      return problemResponse(err, requestId, headers);
    }
    deps.log.error('unhandled error', { request_id: requestId, error: err instanceof Error ? (err.stack ?? err.message) : String(err) });
    return problemResponse(new ServiceError('internal_error', 'Something went wrong on our side; quote the request id if you report it.'), requestId);
  });

  return app;
}

const ERR_401 = new Set(['invalid_api_key', 'invalid_token']);
