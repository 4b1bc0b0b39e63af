// The spam check against a real SpamAssassin spamd (test/helpers/spamd.ts), started for these tests.
import { readFileSync } from 'node:fs';
import nodemailer, { type SendMailOptions } from 'nodemailer';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { MessageChecks } from '../../src/contract/checks.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { freePort, startSpamd, type Spamd } from '../helpers/spamd.js';

const spamOf = (r: MessageChecks) => r.checks.find((c) => c.id === 'spam')!;

describe('spam, with --spamd', () => {
  let spamd: Spamd;
  let s: TestServer;
  beforeAll(async () => {
    spamd = await startSpamd();
    s = await startTestServer({ spamd: spamd.address });
  });
  afterAll(async () => {
    await s?.close();
    await spamd?.close();
  });

  async function checkDropped(mail: SendMailOptions): Promise<MessageChecks> {
    const t = nodemailer.createTransport({ host: '127.0.0.1', port: s.smtpPort, secure: false, ignoreTLS: true });
    await t.sendMail(mail);
    t.close();
    const id = (await s.admin('GET', '/sandbox/messages?limit=1')).body.data[0].id;
    const r = await s.admin('GET', `/sandbox/messages/${id}/checks`);
    expect(r.status, r.text).toBe(200);
    return r.body;
  }

  it('scores a message as SpamAssassin does, and calls spam an error with the rules that made it', async () => {
    // GTUBE: the string every SpamAssassin scores as spam.
    const r = await checkDropped({
      from: 'deals@other.test',
      to: 'ada@example.org',
      subject: 'You won',
      text: 'XJS*C4JDBQADN1.NSBN3*2IDNEN*GTUBE-STANDARD-ANTI-UBE-TEST-EMAIL*C.34X',
    });
    const spam = spamOf(r);
    expect(spam.status).toBe('error');
    expect(spam.spam_threshold).toBe(5);
    expect(spam.spam_score).toBeGreaterThanOrEqual(1000);
    expect(spam.findings[0]).toMatchObject({
      severity: 'error',
      rule: 'spam',
      title: expect.stringMatching(/^SpamAssassin calls it spam: \d+(\.\d+)? points of 5/),
    });
    expect(spam.findings.find((f) => f.rule === 'spamassassin/GTUBE')).toMatchObject({ severity: 'warning' });
  });

  it('passes a receipt sent through /v1, with the points it got', async () => {
    const send = await s.call('POST', '/v1/emails', {
      token: s.ready.seed!.api_key_test!,
      body: {
        from: 'The Shop <orders@example.test>',
        to: 'ada@example.org',
        subject: 'Your receipt for order 1042',
        html: readFileSync(new URL('../../fixtures/checks/receipt.html', import.meta.url), 'utf8'),
        text: readFileSync(new URL('../../fixtures/checks/receipt.txt', import.meta.url), 'utf8'),
      },
    });
    expect(send.status).toBe(202);
    await s.settle();
    const id = (await s.admin('GET', '/sandbox/messages?limit=1')).body.data[0].id;
    const spam = spamOf((await s.admin('GET', `/sandbox/messages/${id}/checks`)).body);
    expect(spam.spam_score).toBeLessThan(5);
    expect(spam.findings.map((f) => f.rule)).not.toContain('spam');
    expect(['ok', 'notice', 'warning']).toContain(spam.status);
  });
});

describe('spam, with a spamd that is not there', () => {
  it('is skipped, saying so, and the report is made again next time rather than kept', async () => {
    const s = await startTestServer({ spamd: `127.0.0.1:${await freePort()}` });
    try {
      const t = nodemailer.createTransport({ host: '127.0.0.1', port: s.smtpPort, secure: false, ignoreTLS: true });
      await t.sendMail({ from: 'a@other.test', to: 'b@example.org', subject: 'x', text: 'x' });
      t.close();
      const id = (await s.admin('GET', '/sandbox/messages?limit=1')).body.data[0].id;
      const spam = spamOf((await s.admin('GET', `/sandbox/messages/${id}/checks`)).body);
      expect(spam).toMatchObject({
        status: 'skipped',
        reason: expect.stringMatching(/^spamd at 127\.0\.0\.1:\d+ did not answer: ECONNREFUSED\.$/),
        findings: [],
      });
      await s.advance(60);
      const again = (await s.admin('GET', `/sandbox/messages/${id}/checks`)).body;
      expect(Date.parse(again.checked_at) - Date.parse(spam.checked_at)).toBe(60_000);
    } finally {
      await s.close();
    }
  });

  it('refuses a --spamd that is not HOST:PORT', async () => {
    await expect(startTestServer({ spamd: 'localhost' })).rejects.toThrow(/--spamd takes HOST:PORT/);
  });
});
