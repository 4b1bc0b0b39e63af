// The POP3 server (RFC 1939; docs/mailbox.md): mail clients read caught mail with it, a login's maildrop being the
// mail of its workspace (an API key as the password) or all of it (the admin token). Written on node:net, as POP3 is
// small; each conversation is a Pop3Session (session.ts), the bytes of the protocol are wire.ts's.
import { createServer, type Socket } from 'node:net';
import { createSecureContext } from 'node:tls';
import type { MailboxServer, MailboxServerDeps, MailboxServerOptions } from '../mailbox-server.js';
import { MAX_CONNECTIONS } from '../sink.js';
import { Pop3Session } from './session.js';

/** RFC 1939 section 3: an autologout timer of at least 10 minutes. */
export const POP3_IDLE_TIMEOUT_MS = 10 * 60_000;

export function createPop3Server(deps: MailboxServerDeps, opts: MailboxServerOptions): MailboxServer {
  const maxConnections = opts.maxConnections ?? MAX_CONNECTIONS;
  const ctx = {
    mailbox: deps.mailbox,
    log: deps.log,
    isAdminToken: deps.isAdminToken,
    secureContext: createSecureContext({ key: opts.tls.key, cert: opts.tls.cert }),
    idleTimeoutMs: opts.idleTimeoutMs ?? POP3_IDLE_TIMEOUT_MS,
  };
  const sessions = new Set<Pop3Session>();

  const server = createServer((socket: Socket) => {
    socket.on('error', () => {}); // a reset before the session takes the socket
    const closed = deps.connectionOpened?.();
    if (closed) socket.once('close', closed);
    if (sessions.size >= maxConnections) {
      deps.log.warn('pop3 connection refused: too many connections', { ip: socket.remoteAddress, maxConnections });
      socket.end(`-ERR [SYS/TEMP] Too many connections (at most ${maxConnections}); try again later\r\n`);
      return;
    }
    const session: Pop3Session = new Pop3Session(socket, ctx, () => sessions.delete(session));
    sessions.add(session);
  });
  server.on('error', (err) => deps.log.warn('pop3 server error', { error: err.message }));

  return {
    listen(port, host) {
      return new Promise<number>((resolve, reject) => {
        const onError = (err: Error) => reject(err);
        server.once('error', onError);
        server.listen({ port, host }, () => {
          server.off('error', onError);
          const address = server.address();
          resolve(typeof address === 'string' || !address ? 0 : address.port);
        });
      });
    },
    listening: () => server.listening,
    close() {
      return new Promise<void>((resolve) => {
        if (!server.listening) return resolve();
        server.close(() => resolve());
        for (const s of [...sessions]) s.shutdown();
      });
    },
  };
}
