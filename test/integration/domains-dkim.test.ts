// The DKIM key of a domain really signs mail that verifies against the published record (docs/api.md#domains;
// the sink's `dkim` of GET /sandbox/messages/{id}, docs/local-server.md).
// Mail is signed with the seeded domain's key by nodemailer, caught by the sink (which verifies with mailauth
// over the sandbox zone), and verified again here with mailauth directly.
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { dkimVerify } from 'mailauth';
import nodemailer from 'nodemailer';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { txtCharacterStrings } from '../helpers/dns-server.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { addDomain, publish, record, uniqueName, verify } from './domains-helpers.js';

let s: TestServer;
let signing: { domainName: string; keySelector: string; privateKey: string };

beforeAll(async () => {
  s = await startTestServer();
  signing = s.core.domains.signingKey(s.seed!.domain_id)!;
});
afterAll(() => s.close());

/**
 * A DNS lookup in mailauth's shape (`dns.promises.resolve`) that reads the sandbox zone's rows directly, TXT values
 * split into 255-byte strings as DNS carries them.
 */
async function zoneResolver(name: string, rrtype: string): Promise<string[][]> {
  const z = s.core.zone.get(name.toLowerCase(), rrtype);
  if (z?.state !== 'visible' || rrtype !== 'TXT') {
    throw Object.assign(new Error(`queryTxt ENOTFOUND ${name}`), { code: 'ENOTFOUND' });
  }
  return z.values.map((v) => txtCharacterStrings(v).map((b) => b.toString('utf8')));
}

function transport(dkim?: { domainName: string; keySelector: string; privateKey: string }) {
  return nodemailer.createTransport({
    host: '127.0.0.1',
    port: s.smtpPort,
    secure: false,
    ignoreTLS: true,
    ...(dkim ? { dkim } : {}),
  });
}

/** Sends one message to the sink and returns its caught id (found by a unique recipient). */
async function sendToSink(opts: {
  dkim?: typeof signing;
  raw?: Buffer;
  from?: string;
  text?: string;
}): Promise<{ id: string; to: string }> {
  const to = `dkim-${randomBytes(4).toString('hex')}@dest.example`;
  const t = transport(opts.dkim);
  try {
    if (opts.raw) {
      await t.sendMail({ envelope: { from: 'sender@example.test', to: [to] }, raw: opts.raw });
    } else {
      await t.sendMail({
        from: opts.from ?? 'Sender <sender@example.test>',
        to,
        subject: 'DKIM check',
        text: opts.text ?? 'This body is covered by the DKIM signature.\n',
      });
    }
  } finally {
    t.close();
  }
  const list = await s.admin('GET', `/sandbox/messages?to=${encodeURIComponent(to)}`);
  expect(list.status, list.text).toBe(200);
  expect(list.body.data).toHaveLength(1);
  return { id: list.body.data[0].id, to };
}

async function caught(id: string) {
  const r = await s.admin('GET', `/sandbox/messages/${id}`);
  expect(r.status, r.text).toBe(200);
  return r.body;
}

async function rawOf(id: string): Promise<Buffer> {
  const r = await fetch(`${s.origin}/sandbox/messages/${id}/raw`, {
    headers: { authorization: `Bearer ${s.adminToken}` },
  });
  expect(r.status).toBe(200);
  return Buffer.from(await r.arrayBuffer());
}

