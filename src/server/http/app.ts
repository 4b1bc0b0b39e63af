// The HTTP composition: request id, version header, body reading, authentication and validation from the
// endpoint tables, then one handler per operation name; every error leaves as a Problem.
import { Hono, type Context } from 'hono';
import { isUtf8 } from 'node:buffer';
import type { z } from 'zod';
import type { IncomingMessage } from 'node:http';
import { DEFAULT_BODY_LIMIT, SERVICE_VERSION, VERSION_HEADER } from '../../contract/common.js';
import { endpoints, type Endpoint, type EndpointName } from '../../contract/endpoints.js';
import { sandboxEndpoints, type SandboxEndpointName } from '../../contract/sandbox.js';
import { CHAOS_HEADER, INSTANCE_HEADER, SANDBOX_HEADER } from '../../contract/sandbox-headers.js';
import { Empty } from '../../contract/common.js';
import { newId } from '../../lib/ids.js';
import type { Logger } from '../../lib/log.js';
import type { Caller } from '../core/access.js';
import { chaosCode, type Chaos, type ChaosHit } from '../sandbox/chaos.js';
import { ServiceError, storageFull } from '../core/errors.js';
import { isDiskFull } from '../../lib/disk-full.js';
import { problemResponse } from './problem.js';
import { validate } from './validate.js';
import {
  ClientGone,
  createBodyBudget,
  DEFAULT_BODY_LIMITS,
  readIncoming,
  tooLarge,
  type BodyBudget,
  type BodyLimits,
} from './body.js';

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
  /** Aborted when the client goes away before the answer (a long poll stops waiting). */
  signal: AbortSignal;
}

export type V1Handlers = {
  [N in EndpointName]: (ctx: RequestContext<(typeof endpoints)[N]>) => Promise<Reply | void> | Reply | void;
};
export type SandboxHandlers = {
  [N in SandboxEndpointName]: (
    ctx: RequestContext<(typeof sandboxEndpoints)[N]>,
  ) => Promise<Reply | void> | Reply | void;
};

export interface AppDeps {
  log: Logger;
  /** The level of the line each request is logged with (default `info`). */
  requestLog?: 'debug' | 'info';
  trustProxy: boolean;
  /** The server's public origin, where every Problem's `docs_url` points (known once the port is bound). */
  origin(): string;
  authorize(
    req: Pick<Endpoint, 'auth' | 'workspace' | 'scope' | 'role'>,
    bearer: string | null,
    ip: string,
  ): Promise<Caller>;
  /** Checks the sandbox admin credential: the admin token as a bearer, or the inbox page's cookie (constant time). */
  isAdmin(bearer: string | null, req: Request): boolean;
  v1: V1Handlers;
  sandbox: SandboxHandlers;
  /** Extra plain routes (inbox page, verify-email page, tracking). */
  // biome-ignore lint/suspicious/noExplicitAny: any Hono app, whatever its bindings
  extra?: (app: Hono<any>) => void;
  /** How much body the server buffers at once and how long a body may stall (defaults: 48 MiB, 15 s). */
  bodyLimits?: BodyLimits;
  /** True once the server is shutting down: no connection is kept for another request. */
  stopping?: () => boolean;
  /** What is full when a write finds no room ("the disk holding the data directory … is full"). */
  storage?: string;
  /** The data directory's instance id (sandbox/instance.ts), sent on every answer beside `Svc-Sandbox: 1`. */
  instance?: string;
  /** The chaos rules (PUT /sandbox/chaos) every `/v1` request is put to before anything else is done with it. */
  chaos?: Pick<Chaos, 'http'>;
  /** Aborted when the server begins to stop: a request a chaos rule holds back is let go at once. */
  stopped?: AbortSignal;
}

type Route = { method: string; pattern: RegExp };
export type Env = { Variables: { requestId: string; chaos?: { index: number; did: string } } };

/** The caller of an operation that takes no credential (and of sandbox routes, once the admin token checked out). */
const ANONYMOUS: Caller = { principal: null as never, workspace: null, role: null };

function patternOf(path: string): RegExp {
  // Exactly the paths the router serves (no trailing slash), so that a 405 never lists the method it refuses.
  return new RegExp(`^${path.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replace(/:(\w+)/g, '[^/]+')}$`);
}

export function clientIp(c: Context, trustProxy: boolean): string {
  if (trustProxy) {
    const xff = c.req.header('x-forwarded-for');
    if (xff) return xff.split(',')[0]!.trim();
  }
  const incoming = (c.env as { incoming?: { socket?: { remoteAddress?: string } } } | undefined)?.incoming;
  return incoming?.socket?.remoteAddress ?? '127.0.0.1';
}

