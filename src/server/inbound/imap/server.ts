// The IMAP server (RFC 3501, with IDLE, UIDPLUS, LITERAL+, STARTTLS): mail clients read the caught mail through it.
// This file holds a connection — its autologout timer, STARTTLS — on the listener both mail-client servers share
// (mailbox-server.ts: the limit, closing), and session.ts its protocol. Written here rather than taken from a library:
// no maintained IMAP server library is small (WildDuck's imap-core comes inside a mail server with MongoDB, Redis and
// some sixty packages); see docs/mailbox.md.
import type net from 'node:net';
import tls from 'node:tls';
import {
  type MailboxConnection,
  type MailboxServer,
  type MailboxServerDeps,
  type MailboxServerOptions,
  mailboxListener,
} from '../mailbox-server.js';
import { ImapSession, type SessionIo } from './session.js';

/** RFC 3501 section 5.4: an autologout timer of at least 30 minutes. */
export const IMAP_IDLE_TIMEOUT_MS = 30 * 60_000;

export function createImapServer(deps: MailboxServerDeps, opts: MailboxServerOptions): MailboxServer {
  const idleMs = opts.idleTimeoutMs ?? IMAP_IDLE_TIMEOUT_MS;
  const context = tls.createSecureContext({ key: opts.tls.key, cert: opts.tls.cert });
  return mailboxListener({
    protocol: 'imap',
    deps,
    maxConnections: opts.maxConnections,
    busy: () => '* BYE Too many connections; try again later',
    accept: (raw) => connection(raw),
  });

  /** One connection: its autologout timer, its STARTTLS, its session. */
  function connection(raw: net.Socket): MailboxConnection {
    raw.on('error', (err) => deps.log.debug('imap connection error', { error: err.message }));
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
    raw.on('data', onData);
    raw.on('close', () => {
      closed = true;
      clearTimeout(timer);
      session.onClose();
    });
    session.start();
    return {
      shutdown() {
        if (!closed) sock.end('* BYE Server shutting down\r\n', () => sock.destroy());
      },
    };
  }
}
