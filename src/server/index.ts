// Composition root of `svc serve`: checks its options (options.ts), opens the backend (backend.ts: the store, core, the
// schedulers, the seed), then listens on it — the SMTP sink (mail-side.ts), the outbound side (outbound-side.ts), the
// workers, the HTTP API (api-side.ts) — as one ordered stack, and hands back the running server (running.ts).
import { createLogger, type Logger } from '../lib/log.js';
import { isDiskFull } from '../lib/disk-full.js';
import { type Addresses, addresses } from './addresses.js';
import { openApi } from './api-side.js';
import { openBackend, type Backend } from './backend.js';
import { safeEqual } from './core/deps.js';
import { collectGarbage } from './core/rules/big-message.js';
import type { RetentionPolicy } from './core/retention.js';
import type { SmtpTls } from './inbound/tls.js';
import { jobHandlers } from './job-handlers.js';
import { beginSmtpTls, mailPorts, openMailSide } from './mail-side.js';
import { type Opened, opened } from './startup-stack.js';
import { checkOptions, type ServeOptions, webDnsServer } from './options.js';
import { openOutbound } from './outbound-side.js';
import { checkPortsFree } from './ports.js';
import { type RunningServer, runningServer } from './running.js';
import { seedSource } from './seed-file.js';

export { ServeUsageError, type ServeOptions } from './options.js';
export type { RunningServer } from './running.js';

export async function startServer(opts: ServeOptions = {}): Promise<RunningServer> {
  const { host, tls, retention, spamd, relay } = checkOptions(opts);
  // A bad seed file is refused here, before any port, file or database opens.
  const seedFile = seedSource(opts);
  const dataDir = opts.memory || !opts.dataDir ? null : opts.dataDir;
  // What a write that finds no room is told, and what a start that finds none says; /readyz says it without the path.
  const full = (dir: string) =>
    !dataDir
      ? 'the in-memory database is full'
      : opts.maxDbSize
        ? `the database${dir && ` in ${dir}`} has reached its size limit (--max-db-size), or the disk holding it is full`
        : `the disk holding the data directory${dir && ` ${dir}`} is full`;
  const storage = { full: full(dataDir ?? ''), readyz: full('') };
  const log = opts.log ?? createLogger({ json: opts.json });
  const where = addresses(host, tls ? 'https' : 'http');
  const attachmentUrls = { allowPrivate: Boolean(opts.allowPrivateAttachmentUrls), ownPorts: where.ownPorts };
  const smtpTls = await beginSmtpTls(opts, dataDir, log);
  // Start-up is one stack in two phases: the backend at the bottom (closing what it opened itself), then the
  // listening side, each piece pushed as it opens. A stop, or a start that fails part-way, unwinds it from the top.
  const stack = opened();
  let failed = false;
  try {
    await checkPortsFree(host, [{ port: opts.port ?? 4010, flag: '--port' }, ...mailPorts(opts)]);
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
      // A seed file replaces the demo account, unless it asks for it too.
      seed: opts.seed !== false && (!seedFile || seedFile.seed.demo_account === true),
      seedFile,
      origin: where.origin,
      attachmentUrls,
      relay,
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
    return await listen(backend, { opts, log, where, stack, https: tls, storage, retention, smtpTls });
  } catch (err) {
    failed = true;
    await stack.unwind();
    if (isDiskFull(err))
      throw Object.assign(new Error(`svc serve cannot start: ${storage.full}`), { diskFull: true, cause: err });
    throw err;
  }
}

/** What the listening phase is given by startServer. */
interface Start {
  opts: ServeOptions;
  log: Logger;
  where: Addresses;
  stack: Opened;
  https: boolean;
  storage: { full: string; readyz: string };
  retention: RetentionPolicy;
  smtpTls: () => Promise<SmtpTls>;
}

/**
 * The second phase, on the open backend: the SMTP sink, the outbound side, the workers' handlers, the API, and only
 * once it listens the workers and the ready line.
 */
async function listen(backend: Backend, s: Start): Promise<RunningServer> {
  const { opts, log, where, stack } = s;
  const { core, scheduler } = backend;
  const stopped = new AbortController();
  const mail = await openMailSide({
    opts,
    log,
    core,
    chaos: backend.chaos,
    addresses: where,
    stack,
    tls: s.smtpTls,
    isAdminToken: (password) => safeEqual(password, backend.adminToken),
  });
  const outbound = openOutbound(opts, log, mail.sink.ownPath(), stack);
  // Releases answer their caller with the relay's reply: core sends them through the transport opened here.
  core.relay.attach(outbound.relay);
  // A full collection after a big message or request (`svc serve` runs with --expose-gc; absent elsewhere).
  const collect = globalThis.gc && collectGarbage;
  const handlers = jobHandlers({
    core,
    clock: backend.clock,
    log,
    systemFrom: backend.config.systemFrom,
    outbound,
    webhookTimeoutMs: opts.webhookTimeoutMs,
    deliveryBudgetBytes: opts.deliveryBudgetBytes,
    collect,
    origin: where.origin,
    attachmentUrls: backend.config.attachmentUrls,
    dnsServer: webDnsServer(opts),
  });
  // The workers start once the API listens, but stop right after it: their stop goes below the API's close.
  stack.push(() => scheduler.stop());
  const { port, stream } = await openApi({
    opts,
    log,
    backend,
    addresses: where,
    stack,
    https: s.https,
    storage: s.storage,
    mail,
    stopped: stopped.signal,
    collect,
  });
  core.retention.schedule();
  scheduler.start(handlers);
  const running = runningServer({
    backend,
    mail,
    outbound,
    origin: where.origin(),
    port,
    stream,
    retention: s.retention,
    stopped,
    stack,
  });
  backend.listening(running.api);
  return running;
}
