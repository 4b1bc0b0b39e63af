// Composition root of `svc serve`: checks its options (options.ts), opens the backend (backend.ts: the store, core, the schedulers,
// the seed), then listens on it — the SMTP sink, the outbound side, the workers, the HTTP API — as one ordered stack.
import { readFileSync } from 'node:fs';
import type { Server } from 'node:http';
import type { ReadyLine, Seed } from '../contract/sandbox.js';
import { endpoints, openApiDocument } from '../contract/endpoints.js';
import type { Changes } from '../lib/changes.js';
import type { Clock } from '../lib/clock.js';
import { createLogger } from '../lib/log.js';
import type { Core } from './core/index.js';
import { openBackend, type Backend } from './backend.js';
import { opened } from './opened.js';
import { checkPortsFree } from './ports.js';
import { createApp } from './http/app.js';
import { DEFAULT_BODY_LIMITS } from './http/body.js';
import { createServer, DEFAULT_TIMEOUTS } from './http/server.js';
import { authRoutes } from './http/routes/auth.js';
import { keyRoutes } from './http/routes/keys.js';
import { domainRoutes } from './http/routes/domains.js';
import { sandboxRoutes } from './sandbox/routes.js';
import { pages } from './sandbox/pages.js';
import { sandboxAuth } from './sandbox/auth.js';
import { inboxStream } from './sandbox/stream.js';
import type { Chaos } from './sandbox/chaos.js';
import { createPoolSender, createRelaySender } from './smtp/sender.js';
import { createComposer } from './smtp/compose.js';
import { createSink, type Sink } from './smtp/sink.js';
import { createSubmission } from './smtp/submission.js';
import { smtpTls, TlsFilesError, type SmtpTls } from './smtp/tls.js';
import { ATTACHMENT_BODY_LIMIT } from '../contract/common.js';
import { eventRoutes } from './http/routes/events.js';
import { emailRoutes } from './http/routes/emails.js';
import { trackingRoutes } from './http/tracking.js';
import { docsRoutes } from './http/docs.js';
import { healthRoutes } from './http/health.js';
import { isDiskFull } from '../lib/disk-full.js';
import { jobHandlers } from './job-handlers.js';
import { checkOptions, ServeUsageError, type ServeOptions, webDnsServer } from './options.js';
import type { Schedulers } from './workers/scheduler.js';
import { createWebhookAgent } from './workers/webhooks.js';

export { ServeUsageError, type ServeOptions } from './options.js';

export interface RunningServer {
  api: string;
  origin: string;
  smtp: string;
  inbox: string;
  port: number;
  smtpPort: number;
  /** The submission listeners' ports (STARTTLS, implicit TLS); null when turned off. */
  submissionPort: number | null;
  submissionsPort: number | null;
  /** The certificate SMTP TLS presents (submission, and the sink's STARTTLS when it offers it). */
  smtpTls: SmtpTls;
  adminToken: string;
  /** The demo account created by this start (a fresh data directory, or `--memory`); null when none was. */
  seed: Seed | null;
  /** The line `svc serve` prints once both listeners are up; its seed is the kept one on a later start. */
  ready: ReadyLine;
  clock: Clock;
  core: Core;
  changes: Changes;
  /** The job schedulers (the default queue's and one per webhook endpoint), run as one. */
  scheduler: Schedulers;
  /** The chaos rules of this server (PUT /sandbox/chaos), which the HTTP API and the SMTP sink both follow. */
  chaos: Chaos;
  /**
   * Loads, in the background, what the first delivery would otherwise load on its way: the compose thread and
   * nodemailer on it, the sender's first connection to the sink, the sink's header parser. Called once the ready line
   * is out (it delays neither the start nor the ready line); one step a turn of the event loop, none once stopping.
   */
  warmUp(): void;
  close(): Promise<void>;
}

/** SMTP submission's default ports: 587 and 465, the ports the real service listens on, moved above 1024. */
export const DEFAULT_SUBMISSION_PORT = 2587;
export const DEFAULT_SUBMISSIONS_PORT = 2465;

/** How long after the ready line the warm-up starts loading on the main thread (RunningServer.warmUp). */
const WARM_UP_PAUSE_MS = 100;

