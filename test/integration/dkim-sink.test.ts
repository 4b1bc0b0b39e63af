// The service's DKIM signatures still verify once SMTP has carried them into the sink (dot-stuffing and its undoing,
// line ends), as GET /sandbox/messages/{id} reports them in `dkim`: messages sent through /v1/emails with the seeded
// test key, and the hard-case fixtures of fixtures/mail/dkim signed by dkimSign with the seeded domain's key and
// handed to the sink by the service's own SMTP pool. The sink verifies with mailauth against the sandbox zone.
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dkimSign } from '../../src/server/outbound/dkim-sign.js';
import { createPoolSender, type Sender } from '../../src/server/outbound/sender.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(() => s.close());

const uniqueRecipient = () => `dkim-${randomBytes(4).toString('hex')}@dest.example`;

/** The caught message sent to a recipient no other message had. */
async function caughtBy(to: string) {
  const list = await s.admin('GET', `/sandbox/messages?to=${encodeURIComponent(to)}`);
  expect(list.status, list.text).toBe(200);
  expect(list.body.data).toHaveLength(1);
  const m = await s.admin('GET', `/sandbox/messages/${list.body.data[0].id}`);
  expect(m.status, m.text).toBe(200);
  return m.body;
}

describe('DKIM of messages sent through /v1/emails', () => {
  it('text with LF-only line ends, long lines and lines starting with dots is caught with dkim: pass and reads the same', async () => {
    const text = [
      'Every line of this text ends in a bare LF.',
      '.a line starting with a dot, which SMTP doubles on the wire',
      '.',
      '..',
      'x'.repeat(900),
      'word '.repeat(200).trimEnd(),
      'trailing spaces   ',
      '',
      'end',
    ].join('\n');
    const html = `<p>${'y'.repeat(950)}</p>\n.<p>a line starting with a dot</p>\n`;
    const to = uniqueRecipient();
    const sent = await s.call('POST', '/v1/emails', {
      token: s.seed!.api_key_test,
      body: { from: 'Shop <orders@example.test>', to, subject: 'Line feeds and long lines', text, html },
    });
    expect(sent.status, sent.text).toBe(202);
    await s.settle();
    const m = await caughtBy(to);
    expect(m.dkim).toBe('pass');
    expect(m.text.replace(/\r\n/g, '\n').trimEnd()).toBe(text);
    expect(m.html).toContain('y'.repeat(950));
  });

  it('text with bare CR line ends (and a stray CR) is caught with dkim: pass', async () => {
    const text = 'Every line of this text ends in a bare CR,\ras a classic Mac program wrote it.\r\rA stray CR: a\rb\r';
    const to = uniqueRecipient();
    const sent = await s.call('POST', '/v1/emails', {
      token: s.seed!.api_key_test,
      body: { from: 'Shop <orders@example.test>', to, subject: 'Carriage returns', text },
    });
    expect(sent.status, sent.text).toBe(202);
    await s.settle();
    const m = await caughtBy(to);
    expect(m.dkim).toBe('pass');
    expect(m.text).toContain('as a classic Mac program wrote it.');
  });
});

const DIR = fileURLToPath(new URL('../../fixtures/mail/dkim/', import.meta.url));
// Not utf8-header-nbsp-byte.eml: mailauth, the sink's verifier, reads its byte A0 as whitespace, against RFC 6376
// (see src/server/outbound/dkim-interop.test.ts).
const FIXTURES = readdirSync(DIR).filter((f) => f.endsWith('.eml') && f !== 'utf8-header-nbsp-byte.eml');

describe('DKIM of the hard-case messages signed by dkimSign, over SMTP to the sink', () => {
  let sender: Sender;
  beforeAll(() => {
    sender = createPoolSender({ host: '127.0.0.1', port: s.smtpPort });
  });
  afterAll(() => sender.close());

  it('has the fixtures', () => expect(FIXTURES.length).toBeGreaterThanOrEqual(13));

  it.each(FIXTURES)('%s is caught with dkim: pass', async (file) => {
    const key = s.core.domains.signingKey(s.seed!.domain_id)!;
    const raw = dkimSign(readFileSync(DIR + file), key);
    const to = uniqueRecipient();
    await sender.send({ envelope: { from: 'orders@example.test', to: [to] }, raw });
    expect((await caughtBy(to)).dkim).toBe('pass');
  });
});
