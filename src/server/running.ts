// What startServer (index.ts) hands back once the API listens and the workers have started: the server's addresses and
// its ready line, what the backend opened, the warm-up, and the close — the API told it is stopping, then everything
// opened closed in reverse.
import { endpoints } from '../contract/endpoints.js';
import type { ReadyLine, Seed } from '../contract/seed.js';
import type { Changes } from '../lib/changes.js';
import type { Clock } from '../lib/clock.js';
import type { Backend } from './backend.js';
import type { Chaos } from './core/chaos.js';
import type { Core } from './core/index.js';
import type { RetentionPolicy } from './core/retention.js';
import type { SeedApplied } from './core/seed-file.js';
import type { Schedulers } from './core/scheduler.js';
import type { SmtpTls } from './inbound/tls.js';
import type { InboxStream } from './inbox-page/stream.js';
import type { MailSide } from './mail-side.js';
import type { Opened } from './startup-stack.js';
import type { Outbound } from './outbound-side.js';

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
  /** The ports where mail clients read caught mail (POP3, IMAP); null when turned off. */
  pop3Port: number | null;
  imapPort: number | null;
  /** The certificate SMTP TLS presents (submission, and the sink's STARTTLS when it offers it). */
  smtpTls: SmtpTls;
  adminToken: string;
  /** The demo account created by this start (a fresh data directory, or `--memory`); null when none was. */
  seed: Seed | null;
  /** What the seed file (`seedFile`, `seedObject`) made, changed or found, and its workspaces' ids; null without one. */
  seeded: SeedApplied | null;
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

/** How long after the ready line the warm-up starts loading on the main thread (RunningServer.warmUp). */
const WARM_UP_PAUSE_MS = 100;

/** The running server, from what the two phases opened; `stack` holds all of it, the API on top. */
export function runningServer(o: {
  backend: Backend;
  mail: MailSide;
  outbound: Outbound;
  /** The API's origin and port, and its inbox stream. */
  origin: string;
  port: number;
  stream: InboxStream;
  retention: RetentionPolicy;
  /** Aborted once the server is stopping: what the API and the warm-up read. */
  stopped: AbortController;
  stack: Opened;
}): RunningServer {
  const { backend, mail, stopped } = o;
  const { adminToken, changes } = backend;
  let closing: Promise<void> | undefined;
  const api = `${o.origin}/v1`;
  const { smtp } = mail.urls;
  const inbox = `${o.origin}/?token=${adminToken}`;
  return {
    api,
    origin: o.origin,
    smtp,
    inbox,
    port: o.port,
    smtpPort: mail.smtpPort,
    submissionPort: mail.submissionPort,
    submissionsPort: mail.submissionsPort,
    pop3Port: mail.pop3Port,
    imapPort: mail.imapPort,
    smtpTls: mail.smtpTls,
    adminToken,
    seed: backend.seed,
    seeded: backend.seeded,
    ready: {
      ready: true,
      api,
      smtp,
      inbox,
      admin_token: adminToken,
      seed: backend.readySeed,
      retention: {
        max_messages: o.retention.maxMessages,
        max_age_seconds: o.retention.maxAge === null ? null : Math.round(o.retention.maxAge / 1000),
      },
      submission: mail.urls.submission,
      submissions: mail.urls.submissions,
      pop3: mail.urls.pop3,
      imap: mail.urls.imap,
      ...relayOf(backend.core.relay.info()),
      smtp_tls: { cert: mail.smtpTls.path, fingerprint_sha256: mail.smtpTls.fingerprint },
    },
    clock: backend.clock,
    core: backend.core,
    changes,
    scheduler: backend.scheduler,
    chaos: backend.chaos,
    warmUp: () => warmUp(o.outbound, mail, stopped.signal),
    close() {
      closing ??= (async () => {
        // Stopping from here on (the API's requests held by a chaos rule let go, the warm-up's next step not taken);
        // then everything, in the reverse order of opening: the API, the workers, the outbound side, the sink, then the
        // backend (the store, the lock).
        stopped.abort();
        changes.close();
        o.stream.close();
        await o.stack.unwind();
      })();
      return closing;
    },
  };
}

/** RunningServer.warmUp. */
function warmUp(outbound: Outbound, mail: MailSide, stopped: AbortSignal): void {
  // The compose thread a turn after the ready line (a sandbox closed at once never starts it): it loads on the
  // other core. What loads on this thread (the sender's connection, the sink's parser, the send's schema, building a
  // message here: 0.1–0.2 s in all) goes a step a turn after a pause, so that a send made as soon as the server is up
  // (a test's first) is answered before it and its delivery loads what it needs as before; a person's first send
  // finds it loaded.
  const steps = [
    () => outbound.sender.warm(),
    () => mail.sink.warm(),
    () => void endpoints.sendEmail.body.safeParse({}),
    () => outbound.composer.warmHere(),
  ];
  const next = () => {
    if (stopped.aborted) return;
    steps.shift()?.();
    if (steps.length) setImmediate(next);
  };
  setImmediate(() => {
    if (stopped.aborted) return;
    outbound.composer.warm();
    setTimeout(next, WARM_UP_PAUSE_MS).unref();
  });
}

/** The relay as the ready line names it (its password never): absent without one. */
function relayOf(r: { relay: string | null; allow: string[]; matching: string[] }) {
  return r.relay ? { relay: { url: r.relay, allow: r.allow, matching: r.matching } } : {};
}