describe('DKIM with the seeded domain’s key', () => {
  let signedId: string;
  let raw: Buffer;

  it('the signing key belongs to the published DKIM record', async () => {
    expect(signing.domainName).toBe('example.test');
    const dns = await s.call('GET', `/v1/domains/${s.seed!.domain_id}/dns`, { token: s.seed!.api_key_test });
    const dkim = record(dns.body, 'dkim');
    expect(dkim.host).toBe(`${signing.keySelector}._domainkey.example.test`);
    expect(signing.privateKey).toMatch(/^-----BEGIN PRIVATE KEY-----/);
    // The zone holds exactly the advertised record.
    expect(await zoneResolver(dkim.host, 'TXT')).toEqual([
      txtCharacterStrings(dkim.value).map((b) => b.toString('utf8')),
    ]);
  });

  it('a message signed with it is caught with dkim: pass', async () => {
    const { id } = await sendToSink({ dkim: signing });
    signedId = id;
    const m = await caught(id);
    expect(m.headers.some((h: { name: string }) => h.name.toLowerCase() === 'dkim-signature')).toBe(true);
    expect(m.dkim).toBe('pass');
    raw = await rawOf(id);
  });

  it('mailauth verifies the caught message against the sandbox zone', async () => {
    expect(signedId).toBeDefined();
    const result = await dkimVerify(raw, { resolver: zoneResolver });
    expect(result.results).toHaveLength(1);
    const r = result.results[0]!;
    expect(r.status.result, r.info).toBe('pass');
    expect(r.signingDomain).toBe('example.test');
    expect(r.selector).toBe(signing.keySelector);
  });

  it('a tampered body does not pass, directly or through the sink', async () => {
    expect(raw).toBeDefined();
    const text = raw.toString('latin1');
    const tampered = Buffer.from(
      text.replace('covered by the DKIM signature', 'covered by the DKIM signaturE'),
      'latin1',
    );
    expect(tampered.equals(raw)).toBe(false);
    const direct = await dkimVerify(tampered, { resolver: zoneResolver });
    expect(direct.results.map((x) => x.status.result)).not.toContain('pass');

    const { id } = await sendToSink({ raw: tampered });
    expect((await caught(id)).dkim).toBe('fail');
  });

  it('a signature by another key claiming the same selector fails', async () => {
    const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const impostor = { ...signing, privateKey: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString() };
    const { id } = await sendToSink({ dkim: impostor });
    const m = await caught(id);
    expect(m.dkim).toBe('fail');
    const direct = await dkimVerify(await rawOf(id), { resolver: zoneResolver });
    expect(direct.results.map((x) => x.status.result)).not.toContain('pass');
  });

  it('an unsigned message is caught with dkim: none', async () => {
    const { id } = await sendToSink({});
    expect((await caught(id)).dkim).toBe('none');
  });
});

describe('DKIM of mail the service sends', () => {
  it('a message sent through /v1/emails from a newly verified domain is signed with that domain’s key and passes', async () => {
    const key = s.seed!.api_key_test;
    const d = await addDomain(s, key, uniqueName('signs'));
    await publish(s, d.id);
    expect((await verify(s, key, d.id)).verified).toBe(true);
    const to = `svc-${randomBytes(4).toString('hex')}@dest.example`;
    const sent = await s.call('POST', '/v1/emails', {
      token: key,
      body: { from: `news@${d.name}`, to, subject: 'Signed by the service', text: 'hello' },
    });
    expect(sent.status, sent.text).toBe(202);
    await s.settle();
    const list = await s.admin('GET', `/sandbox/messages?to=${encodeURIComponent(to)}`);
    expect(list.body.data).toHaveLength(1);
    expect((await caught(list.body.data[0].id)).dkim).toBe('pass');
    const result = await dkimVerify(await rawOf(list.body.data[0].id), { resolver: zoneResolver });
    const r = result.results.find((x) => x.signingDomain === d.name);
    expect(r, JSON.stringify(result.results)).toBeDefined();
    expect(r!.status.result).toBe('pass');
    expect(r!.selector).toBe(record(d, 'dkim').host.split('._domainkey.')[0]);
  });

  it('once the DKIM record is removed from the zone, the same key no longer passes', async () => {
    const key = s.seed!.api_key_test;
    const d = await addDomain(s, key, uniqueName('unpublished'));
    await publish(s, d.id);
    const dKey = s.core.domains.signingKey(d.id)!;
    const del = await s.call('DELETE', `/sandbox/dns?host=${encodeURIComponent(record(d, 'dkim').host)}&type=TXT`, {
      token: s.adminToken,
    });
    expect(del.status).toBe(204);
    const { id } = await sendToSink({ dkim: dKey, from: `x@${d.name}` });
    expect((await caught(id)).dkim).not.toBe('pass');
  });
});
