// A raw POP3 conversation over a real socket, for what a client library hides: bad commands, commands in the wrong
// state, over-long lines, a silent client. Lines are read as they arrive (no polling).
import { connect, type Socket } from 'node:net';

export interface PopTalk {
  socket: Socket;
  write(data: string | Buffer): void;
  /** The next line, without its CRLF; rejects if the connection closes first. */
  line(): Promise<string>;
  /** The lines of a multi-line response's body, up to (without) the terminating "." (dot-stuffing left as it is). */
  body(): Promise<string[]>;
  /** Resolves when the server has closed the connection, with whatever it sent that no line() took. */
  closed: Promise<void>;
  destroy(): void;
}

export function popTalk(port: number, host = '127.0.0.1'): Promise<PopTalk> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, host);
    socket.once('error', reject);
    socket.once('connect', () => {
      socket.off('error', reject);
      resolve(popTalkOn(socket));
    });
  });
}

export function popTalkOn(socket: Socket): PopTalk {
  let buffer = '';
  const lines: string[] = [];
  const waiting: { resolve: (l: string) => void; reject: (e: Error) => void }[] = [];
  const closed = new Promise<void>((res) => socket.once('close', () => res()));
  socket.on('data', (d: Buffer) => {
    buffer += d.toString('latin1');
    for (let i = buffer.indexOf('\r\n'); i !== -1; i = buffer.indexOf('\r\n')) {
      const l = buffer.slice(0, i);
      buffer = buffer.slice(i + 2);
      const w = waiting.shift();
      if (w) w.resolve(l);
      else lines.push(l);
    }
  });
  socket.on('close', () => {
    for (const w of waiting.splice(0))
      w.reject(new Error(`connection closed; unended bytes: ${JSON.stringify(buffer)}`));
  });
  socket.on('error', () => {});
  const line = (): Promise<string> => {
    const l = lines.shift();
    if (l !== undefined) return Promise.resolve(l);
    if (socket.destroyed) return Promise.reject(new Error('connection closed'));
    return new Promise((resolve, reject) => waiting.push({ resolve, reject }));
  };
  return {
    socket,
    write: (data) => void socket.write(data),
    line,
    async body() {
      const out: string[] = [];
      for (let l = await line(); l !== '.'; l = await line()) out.push(l);
      return out;
    },
    closed,
    destroy: () => socket.destroy(),
  };
}
