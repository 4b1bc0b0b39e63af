// The mail side of `svc serve`'s listening phase (index.ts): the SMTP sink and SMTP submission's two listeners
// (STARTTLS, implicit TLS), each on its port and closed on the start-up stack, with the certificate of SMTP TLS
// (inbound/tls.ts) they present.
import { ATTACHMENT_BODY_LIMIT } from '../contract/common.js';
import type { Logger } from '../lib/log.js';
import type { Addresses } from './addresses.js';
import type { Chaos } from './core/chaos.js';
import type { Core } from './core/index.js';
import { type CatchingSink, createSink, type Sink } from './inbound/sink.js';
import { createSubmission } from './inbound/submission.js';
import { type SmtpTls, smtpTls, TlsFilesError } from './inbound/tls.js';
import type { Opened } from './startup-stack.js';
import { type ServeOptions, ServeUsageError } from './options.js';

/** The SMTP sink's default port. */
const DEFAULT_SMTP_PORT = 1025;
/** SMTP submission's default ports: 587 and 465, the ports the real service listens on, moved above 1024. */
const DEFAULT_SUBMISSION_PORT = 2587;
const DEFAULT_SUBMISSIONS_PORT = 2465;

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
  /** The sink's address (`smtp://HOST:PORT`), and submission's (`smtp://`, `smtps://`; null when turned off). */
  urls: { smtp: string; submission: string | null; submissions: string | null };
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
}): Promise<MailSide> {
  const { opts, log, core, addresses, stack } = o;
  const tlsInUse = await o.tls();
  const tlsPair = { key: tlsInUse.key, cert: tlsInUse.cert };
  const sink = createSink(
    { inbox: core.inbox, log, chaos: o.chaos, workspaceOf: core.keys.workspaceOf },
    { maxMessageBytes: opts.maxMessageSize, maxConnections: opts.smtpMaxConnections },
    opts.smtpStarttls ? tlsPair : undefined,
  );
  const smtpPort = await sink.listen(opts.smtpPort ?? DEFAULT_SMTP_PORT, addresses.host);
  addresses.bound(smtpPort);
  stack.push(() => sink.close());
  const submission = createSubmission(
    { log, core },
    { tls: tlsPair, maxMessageBytes: ATTACHMENT_BODY_LIMIT, maxConnections: opts.smtpMaxConnections },
  );
  /** Listens on the port asked for, or the default one; the error of one that is taken names its flag. */
  const listenOn = async (l: Sink, asked: number | null | undefined, fallback: number, flag: string) => {
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
  return {
    sink,
    smtpTls: tlsInUse,
    smtpPort,
    submissionPort,
    submissionsPort,
    urls: {
      smtp: `smtp://${addresses.urlHost}:${smtpPort}`,
      submission: submissionPort === null ? null : `smtp://${addresses.urlHost}:${submissionPort}`,
      submissions: submissionsPort === null ? null : `smtps://${addresses.urlHost}:${submissionsPort}`,
    },
    listening: () =>
      sink.listening() &&
      (submissionPort === null || submission.starttls.listening()) &&
      (submissionsPort === null || submission.implicit.listening()),
  };
}
