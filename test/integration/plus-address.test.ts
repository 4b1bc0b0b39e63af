// Plus-addresses (`ada+t1@example.org`), as a browser test gives each test its own (svc-mail/playwright): caught by the
// sink like any address, and the listing's `to` filter matches each exactly — not the address without its tag, not
// another tag — whether the `+` comes encoded (`%2B`, as the client sends it) or bare, as a hand-written curl sends it.
import nodemailer from 'nodemailer';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.js';

describe('plus-addresses in the inbox listing', () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer();
    const t = nodemailer.createTransport({ host: '127.0.0.1', port: s.smtpPort, secure: false, ignoreTLS: true });
    try {
      for (const to of ['ada@example.org', 'ada+t1@example.org', 'ada+t12@example.org', 'ADA+T2@example.org'])
        await t.sendMail({ from: 'shop@example.test', to, subject: to, text: 'hi' });
      await t.sendMail({ from: 'shop@example.test', to: 'bo@example.org', bcc: 'ada+t3@example.org', subject: 'bcc' });
    } finally {
      t.close();
    }
  });
  afterAll(() => s?.close());

  const subjects = async (query: string) => {
    const r = await s.admin('GET', `/sandbox/messages?${query}`);
    expect(r.status, r.text).toBe(200);
    return (r.body.data as { subject: string }[]).map((m) => m.subject);
  };

  it('matches a plus-address exactly, in any case, the envelope too', async () => {
    expect(await subjects('to=ada%2Bt1%40example.org')).toEqual(['ada+t1@example.org']);
    expect(await subjects('to=ada%2Bt2%40example.org')).toEqual(['ADA+T2@example.org']);
    expect(await subjects('to=ada%2Bt3%40example.org')).toEqual(['bcc']);
    expect(await subjects('to=ada%40example.org')).toEqual(['ada@example.org']);
    expect(await subjects('to=ada%2B%40example.org')).toEqual([]);
  });

  it('reads a bare + in the query as the plus, not as a space', async () => {
    expect(await subjects('to=ada+t1@example.org')).toEqual(['ada+t1@example.org']);
    expect(await subjects('to=ada+t12@example.org')).toEqual(['ada+t12@example.org']);
  });
});