export async function startServer(opts: ServeOptions = {}): Promise<RunningServer> {
  const { host, tls, retention, spamd } = checkOptions(opts);
  const dataDir = opts.memory || !opts.dataDir ? null : opts.dataDir;
  // What a write that finds no room is told, and what a start that finds none says; /readyz says it without the path.
  const full = (dir: string) =>
    !dataDir
      ? 'the in-memory database is full'
      : opts.maxDbSize
        ? `the database${dir && ` in ${dir}`} has reached its size limit (--max-db-size), or the disk holding it is full`
        : `the disk holding the data directory${dir && ` ${dir}`} is full`;
  const storage = full(dataDir ?? '');
  const log = opts.log ?? createLogger({ json: opts.json });
  const scheme = tls ? 'https' : 'http';
  const urlHost = host.includes(':') ? `[${host}]` : host;
  // The origin the API listens on: its port is known once it is bound (it may be 0 until then). Core, the workers
  // and the API read it through `origin`, which only what runs once the API listens calls.
  let listeningAt: string | undefined;
  const origin = () => {
    if (listeningAt === undefined) throw new Error('the API has no origin before it listens');
    return listeningAt;
  };
  // This server's ports, each added once bound: an attachment's url may not lead back to one of them.
  const ownPorts = new Set<number>();
  const attachmentUrls = { allowPrivate: Boolean(opts.allowPrivateAttachmentUrls), ownPorts: () => ownPorts };
  // The certificate of SMTP TLS: one given is checked before anything opens; one in memory is made while the backend
  // opens; one kept in the data directory is read (or made) once the directory is locked.
  let tlsFirst: Promise<SmtpTls> | undefined;
  try {
    if (opts.smtpTlsCert || opts.smtpTlsKey) {
      tlsFirst = Promise.resolve(await smtpTls({ dataDir, certFile: opts.smtpTlsCert, keyFile: opts.smtpTlsKey, log }));
    }
  } catch (err) {
    if (err instanceof TlsFilesError) throw new ServeUsageError(err.message);
    throw err;
  }
  if (!dataDir) tlsFirst ??= smtpTls({ dataDir: null, log });
  tlsFirst?.catch(() => {});
  // Start-up is one stack in two phases: the backend at the bottom (closing what it opened itself), then the
  // listening side, each piece pushed as it opens. A stop, or a start that fails part-way, unwinds it from the top.
  const stack = opened();
  let failed = false;
  try {
    await checkPortsFree(host, [
      { port: opts.port ?? 4010, flag: '--port' },
      { port: opts.smtpPort ?? 1025, flag: '--smtp-port' },
      ...(opts.submissionPort === null
        ? []
        : [{ port: opts.submissionPort ?? DEFAULT_SUBMISSION_PORT, flag: '--submission-port' }]),
      ...(opts.submissionsPort === null
        ? []
        : [{ port: opts.submissionsPort ?? DEFAULT_SUBMISSIONS_PORT, flag: '--submissions-port' }]),
    ]);
    const backend = await openBackend({
      dataDir,
      rotateAdminToken: opts.rotateAdminToken,
      maxDbSize: opts.maxDbSize,
      log,
      clock: opts.clock,
      time: opts.time,
      dns: opts.dns,
      dnsServer: opts.dnsServer,
      dnsTimeoutMs: opts.dnsTimeoutMs,
      openSignup: opts.openSignup,
      sendRate: opts.sendRate,
      blockPattern: opts.blockPattern,
      retention,
      seed: opts.seed !== false,
      origin,
      attachmentUrls,
      checks: {
        spamd,
        privateLinks: Boolean(opts.checkPrivateLinks),
        linkTimeoutMs: opts.linkTimeoutMs,
        linksDeadlineMs: opts.linksDeadlineMs,
        checksDeadlineMs: opts.checksDeadlineMs,
        checksMemoryMb: opts.checksMemoryMb,
        thread: opts.checksThread,
      },
    });
    stack.push(() => backend.close(failed));
    return await listen(backend);
  } catch (err) {
    failed = true;
    await stack.unwind();
    if (isDiskFull(err))
      throw Object.assign(new Error(`svc serve cannot start: ${storage}`), { diskFull: true, cause: err });
    throw err;
  }

  /**
   * The second phase, on the open backend: the SMTP sink, the outbound side, the workers' handlers, the API, and only
   * once it listens the workers and the ready line.
   */
  async function listen(backend: Backend): Promise<RunningServer> {
    const { clock, config, core, changes, chaos, scheduler, adminToken } = backend;
    let stopping = false;
    const stopped = new AbortController();
    const smtpTlsInUse = await (tlsFirst ?? smtpTls({ dataDir, log }));
    const tlsPair = { key: smtpTlsInUse.key, cert: smtpTlsInUse.cert };
    const sink = createSink(
      { inbox: core.inbox, log, chaos, workspaceOf: core.keys.workspaceOf },
      { maxMessageBytes: opts.maxMessageSize, maxConnections: opts.smtpMaxConnections },
      opts.smtpStarttls ? tlsPair : undefined,
    );
    const smtpPort = await sink.listen(opts.smtpPort ?? 1025, host);
    ownPorts.add(smtpPort);
    stack.push(() => sink.close());
    const submission = createSubmission(
      { log, core },
      { tls: tlsPair, maxMessageBytes: ATTACHMENT_BODY_LIMIT, maxConnections: opts.smtpMaxConnections },
    );
    /** Listens on the port asked for, or the default one; the error of one that is taken names its flag. */
    const listenOn = async (l: Sink, asked: number | null | undefined, fallback: number, flag: string) => {
      if (asked === null) return null;
      const port = await l.listen(asked ?? fallback, host).catch((err: Error) => {
        throw Object.assign(err, { flag, flags: [flag] });
      });
      ownPorts.add(port);
      stack.push(() => l.close());
      return port;
    };
    const submissionPort = await listenOn(
      submission.starttls,
      opts.submissionPort,
      DEFAULT_SUBMISSION_PORT,
      '--submission-port',
    );
    const submissionsPort = await listenOn(
      submission.implicit,
      opts.submissionsPort,
      DEFAULT_SUBMISSIONS_PORT,
      '--submissions-port',
    );
    // The service's own deliveries reach the sink on its local socket, outside --smtp-max-connections.
    const sender = createPoolSender({ path: sink.ownPath() });
    const relay = opts.relay ? createRelaySender(opts.relay) : null;
    const composer = createComposer({
      thread: opts.composeThread ?? true,
      log,
      resourceLimits: opts.composeResourceLimits,
    });
    const webhookAgent = createWebhookAgent(opts.webhookTimeoutMs);
    stack.push(async () => {
      sender.close();
      relay?.close();
      await webhookAgent.close();
      await composer.close();
    });
    // A full collection after a big message or request (`svc serve` runs with --expose-gc; absent elsewhere).
    const collect = globalThis.gc && (() => void globalThis.gc!({ type: 'major', execution: 'async' }));
    const handlers = jobHandlers({
      core,
      clock,
      log,
      systemFrom: config.systemFrom,
      outbound: { sender, relay, composer, webhookAgent },
      webhookTimeoutMs: opts.webhookTimeoutMs,
      deliveryBudgetBytes: opts.deliveryBudgetBytes,
      collect,
      origin,
      attachmentUrls,
      dnsServer: webDnsServer(opts),
    });
    // The workers start once the API listens, but stop right after it: their stop goes below the API's close.
    stack.push(() => scheduler.stop());

    const admin = sandboxAuth(adminToken);
    const stream = inboxStream({ inbox: core.inbox, changes, auth: admin });
    const app = createApp({
      log,
      requestLog: opts.requestLog,
      collect,
      bodyLimits: {
        ...DEFAULT_BODY_LIMITS,
        deadlineMs: (opts.httpTimeouts ?? DEFAULT_TIMEOUTS).requestMs,
        ...opts.bodyLimits,
      },
      stopping: () => stopping,
      stopped: stopped.signal,
      chaos,
      storage,
      trustProxy: Boolean(opts.trustProxy),
      instance: backend.instance,
      origin,
      authorize: (req, bearer, ip) => core.access.authorize(req, bearer, ip),
      isAdmin: (bearer, view) =>
        admin.admits(bearer) || (view !== null && admin.viewOf(view.token, view.scope) !== null),
      v1: {
        ...authRoutes(core),
        ...keyRoutes(core),
        ...domainRoutes(core),
        ...emailRoutes(core, origin),
        ...eventRoutes(core),
        getOpenApi: () => ({ body: openApiDocument(`${origin()}/v1`) }),
      },
      sandbox: sandboxRoutes(core, () => scheduler.runDue(), chaos, collect),
      extra: (a) => {
        healthRoutes(a, {
          listening: () =>
            listeningAt !== undefined &&
            sink.listening() &&
            (submissionPort === null || submission.starttls.listening()) &&
            (submissionsPort === null || submission.implicit.listening()),
          stopping: () => stopping,
          probeWrite: async () => backend.probeWrite(),
          storage: full(''),
          origin,
          log,
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
            smtp,
          }),
        });
        trackingRoutes(a, core, Boolean(opts.trustProxy));
        docsRoutes(a);
      },
    });

    const http = createServer(app, {
      log,
      origin,
      tls: tls ? { cert: readFileSync(opts.tlsCert!), key: readFileSync(opts.tlsKey!) } : undefined,
      timeouts: opts.httpTimeouts,
    });
    const server = await new Promise<Server>((resolve, reject) => {
      http.once('error', reject);
      http.listen(opts.port ?? 4010, host, () => {
        http.off('error', reject);
        listeningAt = `${scheme}://${urlHost}:${(http.address() as { port: number }).port}`;
        ownPorts.add((http.address() as { port: number }).port);
        resolve(http);
      });
    });
    // Stops taking requests and lets those in flight finish (held long polls are answered at once, and every answer from
    // now on closes its connection); only then do the workers stop.
    stack.push(
      () =>
        new Promise<void>((resolve) => {
          server.close(() => resolve());
          server.closeIdleConnections();
          http.closeUnusedConnections();
        }),
    );
    const port = (server.address() as { port: number }).port;

    core.retention.schedule();
    scheduler.start(handlers);
    let closing: Promise<void> | undefined;
    const api = `${origin()}/v1`;
    backend.listening(api);
    const smtp = `smtp://${urlHost}:${smtpPort}`;
    const inbox = `${origin()}/?token=${adminToken}`;
    const submissionUrl = submissionPort === null ? null : `smtp://${urlHost}:${submissionPort}`;
    const submissionsUrl = submissionsPort === null ? null : `smtps://${urlHost}:${submissionsPort}`;
    return {
      api,
      origin: origin(),
      smtp,
      inbox,
      port,
      smtpPort,
      submissionPort,
      submissionsPort,
      smtpTls: smtpTlsInUse,
      adminToken,
      seed: backend.seed,
      ready: {
        ready: true,
        api,
        smtp,
        inbox,
        admin_token: adminToken,
        seed: backend.readySeed,
        retention: {
          max_messages: retention.maxMessages,
          max_age_seconds: retention.maxAge === null ? null : Math.round(retention.maxAge / 1000),
        },
        submission: submissionUrl,
        submissions: submissionsUrl,
        smtp_tls: { cert: smtpTlsInUse.path, fingerprint_sha256: smtpTlsInUse.fingerprint },
      },
      clock,
      core,
      changes,
      scheduler,
      chaos,
      warmUp() {
        // The compose thread a turn after the ready line (a sandbox closed at once never starts it): it loads on the
        // other core. What loads on this thread (the sender's connection, the sink's parser, the send's schema: 0.1–0.2 s
        // in all) goes a step a turn after a pause, so that a send made as soon as the server is up (a test's first) is
        // answered before it and its delivery loads what it needs as before; a person's first send finds it loaded.
        const steps = [() => sender.warm(), () => sink.warm(), () => void endpoints.sendEmail.body.safeParse({})];
        const next = () => {
          if (stopping) return;
          steps.shift()?.();
          if (steps.length) setImmediate(next);
        };
        setImmediate(() => {
          if (stopping) return;
          composer.warm();
          setTimeout(next, WARM_UP_PAUSE_MS).unref();
        });
      },
      close() {
        closing ??= (async () => {
          // In the reverse order of opening: the API, the workers, the outbound side, the sink, then the backend (the
          // store, the lock).
          stopping = true;
          stopped.abort();
          changes.close();
          stream.close();
          await stack.unwind();
        })();
        return closing;
      },
    };
  }
}
