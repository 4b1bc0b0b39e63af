// The mail side of `svc serve`'s listening phase (index.ts): the SMTP sink and SMTP submission's two listeners
// (STARTTLS, implicit TLS), each on its port and closed on the start-up stack, with the certificate of SMTP TLS
// (inbound/tls.ts) they present.
import { ATTACHMENT_BODY_LIMIT } from '../contract/common.js';
import type { Logger } from '../lib/log.js';
import type { Addresses } from './addresses.js';
import type { Chaos } from './core/chaos.js';
import type { Core } from './core/index.js';
import { type CatchingSink, createSink, type Sink } from './inbound/sink.js';
import { createImapServer } from './inbound/imap/server.js';
import type { MailboxServer } from './inbound/mailbox-server.js';
import { createPop3Server } from './inbound/pop3/server.js';
import { createSubmission } from './inbound/submission.js';
import { type SmtpTls, smtpTls, TlsFilesError } from './inbound/tls.js';
import type { Opened } from './startup-stack.js';
import { type ServeOptions, ServeUsageError } from './options.js';

/** The SMTP sink's default port. */
const DEFAULT_SMTP_PORT = 1025;
/** SMTP submission's default ports: 587 and 465, the ports the real service listens on, moved above 1024. */
const DEFAULT_SUBMISSION_PORT = 2587;
const DEFAULT_SUBMISSIONS_PORT = 2465;
/** Where mail clients read caught mail: POP3's and IMAP's ports (110 and 143), moved above 1024. */
const DEFAULT_POP3_PORT = 1110;
const DEFAULT_IMAP_PORT = 1143;

/** The mail side's ports, each with the flag that asks for it (ports.ts): submission's unless turned off. */
export function mailPorts(opts: ServeOptions): { port: number; flag: string }[] {
  return [
    { port: opts.smtpPort ?? DEFAULT_SMTP_PORT, flag: '--smtp-port' },
    ...(opts.submissionPort === null
      ? []
      : [{ port: opts.submissionPort ?? DEFAULT_SUBMISSION_PORT, flag: '--submission-port' }]),
    ...(opts.submissionsPort === null
      ? []
      : [{ port: opts.submissionsPort ?? DEFAULT_SUBMISSIONS_PORT, flag: '--submissions-port' }]),
    ...(opts.pop3Port === null ? [] : [{ port: opts.pop3Port ?? DEFAULT_POP3_PORT, flag: '--pop3-port' }]),
    ...(opts.imapPort === null ? [] : [{ port: opts.imapPort ?? DEFAULT_IMAP_PORT, flag: '--imap-port' }]),
  ];
}

/**
 * The certificate of SMTP TLS, begun before anything opens: one given is checked now (files that will not do are a
 * ServeUsageError); one in memory is made while the backend opens; one kept in the data directory is read (or made)
 * when the returned function is called, once the directory is locked.
 */
export async function beginSmtpTls(
  opts: ServeOptions,
  dataDir: string | null,
  log: Logger,
): Promise<() => Promise<SmtpTls>> {
  let first: Promise<SmtpTls> | undefined;
  try {
    if (opts.smtpTlsCert || opts.smtpTlsKey) {
      first = Promise.resolve(await smtpTls({ dataDir, certFile: opts.smtpTlsCert, keyFile: opts.smtpTlsKey, log }));
    }
  } catch (err) {
    if (err instanceof TlsFilesError) throw new ServeUsageError(err.message);
    throw err;
  }
  if (!dataDir) first ??= smtpTls({ dataDir: null, log });
  first?.catch(() => {});
  return () => first ?? smtpTls({ dataDir, log });
}

/** The mail side, listening. */
export interface MailSide {
  sink: CatchingSink;
  /** The certificate SMTP TLS presents. */
  smtpTls: SmtpTls;
  smtpPort: number;
  /** The submission listeners' ports (STARTTLS, implicit TLS); null when turned off. */
  submissionPort: number | null;
  submissionsPort: number | null;
  /** The ports where mail clients read caught mail (POP3, IMAP); null when turned off. */
  pop3Port: number | null;
  imapPort: number | null;
  /**
   * The sink's address (`smtp://HOST:PORT`), submission's (`smtp://`, `smtps://`), POP3's (`pop3://`) and IMAP's
   * (`imap://`); null when turned off.
   */
  urls: {
    smtp: string;
    submission: string | null;
    submissions: string | null;
    pop3: string | null;
    imap: string | null;
  };
  /** Whether every listener of the mail side is taking connections (/readyz). */
  listening(): boolean;
}

