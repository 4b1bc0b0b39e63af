// The service's outbound side. Every message is composed and signed before it gets here, so a sender only moves
// bytes: an envelope and the raw message.
//
// To the sink: a small pool of nodemailer SMTP connections kept open and reused (a new connection costs a greeting
// and an EHLO before its first message), over the sink's local socket for the service's own deliveries (outside its
// connection limit: inbound/sink.ts), driven directly rather than through nodemailer's mailer, which would wrap every
// raw message in a MIME node and a stream pipeline again. The relay (`--relay-url`) has its own transport: relay.ts.
import { createRequire } from 'node:module';
import { connect } from 'node:net';
import { Readable } from 'node:stream';
import type SMTPConnection from 'nodemailer/lib/smtp-connection';

// nodemailer is loaded by the first connection, not with the server.
const require = createRequire(import.meta.url);

export interface OutgoingMail {
  envelope: { from: string; to: string[] };
  raw: Buffer;
}

export interface Sender {
  send(mail: OutgoingMail): Promise<void>;
  close(): void;
}

const CONNECT_TIMEOUT_MS = 10_000;
const SLICE_BYTES = 1024 * 1024;

function* slices(raw: Buffer): Generator<Buffer> {
  for (let i = 0; i < raw.length; i += SLICE_BYTES) yield raw.subarray(i, i + SLICE_BYTES);
}

interface Pending {
  mail: OutgoingMail;
  resolve: () => void;
  reject: (err: Error) => void;
  /**
   * Set when a reused connection turned out dead mid-send: the message is tried once more on a fresh connection
   * (a copy the server did take is no harm: the sink ignores a second copy of the service's mail).
   */
  retried?: boolean;
}

interface Conn {
  smtp: SMTPConnection;
  ready: boolean;
  busy: boolean;
  sent: number;
}

/**
 * A pool of up to `maxConnections` reused SMTP connections to a server without TLS or auth (the sink), at a host and
 * port or on a local socket (`path`). Eight, not four: each message waits for the sink to store it before its
 * connection is free, and with four the sends queued behind them (bench/README.md, bench:drain).
 */
export function createPoolSender(
  opts: ({ host: string; port: number } | { path: string }) & { maxConnections?: number },
): Sender & {
  /** Opens a first connection ahead of the first message (nodemailer loaded, greeted, EHLO answered), if none is. */
  warm(): void;
} {
  const max = opts.maxConnections ?? 8;
  const where = 'path' in opts ? opts.path : `${opts.host}:${opts.port}`;
  const conns = new Set<Conn>();
  const queue: Pending[] = [];
  let closed = false;

  function drop(conn: Conn): void {
    conns.delete(conn);
    conn.smtp.close();
  }

  function open(): void {
    const conn: Conn = {
      smtp: new (require('nodemailer/lib/smtp-connection') as typeof SMTPConnection)({
        // nodemailer connects to a host and port; a local socket it is handed connected (or connecting).
        ...('path' in opts ? { connection: connect(opts.path) } : { host: opts.host, port: opts.port }),
        secure: false,
        ignoreTLS: true,
        connectionTimeout: CONNECT_TIMEOUT_MS,
      }),
      ready: false,
      busy: true,
      sent: 0,
    };
    conns.add(conn);
    // A connection that fails or ends leaves the pool. One that never got ready fails the first waiting
    // message (its job retries later) rather than opening connections in a loop; an error during a send
    // reaches that send's callback instead.
    const lost = (err: Error) => {
      if (!conns.has(conn)) return;
      const wasReady = conn.ready;
      drop(conn);
      if (!wasReady) queue.shift()?.reject(err);
      pump();
    };
    conn.smtp.on('error', (err: Error) => {
      if (!(conn.ready && conn.busy)) lost(err);
    });
    conn.smtp.once('end', () => lost(new Error(`the connection to ${where} closed`)));
    conn.smtp.connect((err?: Error) => {
      if (err) return lost(err);
      conn.ready = true;
      conn.busy = false;
      pump();
    });
  }

  function sendOn(conn: Conn, item: Pending): void {
    conn.busy = true;
    const reused = conn.sent > 0;
    const { envelope, raw } = item.mail;
    // The size is declared (SIZE, RFC 1870) so the sink can hold the message in one Buffer as it arrives. A big one
    // goes in slices: nodemailer's dot-stuffing copies a whole chunk it has to change, and it can be tens of MB.
    const message = raw.length > SLICE_BYTES ? Readable.from(slices(raw), { objectMode: false }) : raw;
    conn.smtp.send(
      { ...envelope, size: raw.length },
      message,
      (err: (Error & { code?: string; responseCode?: number }) | null) => {
        conn.sent++;
        if (!err) {
          conn.busy = false;
          item.resolve();
          return pump();
        }
        if ((err.code === 'EENVELOPE' || err.code === 'EMESSAGE') && err.responseCode !== 421) {
          // The server refused this message; the connection itself is fine once its session is reset.
          item.reject(err);
          conn.smtp.reset((resetErr) => {
            if (resetErr) drop(conn);
            else conn.busy = false;
            pump();
          });
          return;
        }
        drop(conn);
        if (reused && !item.retried && (err.code === 'ECONNECTION' || err.code === 'EPROTOCOL')) {
          item.retried = true;
          queue.unshift(item);
        } else {
          item.reject(err);
        }
        pump();
      },
    );
  }

  function pump(): void {
    if (closed) return;
    for (const conn of conns) {
      if (!queue.length) return;
      if (conn.ready && !conn.busy) sendOn(conn, queue.shift()!);
    }
    const opening = [...conns].filter((c) => !c.ready).length;
    for (let i = opening; i < queue.length && conns.size < max; i++) open();
  }

  return {
    send(mail) {
      if (closed) return Promise.reject(new Error('the sender is closed'));
      return new Promise<void>((resolve, reject) => {
        queue.push({ mail, resolve, reject });
        pump();
      });
    },
    warm() {
      if (!closed && conns.size === 0) open();
    },
    close() {
      closed = true;
      for (const item of queue.splice(0)) item.reject(new Error('the sender is closed'));
      for (const conn of [...conns]) {
        conns.delete(conn);
        if (conn.ready && !conn.busy) conn.smtp.quit();
        else conn.smtp.close();
      }
    },
  };
}
