// What the servers that let mail clients read caught mail (POP3: pop3/, IMAP: imap/) are given and what they answer
// to the composition root (mail-side.ts), which opens them beside the sink: the same listener shape as the sink's.
import type { Logger } from '../../lib/log.js';
import type { Mailbox } from '../core/mailbox.js';
import type { Sink } from './sink.js';

export interface MailboxServerDeps {
  /** The mailboxes, logins included (core/mailbox.ts). */
  mailbox: Mailbox;
  log: Logger;
  /** Whether a password is the admin token (compared in constant time), which opens every workspace's mail. */
  isAdminToken(password: string): boolean;
  /** Counts a connection taken (core/metrics.ts connectionOpened); returns what counts it closed. */
  connectionOpened?: () => () => void;
}

export interface MailboxServerOptions {
  /** The certificate of SMTP TLS (inbound/tls.ts), which STLS / STARTTLS present too. */
  tls: { key: string | Buffer; cert: string | Buffer };
  /** Connections open at once (default 100); one more is told the server is busy and closed. */
  maxConnections?: number;
  /**
   * How long a client may stay silent before it is told so and disconnected, as the sink does with SMTP clients (default:
   * the least autologout timer each protocol's RFC allows: POP3 10 minutes, IMAP 30 minutes, IDLE included).
   */
  idleTimeoutMs?: number;
}

/** A mailbox server: listens like the sink, and closes every session on close. */
export type MailboxServer = Sink;