/** The path as the request sent it, when it has a `.` or `..` segment (also percent-encoded), which a URL resolves. */
function dotted(c: Context): string | undefined {
  const target = (c.env as { incoming?: IncomingMessage } | undefined)?.incoming?.url ?? '';
  const path = target.split('?')[0]!;
  return /(^|\/)(\.|%2e){1,2}(\/|$)/i.test(path) ? path : undefined;
}

function bearerOf(c: Context): string | null {
  const h = c.req.header('authorization');
  if (!h) return null;
  const m = /^Bearer\s+(\S+)\s*$/i.exec(h);
  return m ? m[1]! : '';
}

/**
 * The request's body, read straight from the socket's IncomingMessage (building a web ReadableStream per request cost
 * more than the rest of a send), or from the Request when the app is called in-process, and handed to `parse` once
 * whole: only what `parse` makes of it is kept, so the bytes and the text of a 40 MiB send are let go as soon as it
 * is parsed (the budget counts them until the answer all the same).
 */
function bodyReader<T>(
  c: Context,
  limit: number,
  budget: BodyBudget,
  limits: BodyLimits,
  parse: (bytes: Buffer) => T,
): { body: Promise<T>; release: () => void } {
  const incoming = (c.env as { incoming?: IncomingMessage } | undefined)?.incoming;
  if (incoming) {
    const read = readIncoming(incoming, limit, budget, limits.idleMs, limits.deadlineMs);
    return { body: read.body.then(parse), release: read.release };
  }
  const body = c.req.raw.arrayBuffer().then((b) => {
    if (b.byteLength > limit) throw tooLarge(limit);
    return parse(Buffer.from(b));
  });
  return { body, release: () => {} };
}

/** The body as text: JSON travels as UTF-8 (RFC 8259 section 8.1), and decoding a stray byte as U+FFFD would change the request silently. */
function utf8(bytes: Buffer): string {
  if (!isUtf8(bytes))
    throw new ServiceError('invalid_json', 'The request body is not valid UTF-8; send the JSON encoded as UTF-8.');
  return bytes.toString('utf8');
}

