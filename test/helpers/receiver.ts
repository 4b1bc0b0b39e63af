// A real HTTP receiver for webhook tests: records every request (headers and raw body) and answers as told.
import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Received {
  headers: IncomingHttpHeaders;
  body: string;
  path: string;
  /** Wall-clock time it arrived. */
  at: number;
}

/** How to answer the nth request (from 1): a status code, or 'hang' to never answer. */
export type Answer = (
  n: number,
  req: Received,
) => number | 'hang' | { status: number; headers: Record<string, string> };

export interface Receiver {
  url: string;
  received: Received[];
  /** Resolves once `count` requests have arrived in all. */
  waitFor(count: number): Promise<Received[]>;
  answer: Answer;
  close(): Promise<void>;
}

export async function startReceiver(answer: Answer = () => 200, path = '/webhooks'): Promise<Receiver> {
  const received: Received[] = [];
  const waiters: { count: number; resolve: (r: Received[]) => void }[] = [];
  const hanging = new Set<ServerResponse>();
  const receiver: Receiver = {
    url: '',
    received,
    answer,
    waitFor(count) {
      if (received.length >= count) return Promise.resolve(received);
      return new Promise((resolve) => waiters.push({ count, resolve }));
    },
    async close() {
      for (const res of hanging) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const r: Received = {
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
        path: req.url ?? '',
        at: Date.now(),
      };
      received.push(r);
      const a = receiver.answer(received.length, r);
      for (const w of waiters.filter((w) => received.length >= w.count)) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve(received);
      }
      if (a === 'hang') {
        hanging.add(res);
        return;
      }
      const { status, headers } = typeof a === 'number' ? { status: a, headers: {} } : a;
      res.writeHead(status, { 'content-type': 'text/plain', ...headers }).end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}${path}`;
  return receiver;
}
