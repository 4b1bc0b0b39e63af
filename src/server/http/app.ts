// The HTTP composition: request id, version header and the headers of every answer, the chaos rules (chaos.ts), then
// one route per entry of the endpoint table (`/v1`, and the sandbox routes beside it with the admin token) — its caller authorized, its body read (json-body.ts) and its query
// validated before its handler runs — and every error answered as a Problem.
import { Hono, type Context } from 'hono';
import { routePath } from 'hono/route';
import { DEFAULT_BODY_LIMIT, SERVICE_VERSION, VERSION_HEADER } from '../../contract/common.js';
import { type AdminEndpoint, endpoints, type Endpoint, type EndpointName, isV1 } from '../../contract/endpoints.js';
import { CHAOS_HEADER, INSTANCE_HEADER, SANDBOX_HEADER } from '../../contract/sandbox-headers.js';
import { isDiskFull } from '../../lib/disk-full.js';
import { newId } from '../../lib/ids.js';
import type { Logger } from '../../lib/log.js';
import { BIG_MESSAGE_BYTES } from '../core/rules/big-message.js';
import { ANONYMOUS, type AnonymousCaller, type CallerOf, type Requirement } from '../core/access.js';
import { ServiceError, storageFull } from '../core/errors.js';
import { validate } from '../core/rules/validate.js';
import type { Chaos } from '../core/chaos.js';
import { ClientGone, createBodyBudget, DEFAULT_BODY_LIMITS, tooLarge, type BodyLimits } from './body.js';
import { useChaos } from './chaos.js';
import type { BodyOf, Handler, Handlers, ParamsOf, QueryOf, Reply } from './handlers.js';
import { jsonBody } from './json-body.js';
import { problemResponse, RouteRefusal } from './problem.js';
import { bearerOf, clientIp, dotted, type Env, incomingOf, queryOf } from './request.js';
import { hop } from '../../lib/hops.js';

/** A request as a hop mark names it: its method and path, ids (`msg_…`, `eml_…`) as `{id}`. */
const hopPath = (method: string, path: string) => `${method} ${path.replace(/\/[a-z]{3}_\w+/g, '/{id}')}`;

export interface AppDeps {
  log: Logger;
  /** The level of the line each request is logged with (default `info`). */
  requestLog?: 'debug' | 'info';
  trustProxy: boolean;
  /** The server's public origin, where every Problem's `docs_url` points (known once the port is bound). */
  origin(): string;
  /** Resolves the caller of an operation (core/access.ts), typed by its requirements. */
  authorize<E extends Requirement>(req: E, bearer: string | null, ip: string): Promise<CallerOf<E>>;
  /**
   * Checks the sandbox credential (inbox-page/auth.ts): the admin token or an inbox session as the bearer, or for a view
   * the page opens by address (`views` in its entry) that message's view token.
   */
  isAdmin(bearer: string | null, view: { token: string | undefined; scope: string } | null): boolean;
  /** A handler for every entry of the endpoint table. */
  handlers: Handlers;
  /** Extra plain routes (inbox page, verify-email page, tracking). */
  // biome-ignore lint/suspicious/noExplicitAny: any Hono app, whatever its bindings
  extra?: (app: Hono<any>) => void;
  /** How much body the server buffers at once and how long a body may stall (defaults: 48 MiB, 15 s). */
  bodyLimits?: BodyLimits;
  /** True once the server is shutting down: no connection is kept for another request. */
  stopping?: () => boolean;
  /** What is full when a write finds no room ("the disk holding the data directory … is full"). */
  storage?: string;
  /** The data directory's instance id (server/instance.ts), sent on every answer beside `Svc-Sandbox: 1`. */
  instance?: string;
  /** The chaos rules (PUT /sandbox/chaos) every `/v1` request is put to before anything else is done with it. */
  chaos?: Pick<Chaos, 'http'>;
  /** Aborted when the server begins to stop: a request a chaos rule holds back is let go at once. */
  stopped?: AbortSignal;
  /**
   * Starts a full garbage collection (`svc serve` exposes V8's), run once a big request is answered and no other body
   * is being read: a 35 MB text arrives as bytes, then as their text, then parsed, and those copies (a few hundred MB of
   * garbage) would otherwise stay resident under the delivery of that very message.
   */
  collect?: () => void;
  /**
   * Told of every request answered (core/metrics.ts): its method, the pattern of its route (`/v1/emails/{id}`, never
   * the path asked; `unmatched` when no route took it), its status and how long it took to answer, in seconds.
   */
  observe?: (method: string, route: string, status: number, seconds: number) => void;
}

type Route = { method: string; pattern: RegExp };

/** The pattern of the route that took a request (`/v1/emails/{id}`), never its path; `unmatched` when none did. */
function routeOf(c: Context<Env>): string {
  // The last route matched is the handler's; a middleware's (`*`, `/v1/*`) last means no route took it.
  const path = routePath(c, -1);
  if (!path || path.endsWith('*')) return 'unmatched';
  return path.replace(/:(\w+)(\{[^}]*\})?/g, '{$1}');
}