function parseJsonBody(c: Context, text: string, schema: z.ZodType | undefined): unknown {
  if (text.length === 0 && !schema) return undefined;
  // An operation whose body is wholly optional takes no body at all, with or without a Content-Type.
  if (text.length === 0 && schema?.safeParse({}).success) return validate(schema, {}, 'body');
  const type = (c.req.header('content-type') ?? '').split(';')[0]!.trim().toLowerCase();
  if (type !== 'application/json') {
    throw new ServiceError(
      'unsupported_content_type',
      'Send the request body as JSON with "Content-Type: application/json".',
    );
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

function send(_c: Context, defaultStatus: number, reply: Reply | void): Response {
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
  const limits = deps.bodyLimits ?? DEFAULT_BODY_LIMITS;
  const budget = createBodyBudget(limits.totalBytes);

  app.use('*', async (c, next) => {
    const requestId = newId('req');
    c.set('requestId', requestId);
    const started = performance.now();
    const version = c.req.header(VERSION_HEADER);
    if (version !== undefined && version !== SERVICE_VERSION) {
      c.res = problemResponse(
        new ServiceError(
          'unsupported_version',
          `Service-Version "${version.slice(0, 40)}" is not supported; send ${SERVICE_VERSION} or leave the header out.`,
        ),
        requestId,
        deps.origin(),
      );
    } else if (dotted(c)) {
      // `/v1/%2e%2e` would be `/` once parsed as a URL: a path with dot segments is answered as sent, never resolved.
      c.res = noRoute(c, dotted(c)!);
    } else {
      await next();
    }
    c.res.headers.set(VERSION_HEADER, SERVICE_VERSION);
    c.res.headers.set('X-Request-Id', requestId);
    // This app is only ever a local server: clients give sandbox hints by this, never by guessing from the host.
    c.res.headers.set(SANDBOX_HEADER, '1');
    if (deps.instance) c.res.headers.set(INSTANCE_HEADER, deps.instance);
    // Answered before its body was read (refused before authentication, too large, stalled): the rest of the body
    // is not waited for, and the connection is not reused. Nor is any while the server shuts down: a client that
    // asks again at once (a long poll) would otherwise keep the server up on its open connection.
    const incoming = (c.env as { incoming?: IncomingMessage } | undefined)?.incoming;
    const hasBody =
      Number(incoming?.headers['content-length'] ?? 0) > 0 || incoming?.headers['transfer-encoding'] !== undefined;
    if ((incoming && hasBody && !incoming.readableEnded) || deps.stopping?.()) {
      c.res.headers.set('Connection', 'close');
    }
    const chaos = c.get('chaos');
    if (chaos) c.res.headers.set(CHAOS_HEADER, String(chaos.index));
    deps.log[deps.requestLog ?? 'info']('request', {
      request_id: requestId,
      method: c.req.method,
      path: c.req.path,
      status: chaos?.did === 'reset' ? 'reset' : c.res.status,
      ms: Math.round(performance.now() - started),
      ...(chaos ? { chaos: `rule ${chaos.index}: ${chaos.did}` } : {}),
    });
  });

  // Chaos (sandbox/chaos.ts) comes first on /v1, before the route reads a byte of the body or looks at the credential:
  // a request it answers has done nothing (a send refused with 503 created no message).
  const chaos = deps.chaos;
  if (chaos) {
    app.use('/v1/*', async (c, next) => {
      const hit = chaos.http(c.req.method, c.req.path);
      if (!hit) return next();
      const answer = chaosAnswer(c, hit, deps.origin());
      c.set('chaos', { index: hit.index, did: answer.did });
      if (answer.response) return answer.response;
      await holdBack(answer.delayMs!, deps.stopped, c.req.raw.signal);
      await next();
    });
  }

  function register<
    E extends {
      method: string;
      path: string;
      body?: z.ZodType;
      maxBody?: number;
      query?: z.ZodType;
      success: readonly [number, unknown];
    },
  >(
    fullPath: string,
    e: E,
    authorize: (c: Context, ip: string) => Promise<Caller>,
    handler: (ctx: RequestContext<E>) => Promise<Reply | void> | Reply | void,
  ) {
    routes.push({ method: e.method, pattern: patternOf(fullPath) });
    const limit = e.maxBody ?? DEFAULT_BODY_LIMIT;
    app.on(e.method, fullPath, async (c) => {
      const requestId = c.get('requestId');
      const ip = clientIp(c, deps.trustProxy);
      // Before authentication: a declared length over the limit is refused without reading a byte.
      if (Number(c.req.header('content-length') ?? '0') > limit) throw tooLarge(limit);
      const caller = await authorize(c, ip);
      const read =
        c.req.method === 'GET' || c.req.method === 'HEAD'
          ? null
          : bodyReader(c, limit, budget, limits, (bytes) => parseJsonBody(c, utf8(bytes), e.body));
      try {
        const body = (read ? await read.body : parseJsonBody(c, '', e.body)) as BodyOf<E>;
        const query = (e.query ? validate(e.query, queryOf(c), 'query') : {}) as QueryOf<E>;
        const reply = await handler({
          body,
          query,
          params: c.req.param() as Record<string, string>,
          caller,
          ip,
          requestId,
          headers: c.req.raw.headers,
          get signal() {
            return c.req.raw.signal;
          },
        });
        return send(c, e.success[0], reply);
      } finally {
        read?.release();
      }
    });
  }

  for (const [name, e] of Object.entries(endpoints) as [EndpointName, Endpoint][]) {
    register(
      `/v1${e.path}`,
      e,
      (c, ip) => (e.auth === 'none' ? Promise.resolve(ANONYMOUS) : deps.authorize(e, bearerOf(c), ip)),
      deps.v1[name] as never,
    );
  }
  for (const [name, e] of Object.entries(sandboxEndpoints)) {
    register(
      e.path,
      e,
      async (c) => {
        const bearer = bearerOf(c);
        if (!deps.isAdmin(bearer, c.req.raw)) {
          const how =
            'sandbox routes take the admin token `svc serve` prints (admin_token of its ready line, also in the admin-token file of its data directory) as "Authorization: Bearer <admin_token>".';
          if (!bearer) throw new ServiceError('missing_credentials', `No credential: ${how}`);
          throw new ServiceError('invalid_token', `This is not the admin token: ${how}`);
        }
        return ANONYMOUS;
      },
      deps.sandbox[name as SandboxEndpointName] as never,
    );
  }
  deps.extra?.(app);

  const noRoute = (c: Context<Env>, path: string) =>
    problemResponse(
      new ServiceError(
        'not_found',
        `No route ${c.req.method} ${path.slice(0, 200)}; the API is under /v1 and GET /v1/openapi.json lists it.`,
      ),
      c.get('requestId'),
      deps.origin(),
    );
  app.notFound((c) => {
    const requestId = c.get('requestId');
    const allowed = [...new Set(routes.filter((r) => r.pattern.test(c.req.path)).map((r) => r.method))];
    if (allowed.length) {
      return problemResponse(
        new ServiceError(
          'method_not_allowed',
          `${c.req.method} is not allowed on this path; use ${allowed.join(' or ')}.`,
        ),
        requestId,
        deps.origin(),
        { Allow: allowed.join(', ') },
      );
    }
    return noRoute(c, c.req.path);
  });

  app.onError((err, c) => {
    const requestId = c.get('requestId') ?? newId('req');
    if (err instanceof ServiceError) {
      const headers: Record<string, string> = {};
      if (err.code === 'missing_credentials' || (err.code.startsWith('invalid_') && ERR_401.has(err.code))) {
        headers['WWW-Authenticate'] = 'Bearer';
      }
      return problemResponse(err, requestId, deps.origin(), headers);
    }
    if (err instanceof ClientGone) {
      // Nothing reaches the client; the answer only closes the exchange.
      deps.log.info('request abandoned by the client', { request_id: requestId });
      return problemResponse(new ServiceError('invalid_request', err.message), requestId, deps.origin());
    }
    if (isDiskFull(err)) {
      deps.log.warn('write refused: no room', { request_id: requestId, full: deps.storage });
      return problemResponse(
        storageFull(deps.storage ?? 'the disk holding the data is full'),
        requestId,
        deps.origin(),
      );
    }
    deps.log.error('unhandled error', {
      request_id: requestId,
      error: err instanceof Error ? (err.stack ?? err.message) : String(err),
    });
    return problemResponse(
      new ServiceError('internal_error', 'Something went wrong on our side; quote the request id if you report it.'),
      requestId,
      deps.origin(),
    );
  });

  return app;
}

const ERR_401 = new Set(['invalid_api_key', 'invalid_token']);

/**
 * What a chaos rule does to a request: a Problem of its status (`Retry-After` on 429 and 503, 1 s unless the rule gives
 * another), a delay before the request is handled as usual, or the connection reset under it.
 */
function chaosAnswer(
  c: Context,
  hit: ChaosHit,
  origin: string,
): { did: string; response?: Response; delayMs?: number } {
  const a = hit.action;
  if ('delay_ms' in a) return { did: `delayed ${a.delay_ms} ms`, delayMs: a.delay_ms };
  const rule = `chaos rule ${hit.index}`;
  const requestId = c.get('requestId');
  if ('reset' in a) {
    const socket = (c.env as { incoming?: IncomingMessage } | undefined)?.incoming?.socket;
    if (socket) {
      // A TCP reset, not a close: the client sees the connection fail under its request, as when a peer crashes.
      socket.resetAndDestroy();
      return { did: 'reset', response: new Response(null, { status: 500 }) };
    }
    const err = new ServiceError(
      'internal_error',
      `The ${rule} drops the connection, and this request came without one.`,
    );
    return { did: 'reset', response: problemResponse(err, requestId, origin) };
  }
  // An SMTP rule's action (chaos.http never answers with one): the request goes on.
  if (!('status' in a)) return { did: 'nothing', delayMs: 0 };
  const status = a.status;
  const headers: Record<string, string> = {};
  const retryAfter = a.retry_after ?? (status === 429 || status === 503 ? 1 : undefined);
  if (retryAfter !== undefined) headers['Retry-After'] = String(retryAfter);
  if (status === 401) headers['WWW-Authenticate'] = 'Bearer';
  const err = new ServiceError(
    chaosCode(status),
    `The sandbox's ${rule} answered this request with ${status} on purpose, before it was handled; ` +
      'clear the rules with `svc sandbox chaos clear` (DELETE /sandbox/chaos), or see them with `svc sandbox chaos list`.',
    { status },
  );
  return { did: `answered ${status}`, response: problemResponse(err, requestId, origin, headers) };
}

/** Waits `ms`, or less when the server stops or the client goes away (the request then goes on, and ends as usual). */
function holdBack(ms: number, ...signals: (AbortSignal | undefined)[]): Promise<void> {
  const signal = AbortSignal.any(signals.filter((s): s is AbortSignal => s !== undefined));
  // An abort ends the wait early; it is no failure of the request. The global timer, which a test's fake timers replace.
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const end = () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', end);
      resolve();
    };
    const timer = setTimeout(end, ms);
    signal.addEventListener('abort', end);
  });
}
