// The POP3 server (RFC 1939; docs/mailbox.md): mail clients read caught mail with it, a login's maildrop being the
// mail of its workspace (an API key as the password) or all of it (the admin token). Written on node:net, as POP3 is
// small; each conversation is a Pop3Session (session.ts), the bytes of the protocol are wire.ts's.
import { createSecureContext } from 'node:tls';
import {
  type MailboxServer,
  type MailboxServerDeps,
  type MailboxServerOptions,
  mailboxListener,
} from '../mailbox-server.js';
import { Pop3Session } from './session.js';

/** RFC 1939 section 3: an autologout timer of at least 10 minutes. */
export const POP3_IDLE_TIMEOUT_MS = 10 * 60_000;

export function createPop3Server(deps: MailboxServerDeps, opts: MailboxServerOptions): MailboxServer {
  const ctx = {
    mailbox: deps.mailbox,
    log: deps.log,
    isAdminToken: deps.isAdminToken,
    secureContext: createSecureContext({ key: opts.tls.key, cert: opts.tls.cert }),
    idleTimeoutMs: opts.idleTimeoutMs ?? POP3_IDLE_TIMEOUT_MS,
  };
  return mailboxListener({
    protocol: 'pop3',
    deps,
    maxConnections: opts.maxConnections,
    busy: (max) => `-ERR [SYS/TEMP] Too many connections (at most ${max}); try again later`,
    accept: (socket, ended) => new Pop3Session(socket, ctx, ended),
  });
}
