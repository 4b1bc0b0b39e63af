// --relay: live-mode mail is handed to the smarthost as well as caught; test-mode mail never is.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SMTPServer } from 'smtp-server';
import type { AddressInfo } from 'node:net';
import { startTestServer, type TestServer } from '../helpers/server.js';

interface Relayed {
  mailFrom: string;
  rcptTo: string[];
  raw: string;
}

describe('relay of live mail', () => {
  let s: TestServer;
  let relay: SMTPServer;
  const relayed: Relayed[] = [];

  beforeAll(async () => {
    relay = new SMTPServer({
      authOptional: true,
      disabledCommands: ['STARTTLS'],
      disableReverseLookup: true,
      logger: false,
      onData(stream, session, done) {
        const envelope = {
          mailFrom: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
          rcptTo: session.envelope.rcptTo.map((r) => r.address),
        };
        const chunks: Buffer[] = [];
        stream.on('data', (c: Buffer) => chunks.push(c));
        stream.on('end', () => {
          relayed.push({ ...envelope, raw: Buffer.concat(chunks).toString('utf8') });
          done();
        });
      },
    });
    await new Promise<void>((resolve) => relay.listen(0, '127.0.0.1', () => resolve()));
    const port = (relay.server.address() as AddressInfo).port;
    s = await startTestServer({ relay: `smtp://127.0.0.1:${port}` });
  });
  afterAll(async () => {
    await s.close();
    await new Promise<void>((resolve) => relay.close(() => resolve()));
  });

  const send = (key: string, to: string) =>
    s.call('POST', '/v1/emails', {
      token: key,
      body: { from: 'Shop <orders@example.test>', to, subject: 'Relayed?', text: 'Hello' },
    });

  it('a live key’s message reaches the relay, DKIM-signed, with the same Message-ID as the caught copy', async () => {
    const r = await send(s.seed!.api_key_live, 'live-rcpt@example.com');
    expect(r.status, r.text).toBe(202);
    await s.settle();
    const mine = relayed.filter((m) => m.rcptTo.includes('live-rcpt@example.com'));
    expect(mine).toHaveLength(1);
    expect(mine[0]!.raw).toMatch(/^DKIM-Signature: v=1; a=rsa-sha256; c=relaxed\/relaxed; d=example\.test; s=svc1;/);
    expect(mine[0]!.raw).toContain(`Message-ID: <${r.body.id}@example.test>`);
    expect(mine[0]!.mailFrom).toBe(`bounces+${r.body.id}@bounces.example.test`);
    const caught = await s.admin('GET', '/sandbox/messages?to=live-rcpt@example.com');
    expect(caught.body.data.map((m: { message_id: string }) => m.message_id)).toEqual([r.body.id]);
    const m = await s.call('GET', `/v1/emails/${r.body.id}`, { token: s.seed!.api_key_live });
    expect(m.body.status).toBe('delivered');
  });

  it('a test key’s message is caught but never relayed', async () => {
    const r = await send(s.seed!.api_key_test, 'test-rcpt@example.com');
    expect(r.status, r.text).toBe(202);
    await s.settle();
    expect(relayed.filter((m) => m.rcptTo.includes('test-rcpt@example.com'))).toEqual([]);
    const caught = await s.admin('GET', '/sandbox/messages?to=test-rcpt@example.com');
    expect(caught.body.data).toHaveLength(1);
  });
});
