// A raw IMAP conversation over a real socket, for what a client library hides: bad commands, commands in the wrong
// state, literals, over-long lines, a silent client. Replies are read as they arrive (no polling).
import { connect, type Socket } from 'node:net';

export interface ImapTalk {
  socket: Socket;
  write(data: string | Buffer): void;
  /** Everything received up to and including the first line matching `re` (the server's lines, CRLFs kept). */
  until(re: RegExp): Promise<string>;
  /** Sends `tag command` and returns every line up to the tagged reply. */
  cmd(tag: string, command: string): Promise<string>;
  /** Resolves when the server has closed the connection, with what it sent that no until() took. */
  closed: Promise<string>;
  destroy(): void;
}

export function imapTalk(port: number, host = '127.0.0.1'): Promise<ImapTalk> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, host);
    socket.once('error', reject);
    socket.once('connect', () => {
      socket.off('error', reject);
      resolve(imapTalkOn(socket));
    });
  });
}

export function imapTalkOn(socket: Socket): ImapTalk {
  let buffer = '';
  let waiter: { re: RegExp; resolve: (s: string) => void; reject: (e: Error) => void } | null = null;
  let ended = false;
  const check = () => {
    if (!waiter) return;
    const lines = buffer.split(/(?<=\r\n)/);
    let acc = '';
    for (const l of lines) {
      if (!l.endsWith('\r\n')) break;
      acc += l;
      if (waiter.re.test(l)) {
        buffer = buffer.slice(acc.length);
        const w = waiter;
        waiter = null;
        w.resolve(acc);
        return;
      }
    }
    if (ended) {
      const w = waiter;
      waiter = null;
      w.reject(new Error(`connection closed before ${w.re}; got: ${buffer}`));
    }
  };
  socket.setEncoding('latin1');
  socket.on('data', (d: string) => {
    buffer += d;
    check();
  });
  socket.on('error', () => undefined);
  const closed = new Promise<string>((resolve) => {
    socket.on('close', () => {
      ended = true;
      check();
      resolve(buffer);
    });
  });
  const talk: ImapTalk = {
    socket,
    write: (d) => socket.write(d),
    until: (re) =>
      new Promise((resolve, reject) => {
        waiter = { re, resolve, reject };
        check();
      }),
    cmd(tag, command) {
      socket.write(`${tag} ${command}\r\n`);
      return talk.until(new RegExp(`^${tag} (OK|NO|BAD)`));
    },
    closed,
    destroy: () => socket.destroy(),
  };
  return talk;
}
