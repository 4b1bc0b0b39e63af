// A relay (smarthost) on loopback for the tests of releases and relay rules (`svc serve --relay-url`): a real SMTP
// server (smtp-server) that asks for AUTH, keeps what it is handed byte for byte, and answers as a test tells it:
// accepting, refusing (5xx) or deferring (4xx).
import type { AddressInfo } from 'node:net';
import { SMTPServer, type SMTPServerOptions } from 'smtp-server';

export interface Relayed {
  mailFrom: string;
  rcptTo: string[];
  raw: Buffer;
  user: string | undefined;
  /** Whether the session was TLS (STARTTLS, or implicit). */
  secure: boolean;
}

export interface TestRelay {
  port: number;
  /** The relay's URL with its credentials (`smtp://relay-user:relay-secret@127.0.0.1:PORT`). */
  url: string;
  /** What it accepted, in order. */
  received: Relayed[];
  /** How it answers the next messages: accept, or refuse with this reply (at RCPT TO). */
  answer: { code: number; text: string } | 'accept';
  /** Resolves with the next message accepted. */
  next(): Promise<Relayed>;
  close(): Promise<void>;
}

export const RELAY_USER = 'relay-user';
export const RELAY_PASS = 'relay-s3cret-pass';

export async function startRelay(opts: Partial<SMTPServerOptions> = {}): Promise<TestRelay> {
  const waiting: ((m: Relayed) => void)[] = [];
  const relay: Omit<TestRelay, 'port' | 'url' | 'close'> = {
    received: [],
    answer: 'accept',
    next: () => new Promise((resolve) => waiting.push(resolve)),
  };
  const server = new SMTPServer({
    // smtp-server's own certificate has expired (stack notes): no STARTTLS unless a test gives one.
    disabledCommands: ['STARTTLS'],
    allowInsecureAuth: true,
    authMethods: ['PLAIN', 'LOGIN'],
    disableReverseLookup: true,
    logger: false,
    onAuth(auth, _session, cb) {
      if (auth.username === RELAY_USER && auth.password === RELAY_PASS) cb(null, { user: auth.username });
      else cb(Object.assign(new Error('Authentication failed'), { responseCode: 535 }));
    },
    onRcptTo(_address, _session, cb) {
      const a = relay.answer;
      if (a === 'accept') cb();
      else cb(Object.assign(new Error(a.text), { responseCode: a.code }));
    },
    onData(stream, session, done) {
      const envelope = {
        mailFrom: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
        rcptTo: session.envelope.rcptTo.map((r) => r.address),
        user: session.user as string | undefined,
        secure: Boolean(session.secure),
      };
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        const m = { ...envelope, raw: Buffer.concat(chunks) };
        relay.received.push(m);
        for (const w of waiting.splice(0)) w(m);
        done();
      });
    },
    ...opts,
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const port = (server.server.address() as AddressInfo).port;
  return Object.assign(relay, {
    port,
    url: `smtp://${RELAY_USER}:${RELAY_PASS}@127.0.0.1:${port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  });
}

/** A loopback port nothing listens on (bound, then closed): a relay that is down. */
export async function closedPort(): Promise<number> {
  const { createServer } = await import('node:net');
  const srv = createServer();
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', () => resolve()));
  const port = (srv.address() as AddressInfo).port;
  await new Promise<void>((resolve) => srv.close(() => resolve()));
  return port;
}