function patternOf(path: string): RegExp {
  // Exactly the paths the router serves (no trailing slash), so that a 405 never lists the method it refuses.
  return new RegExp(`^${path.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replace(/:(\w+)/g, '[^/]+')}$`);
}

/** A handler's reply as the Response it makes: JSON, a raw body, or none; the entry's success status by default. */
function send(defaultStatus: number, reply: Reply | void): Response {
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
    hop(() => `http: ${hopPath(c.req.method, c.req.path)} in`);
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
    hop(() => `http: ${hopPath(c.req.method, c.req.path)} answered`);
    c.res.headers.set(VERSION_HEADER, SERVICE_VERSION);
    c.res.headers.set('X-Request-Id', requestId);
    // This app is only ever a local server: clients give sandbox hints by this, never by guessing from the host.
    c.res.headers.set(SANDBOX_HEADER, '1');
    if (deps.instance) c.res.headers.set(INSTANCE_HEADER, deps.instance);
    // Answered before its body was read (refused before authentication, too large, stalled): the rest of the body
    // is not waited for, and the connection is not reused. Nor is any while the server shuts down: a client that
    // asks again at once (a long poll) would otherwise keep the server up on its open connection.
    const incoming = incomingOf(c);
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
    deps.observe?.(c.req.method, routeOf(c), c.res.status, (performance.now() - started) / 1000);
  });

  // Chaos comes first on /v1 (http/chaos.ts).
  if (deps.chaos) useChaos(app, deps.chaos, deps.origin, deps.stopped);

  /** Registers one endpoint-table entry: its route, and the wrapper that authorizes, reads and answers it. */
  function register<E extends Endpoint>(
    name: string,
    fullPath: string,
    e: E,
    authorize: (c: Context<Env>, ip: string) => Promise<CallerOf<E>>,
    handler: Handler<E>,
  ) {
    routes.push({ method: e.method, pattern: patternOf(fullPath) });
    const limit = e.maxBody ?? DEFAULT_BODY_LIMIT;
    app.on(e.method, fullPath, async (c) => {
      const requestId = c.get('requestId');
      const ip = clientIp(c, deps.trustProxy);
      // Before authentication: a declared length over the limit is refused without reading a byte.
      if (Number(c.req.header('content-length') ?? '0') > limit) throw tooLarge(limit);
      const caller = await authorize(c, ip);
      const read = jsonBody(c, name, e.body, limit, budget, limits);
      try {
        const body = (await read.body) as BodyOf<E>;
        const query = (e.query ? validate(e.query, queryOf(c), 'query') : {}) as QueryOf<E>;
        const reply = await handler({
          body,
          query,
          // The router matched the entry's own path, so its parameters are those the path names.
          params: c.req.param() as ParamsOf<E>,
          caller,
          ip,
          requestId,
          headers: c.req.raw.headers,
          get signal() {
            return c.req.raw.signal;
          },
        });
        return send(e.success[0], reply);
      } finally {
        read?.release();
        // After this turn, when the request's copies are no longer referenced from here.
        if (read && Number(c.req.header('content-length') ?? '0') >= BIG_MESSAGE_BYTES && budget.held === 0)
          setImmediate(() => deps.collect?.());
      }
    });
  }

  /** A sandbox route's caller: the admin token (or an inbox session) as the bearer, or for a view its view token. */
  async function admin(c: Context<Env>, e: AdminEndpoint): Promise<AnonymousCaller> {
    const bearer = bearerOf(c);
    const view = e.views ? { token: c.req.query('view'), scope: c.req.param('id') ?? '' } : null;
    if (!deps.isAdmin(bearer, view)) {
      const how =
        'sandbox routes take the admin token `svc serve` prints (admin_token of its ready line, also in the admin-token file of its data directory) as "Authorization: Bearer <admin_token>".';
      if (!bearer && view?.token) {
        throw new ServiceError(
          'invalid_token',
          'This view link has ended with the inbox session that made it: open the message from the inbox page again.',
        );
      }
      if (!bearer) throw new ServiceError('missing_credentials', `No credential: ${how}`);
      throw new ServiceError('invalid_token', `This is not the admin token: ${how}`);
    }
    return ANONYMOUS;
  }

  for (const [name, e] of Object.entries(endpoints) as [EndpointName, Endpoint][]) {
    const handler = deps.handlers[name] as Handler<Endpoint>;
    if (isV1(e)) register(name, `/v1${e.path}`, e, (c, ip) => deps.authorize(e, bearerOf(c), ip), handler);
    else register(name, e.path, e, (c) => admin(c, e), handler);
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
    if (err instanceof ServiceError || err instanceof RouteRefusal) {
      const refusal = err instanceof RouteRefusal ? err.error : err;
      const headers: Record<string, string> = {};
      if (refusal.code === 'missing_credentials' || ERR_401.has(refusal.code)) headers['WWW-Authenticate'] = 'Bearer';
      if (err instanceof RouteRefusal) Object.assign(headers, err.headers);
      return problemResponse(refusal, requestId, deps.origin(), headers);
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
