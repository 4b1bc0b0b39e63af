// A raw SMTP conversation over a real socket, for tests that need what a mail library hides: the greeting, pipelined
// commands, a message that stops midway, a refused connection. Replies are read as they arrive (no polling).
import { connect, type Socket } from 'node:net';
import { connect as tlsConnect } from 'node:tls';

export interface SmtpTalk {
  socket: Socket;
  /** Writes raw bytes (commands end in CRLF). */
  write(data: string | Buffer): void;
  /** The next complete reply (all its lines, e.g. `250-…\r\n250 …\r\n`); rejects if the connection closes first. */
  reply(): Promise<string>;
  /** Resolves when the server has closed the connection. */
  closed: Promise<void>;
  /** Ends the conversation from this side. */
  destroy(): void;
}

export function smtpTalk(port: number, host = '127.0.0.1'): Promise<SmtpTalk> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, host);
    socket.once('error', reject);
    socket.once('connect', () => {
      socket.off('error', reject);
      resolve(smtpTalkOn(socket));
    });
  });
}

/** The same conversation on a socket already connected: a TLS socket (implicit TLS, or after STARTTLS) too. */
export function smtpTalkOn(socket: Socket): SmtpTalk {
  let buffer = '';
  const replies: string[] = [];
  const waiting: { resolve: (r: string) => void; reject: (e: Error) => void }[] = [];
  let ended = false;
  const closed = new Promise<void>((res) => socket.once('close', () => res()));
  socket.setEncoding('latin1');
  socket.on('data', (d: string) => {
    buffer += d;
    // A reply is complete at its line whose code is followed by a space (RFC 5321 section 4.2.1).
    for (let m = /^\d{3} .*\r\n/m.exec(buffer); m; m = /^\d{3} .*\r\n/m.exec(buffer)) {
      const reply = buffer.slice(0, m.index + m[0].length);
      buffer = buffer.slice(reply.length);
      const w = waiting.shift();
      if (w) w.resolve(reply);
      else replies.push(reply);
    }
  });
  const end = () => {
    ended = true;
    for (const w of waiting.splice(0))
      w.reject(new Error(`connection closed; unanswered bytes: ${JSON.stringify(buffer)}`));
  };
  socket.on('close', end);
  socket.on('error', () => {}); // a refused or reset connection shows as `closed`
  return {
    socket,
    write: (data) => void socket.write(data),
    reply: () => {
      const r = replies.shift();
      if (r !== undefined) return Promise.resolve(r);
      if (ended) return Promise.reject(new Error('connection closed'));
      return new Promise((res, rej) => waiting.push({ resolve: res, reject: rej }));
    },
    closed,
    destroy: () => socket.destroy(),
  };
}

/** The same conversation over implicit TLS (SMTP submission's second port), trusting `ca`. */
export function smtpsTalk(port: number, ca: Buffer | string, host = '127.0.0.1'): Promise<SmtpTalk> {
  return new Promise((resolve, reject) => {
    const socket = tlsConnect({ host, port, ca, servername: 'localhost' }, () => {
      socket.off('error', reject);
      resolve(smtpTalkOn(socket));
    });
    socket.once('error', reject);
  });
}