/** The sink, then submission's STARTTLS and implicit TLS listeners, each pushed on `stack` once it listens. */
export async function openMailSide(o: {
  opts: ServeOptions;
  log: Logger;
  core: Core;
  chaos: Chaos;
  addresses: Addresses;
  stack: Opened;
  /** The certificate, from beginSmtpTls. */
  tls: () => Promise<SmtpTls>;
  /** Whether a password is the admin token (POP3 and IMAP logins that open every workspace's mail). */
  isAdminToken: (password: string) => boolean;
}): Promise<MailSide> {
  const { opts, log, core, addresses, stack } = o;
  const tlsInUse = await o.tls();
  const tlsPair = { key: tlsInUse.key, cert: tlsInUse.cert };
  const sink = createSink(
    {
      inbox: core.inbox,
      log,
      chaos: o.chaos,
      workspaceOf: core.keys.workspaceOf,
      connectionOpened: () => core.metrics.connectionOpened('smtp', 'sink'),
    },
    { maxMessageBytes: opts.maxMessageSize, maxConnections: opts.smtpMaxConnections },
    opts.smtpStarttls ? tlsPair : undefined,
  );
  const smtpPort = await sink.listen(opts.smtpPort ?? DEFAULT_SMTP_PORT, addresses.host);
  addresses.bound(smtpPort);
  stack.push(() => sink.close());
  const submission = createSubmission(
    { log, core, connectionOpened: (listener) => core.metrics.connectionOpened('smtp', listener) },
    { tls: tlsPair, maxMessageBytes: ATTACHMENT_BODY_LIMIT, maxConnections: opts.smtpMaxConnections },
  );
  /** Listens on the port asked for, or the default one; the error of one that is taken names its flag. */
  const listenOn = async (
    l: Sink | MailboxServer,
    asked: number | null | undefined,
    fallback: number,
    flag: string,
  ) => {
    if (asked === null) return null;
    const port = await l.listen(asked ?? fallback, addresses.host).catch((err: Error) => {
      throw Object.assign(err, { flag, flags: [flag] });
    });
    addresses.bound(port);
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
  // Where mail clients read caught mail (docs/mailbox.md): the same logins, certificate and connection limit.
  const mailboxDeps = (protocol: 'pop3' | 'imap') => ({
    mailbox: core.mailbox,
    log,
    isAdminToken: o.isAdminToken,
    connectionOpened: () => core.metrics.connectionOpened(protocol),
  });
  const mailboxOpts = {
    tls: tlsPair,
    maxConnections: opts.smtpMaxConnections,
    ...(opts.mailboxIdleTimeoutMs ? { idleTimeoutMs: opts.mailboxIdleTimeoutMs } : {}),
  };
  const pop3 = createPop3Server(mailboxDeps('pop3'), mailboxOpts);
  const pop3Port = await listenOn(pop3, opts.pop3Port, DEFAULT_POP3_PORT, '--pop3-port');
  const imap = createImapServer(mailboxDeps('imap'), mailboxOpts);
  const imapPort = await listenOn(imap, opts.imapPort, DEFAULT_IMAP_PORT, '--imap-port');
  return {
    sink,
    smtpTls: tlsInUse,
    smtpPort,
    submissionPort,
    submissionsPort,
    pop3Port,
    imapPort,
    urls: {
      pop3: pop3Port === null ? null : `pop3://${addresses.urlHost}:${pop3Port}`,
      imap: imapPort === null ? null : `imap://${addresses.urlHost}:${imapPort}`,
      smtp: `smtp://${addresses.urlHost}:${smtpPort}`,
      submission: submissionPort === null ? null : `smtp://${addresses.urlHost}:${submissionPort}`,
      submissions: submissionsPort === null ? null : `smtps://${addresses.urlHost}:${submissionsPort}`,
    },
    listening: () =>
      sink.listening() &&
      (submissionPort === null || submission.starttls.listening()) &&
      (submissionsPort === null || submission.implicit.listening()) &&
      (pop3Port === null || pop3.listening()) &&
      (imapPort === null || imap.listening()),
  };
}
