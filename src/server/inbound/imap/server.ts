// The IMAP server (RFC 3501, with IDLE, UIDPLUS, LITERAL+, STARTTLS): mail clients read the caught mail through it.
// This file holds the connections — the limit, the autologout timer, STARTTLS — and session.ts one connection's
// protocol. Written here rather than taken from a library: no maintained IMAP server library is small (WildDuck's
// imap-core comes inside a mail server with MongoDB, Redis and some sixty packages); see docs/mailbox.md.
import net from 'node:net';
import tls from 'node:tls';
import type { MailboxServer, MailboxServerDeps, MailboxServerOptions } from '../mailbox-server.js';
import { ImapSession, type SessionIo } from './session.js';

/** RFC 3501 section 5.4: an autologout timer of at least 30 minutes. */
export const IMAP_IDLE_TIMEOUT_MS = 30 * 60_000;
export const IMAP_MAX_CONNECTIONS = 100;

export function createImapServer(deps: MailboxServerDeps, opts: MailboxServerOptions): MailboxServer {
  const idleMs = opts.idleTimeoutMs ?? IMAP_IDLE_TIMEOUT_MS;
  const max = opts.maxConnections ?? IMAP_MAX_CONNECTIONS;
  const context = tls.createSecureContext({ key: opts.tls.key, cert: opts.tls.cert });
  const open = new Set<{ bye(text: string): void }>();

  const server = net.createServer((raw) => {
    raw.on('error', (err) => deps.log.debug('imap connection error', { error: err.message }));
    const counted = deps.connectionOpened?.();
    if (counted) raw.once('close', counted);
    if (open.size >= max) {
      raw.end('* BYE Too many connections; try again later\r\n');
      return;
    }
    let sock: net.Socket = raw;
    let secure = false;
    let closed = false;
    const timer = setTimeout(() => {
      if (closed) return;
      // Closed once the line is out, whether or not the client closes its side.
      sock.end('* BYE Autologout; idle for too long\r\n', () => sock.destroy());
    }, idleMs);
    const onData = (chunk: Buffer) => {
      timer.refresh();
      session.onData(chunk);
    };
    const io: SessionIo = {
      write: (data) => (closed || !sock.writable ? true : sock.write(data)),
      drain: () =>
        new Promise<void>((resolve) => {
          if (closed || !sock.writable || !sock.writableNeedDrain) return resolve();
          const done = () => {
            // A client reading a long answer slowly is not idle.
            timer.refresh();
            sock.off('drain', done);
            sock.off('close', done);
            resolve();
          };
          sock.on('drain', done);
          sock.on('close', done);
        }),
      pause: () => sock.pause(),
      resume: () => {
        if (!closed) sock.resume();
      },
      startTls() {
        raw.off('data', onData);
        const t = new tls.TLSSocket(raw, { isServer: true, secureContext: context });
        t.on('error', (err) => {
          deps.log.debug('imap tls error', { error: err.message });
          t.destroy();
        });
        t.on('data', onData);
        sock = t;
        secure = true;
      },
      close() {
        sock.end(() => sock.destroy());
      },
      get secure() {
        return secure;
      },
      remoteAddress: raw.remoteAddress ?? '',
    };
    const session = new ImapSession(deps, io);
    const entry = {
      bye(text: string) {
        if (!closed) sock.end(`* BYE ${text}\r\n`, () => sock.destroy());
      },
    };
    open.add(entry);
    raw.on('data', onData);
    raw.on('close', () => {
      closed = true;
      clearTimeout(timer);
      open.delete(entry);
      session.onClose();
    });
    session.start();
  });
  server.on('error', (err) => deps.log.error('imap server error', { error: err.message }));

  return {
    listen: (port, host) =>
      new Promise<number>((resolve, reject) => {
        server.once('error', reject);
        server.listen(port, host, () => {
          server.off('error', reject);
          resolve((server.address() as net.AddressInfo).port);
        });
      }),
    listening: () => server.listening,
    close: () =>
      new Promise<void>((resolve) => {
        for (const c of open) c.bye('Server shutting down');
        if (!server.listening) return resolve();
        server.close(() => resolve());
      }),
  };
}
