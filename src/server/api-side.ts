// The HTTP API of `svc serve`'s listening phase (index.ts): the app (http/app.ts) with a handler for every entry of the
// endpoint table, and beside it /livez, /readyz and /metrics, the inbox page, tracking and the error pages, on the node:http(s)
// server (http/server.ts), listening on --port and closed on the start-up stack.
import { readFileSync } from 'node:fs';
import type { Server } from 'node:http';
import { openApiDocument } from '../contract/endpoints.js';
import type { Logger } from '../lib/log.js';
import type { Addresses } from './addresses.js';
import type { Backend } from './backend.js';
import { createApp } from './http/app.js';
import { DEFAULT_BODY_LIMITS } from './http/body.js';
import { docsRoutes } from './http/docs.js';
import { healthRoutes } from './http/health.js';
import { metricsRoute } from './http/metrics.js';
import { authRoutes } from './http/routes/auth.js';
import { chaosRoutes } from './http/routes/chaos.js';
import { clockRoutes } from './http/routes/clock.js';
import { domainRoutes } from './http/routes/domains.js';
import { emailRoutes } from './http/routes/emails.js';
import { eventRoutes } from './http/routes/events.js';
import { inboxRoutes } from './http/routes/inbox.js';
import { keyRoutes } from './http/routes/keys.js';
import { webhookEndpointRoutes } from './http/routes/webhook-endpoints.js';
import { workspaceRoutes } from './http/routes/workspaces.js';
import { zoneRoutes } from './http/routes/zone.js';
import { createServer, DEFAULT_TIMEOUTS } from './http/server.js';
import { trackingRoutes } from './http/tracking.js';
import { type SandboxAuth, sandboxAuth } from './inbox-page/auth.js';
import { pages } from './inbox-page/pages.js';
import { type InboxStream, inboxStream } from './inbox-page/stream.js';
import type { MailSide } from './mail-side.js';
import type { Opened } from './startup-stack.js';
import type { ServeOptions } from './options.js';

export interface ApiDeps {
  opts: ServeOptions;
  log: Logger;
  backend: Backend;
  addresses: Addresses;
  stack: Opened;
  /** Whether the API speaks HTTPS (--tls-cert and --tls-key). */
  https: boolean;
  /** What is full when a write finds no room: as the API's errors say it, and as /readyz does (without the path). */
  storage: { full: string; readyz: string };
  /** The mail side, listening: /readyz asks it, the inbox page names the sink's address. */
  mail: MailSide;
  /** Aborted when the server begins to stop. */
  stopped: AbortSignal;
  collect: (() => void) | undefined;
}

/** The API, listening: its port, and the inbox's live stream, which the server closes when it stops. */
export interface Api {
  port: number;
  stream: InboxStream;
}

/**
 * Builds the app and listens on it, the port added to `addresses` (the origin known from then on); its close, pushed on
 * `stack`, stops taking requests and lets those in flight finish.
 */
export async function openApi(d: ApiDeps): Promise<Api> {
  const { opts, backend, addresses } = d;
  const admin = sandboxAuth(backend.adminToken);
  const stream = inboxStream({ inbox: backend.core.inbox, changes: backend.changes, auth: admin });
  const http = createServer(apiApp(d, admin, stream), {
    log: d.log,
    origin: addresses.origin,
    tls: d.https ? { cert: readFileSync(opts.tlsCert!), key: readFileSync(opts.tlsKey!) } : undefined,
    timeouts: opts.httpTimeouts,
  });
  const server = await new Promise<Server>((resolve, reject) => {
    http.once('error', reject);
    http.listen(opts.port ?? 4010, addresses.host, () => {
      http.off('error', reject);
      addresses.apiBound((http.address() as { port: number }).port);
      resolve(http);
    });
  });
  // Stops taking requests and lets those in flight finish (held long polls are answered at once, and every answer from
  // now on closes its connection); only then do the workers stop.
  d.stack.push(
    () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeIdleConnections();
        http.closeUnusedConnections();
      }),
  );
  return { port: (server.address() as { port: number }).port, stream };
}

/** The app: a handler for every endpoint-table entry, and the plain routes beside them. */
function apiApp(d: ApiDeps, admin: SandboxAuth, stream: InboxStream) {
  const { opts, log, backend, collect } = d;
  const { core, chaos, scheduler } = backend;
  const origin = d.addresses.origin;
  const stopping = () => d.stopped.aborted;
  return createApp({
    log,
    requestLog: opts.requestLog,
    collect,
    observe: (method, route, status, seconds) => core.metrics.observeRequest(method, route, status, seconds),
    bodyLimits: {
      ...DEFAULT_BODY_LIMITS,
      deadlineMs: (opts.httpTimeouts ?? DEFAULT_TIMEOUTS).requestMs,
      ...opts.bodyLimits,
    },
    stopping,
    stopped: d.stopped,
    chaos,
    storage: d.storage.full,
    trustProxy: Boolean(opts.trustProxy),
    instance: backend.instance,
    origin,
    authorize: (req, bearer, ip) => core.access.authorize(req, bearer, ip),
    isAdmin: (bearer, view) => admin.admits(bearer) || (view !== null && admin.viewOf(view.token, view.scope) !== null),
    handlers: {
      ...authRoutes(core),
      ...keyRoutes(core),
      ...domainRoutes(core),
      ...emailRoutes(core, origin),
      ...eventRoutes(core),
      getOpenApi: () => ({ body: openApiDocument(`${origin()}/v1`) }),
      ...workspaceRoutes(core),
      ...inboxRoutes(core, collect),
      ...clockRoutes(core, () => scheduler.runDue()),
      ...zoneRoutes(core),
      ...webhookEndpointRoutes(core),
      ...chaosRoutes(chaos),
    },
    extra: (a) => {
      healthRoutes(a, {
        listening: () => d.addresses.apiListening() && d.mail.listening(),
        stopping,
        probeWrite: async () => backend.probeWrite(),
        storage: d.storage.readyz,
        origin,
        log,
      });
      metricsRoute(a, {
        metrics: core.metrics,
        isAdmin: (bearer) => admin.admits(bearer),
        open: Boolean(opts.metricsOpen),
      });
      pages(a, {
        auth: admin,
        inbox: core.inbox,
        stream,
        webhooks: true,
        firstSend: () => ({
          seed:
            backend.readySeed?.api_key_test && core.keys.active(backend.readySeed.api_key_test)
              ? { key: backend.readySeed.api_key_test, domain: backend.readySeed.domain }
              : null,
          smtp: d.mail.urls.smtp,
        }),
      });
      trackingRoutes(a, core, Boolean(opts.trustProxy));
      docsRoutes(a);
    },
  });
}
