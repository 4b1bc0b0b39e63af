import { SMTPServer } from 'smtp-server';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createPoolSender, type Sender } from './sender.js';

interface Caught {
  from: string;
  to: string[];
  raw: string;
}

/** A real SMTP server on a loopback port that records what it accepts and the connections it saw. */
async function smtpServer(opts: { refuse?: string } = {}) {
  const caught: Caught[] = [];
  let connections = 0;
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS', 'AUTH'],
    disableReverseLookup: true,
    logger: false,
    onConnect(_session, cb) {
      connections++;
      cb();
    },
    onRcptTo(address, _session, cb) {
      if (address.address === opts.refuse)
        return cb(Object.assign(new Error('No such mailbox'), { responseCode: 550 }));
      cb();
    },
    onData(stream, session, cb) {
      const chunks: Buffer[] = [];
      const envelope = {
        from: (session.envelope.mailFrom as { address: string }).address,
        to: session.envelope.rcptTo.map((r) => r.address),
      };
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        caught.push({ ...envelope, raw: Buffer.concat(chunks).toString() });
        cb();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const port = (server.server.address() as AddressInfo).port;
  return {
    caught,
    port,
    connections: () => connections,
    /** Drops every open connection, as a restarted server would. */
    dropConnections: () => {
      for (const c of (server as unknown as { connections: Set<{ close(): void }> }).connections) c.close();
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

const mail = (n: number, to = 'rcpt@example.com') => ({
  envelope: { from: 'bounces@example.test', to: [to] },
  raw: Buffer.from(`From: a@example.test\r\nTo: ${to}\r\nSubject: n${n}\r\n\r\nbody ${n}\r\n.leading dot\r\n`),
});

describe('the pooled sender', () => {
  let sender: Sender | undefined;
  let server: Awaited<ReturnType<typeof smtpServer>> | undefined;
  afterEach(async () => {
    sender?.close();
    await server?.close();
  });

  it('hands over many messages byte for byte over a few reused connections', async () => {
    server = await smtpServer();
    sender = createPoolSender({ host: '127.0.0.1', port: server.port, maxConnections: 3 });
    await Promise.all(Array.from({ length: 40 }, (_, i) => sender!.send(mail(i))));
    expect(server.caught).toHaveLength(40);
    expect(server.connections()).toBeLessThanOrEqual(3);
    const first = server.caught.find((c) => c.raw.includes('Subject: n0'))!;
    expect(first).toEqual({ from: 'bounces@example.test', to: ['rcpt@example.com'], raw: mail(0).raw.toString() });
  });

  it('fails only the message the server refuses, and keeps sending on the same connection', async () => {
    server = await smtpServer({ refuse: 'nobody@example.com' });
    sender = createPoolSender({ host: '127.0.0.1', port: server.port, maxConnections: 1 });
    await expect(sender.send(mail(1, 'nobody@example.com'))).rejects.toMatchObject({ responseCode: 550 });
    await sender.send(mail(2));
    expect(server.caught.map((c) => c.to)).toEqual([['rcpt@example.com']]);
    expect(server.connections()).toBe(1);
  });

  it('reconnects when the server dropped its idle connections', async () => {
    server = await smtpServer();
    sender = createPoolSender({ host: '127.0.0.1', port: server.port, maxConnections: 1 });
    await sender.send(mail(1));
    server.dropConnections();
    // Whether the close has reached the pool yet or not, the next message goes out on a fresh connection.
    await sender.send(mail(2));
    expect(server.caught).toHaveLength(2);
    expect(server.connections()).toBe(2);
  });

  it('fails a send with the connection error when nothing listens, then works once the server is back', async () => {
    const gone = await smtpServer();
    const port = gone.port;
    await gone.close();
    sender = createPoolSender({ host: '127.0.0.1', port, maxConnections: 2 });
    await expect(sender.send(mail(1))).rejects.toThrow(/ECONNREFUSED|connect/i);
    server = await smtpServer();
    sender.close();
    sender = createPoolSender({ host: '127.0.0.1', port: server.port, maxConnections: 2 });
    await sender.send(mail(2));
    expect(server.caught).toHaveLength(1);
  });
});
