// What the servers that let mail clients read caught mail (POP3: pop3/, IMAP: imap/) are given and what they answer
// to the composition root (mail-side.ts), which opens them beside the sink: the same listener shape as the sink's.
import { createServer, type Socket } from 'node:net';
import type { Logger } from '../../lib/log.js';
import type { Mailbox } from '../core/mailbox.js';
import { MAX_CONNECTIONS, type Sink } from './sink.js';

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

/** What a mailbox server keeps of a connection it took: how to end it when the server closes. */
export interface MailboxConnection {
  shutdown(): void;
}

/**
 * The listener POP3 and IMAP stand on: it counts each connection (metrics), answers one past the limit with the
 * protocol's `busy` line and closes it, hands the others to `accept` and keeps them until their session is over (it
 * calls `ended`: at its goodbye, or when the socket closes, whichever comes first), and on close ends every one it
 * keeps (`shutdown`: the protocol's goodbye) before it stops listening.
 */
export function mailboxListener(o: {
  protocol: 'pop3' | 'imap';
  deps: Pick<MailboxServerDeps, 'log' | 'connectionOpened'>;
  maxConnections?: number;
  /** The line a connection past the limit is told before it is closed. */
  busy: (maxConnections: number) => string;
  accept(socket: Socket, ended: () => void): MailboxConnection;
}): MailboxServer {
  const { protocol, deps } = o;
  const maxConnections = o.maxConnections ?? MAX_CONNECTIONS;
  const open = new Set<MailboxConnection>();
  const server = createServer((socket) => {
    // A reset before a session listens, or under one: the connection is over, as `close` tells (a session logs it).
    socket.on('error', () => {});
    const counted = deps.connectionOpened?.();
    if (counted) socket.once('close', counted);
    if (open.size >= maxConnections) {
      deps.log.warn(`${protocol} connection refused: too many connections`, {
        ip: socket.remoteAddress,
        maxConnections,
      });
      socket.end(`${o.busy(maxConnections)}\r\n`);
      return;
    }
    const ended = () => open.delete(connection);
    const connection = o.accept(socket, ended);
    open.add(connection);
    socket.once('close', ended);
  });
  server.on('error', (err) => deps.log.warn(`${protocol} server error`, { error: err.message }));
  return {
    listen: (port, host) =>
      new Promise<number>((resolve, reject) => {
        server.once('error', reject);
        server.listen({ port, host }, () => {
          server.off('error', reject);
          const address = server.address();
          resolve(typeof address === 'string' || !address ? 0 : address.port);
        });
      }),
    listening: () => server.listening,
    close: () =>
      new Promise<void>((resolve) => {
        for (const c of [...open]) c.shutdown();
        if (!server.listening) return resolve();
        server.close(() => resolve());
      }),
  };
}
