// POST /v1/domains/{id}/verify against the sandbox zone (docs/api.md#domains: verify and how a
// record matches; publish, PUT and DELETE /sandbox/dns in docs/local-server.md).
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.js';
import {
  ISO_MS_Z,
  addDomain,
  finding,
  getDomain,
  publish,
  record,
  serviceNow,
  uniqueName,
  verify,
  type Domain,
} from './domains-helpers.js';

let s: TestServer;
let key: string;

beforeAll(async () => {
  s = await startTestServer();
  key = s.seed!.api_key_test;
});
afterAll(() => s.close());

async function putDns(host: string, type: 'TXT' | 'MX' | 'CNAME', values: string[], state?: 'visible' | 'propagating') {
  const r = await s.admin('PUT', '/sandbox/dns', { host, type, values, ...(state ? { state } : {}) });
  expect(r.status, r.text).toBe(200);
  return r.body;
}

async function deleteDns(host: string, type: string) {
  const r = await s.call('DELETE', `/sandbox/dns?host=${encodeURIComponent(host)}&type=${type}`, {
    token: s.adminToken,
  });
  expect(r.status, r.text).toBe(204);
}

const REQUIRED_SENDING = ['ownership', 'dkim', 'mail_from_mx', 'mail_from_spf'];

describe('before anything is published', () => {
  it('the check runs (200) and reports every record missing; verified and propagating are false', async () => {
    const d = await addDomain(s, key, uniqueName('nothing'));
    const v = await verify(s, key, d.id);
    expect(v.id).toBe(d.id);
    expect(v.verified).toBe(false);
    expect(v.propagating).toBe(false);
    expect(v.status).toBe('pending');
    expect(v.verified_at).toBeNull();
    expect(v.last_checked_at).toBe(new Date(await serviceNow(s)).toISOString());
    expect(v.findings.map((f) => f.kind)).toEqual(d.records.map((r) => r.kind));
    for (const f of v.findings) {
      expect(f.status, f.kind).toBe('missing');
      expect(f.detail).toBeTypeOf('string');
      expect(f.detail.length).toBeGreaterThan(0);
    }
    expect(finding(v, 'dkim').expected).toBe(record(d, 'dkim').value);
    expect(finding(v, 'mail_from_mx').expected).toContain('feedback.svc.test');
    for (const r of v.records) expect(r.status, r.kind).toBe('missing');
    const got = await getDomain(s, key, d.id);
    expect(got.last_checked_at).toBe(v.last_checked_at);
    expect(got.records.map((r) => r.status)).toEqual(v.records.map((r) => r.status));
  });
});

describe('published and visible', () => {
  let d: Domain;
  beforeAll(async () => {
    d = await addDomain(s, key, uniqueName('visible'));
  });

  it('POST /sandbox/domains/{id}/publish writes the expected records into the zone', async () => {
    const p = await publish(s, d.id, { state: 'visible' });
    const byKey = new Map(p.records.map((r) => [`${r.host} ${r.type}`, r]));
    expect(byKey.get(`${record(d, 'dkim').host} TXT`)?.values).toEqual([record(d, 'dkim').value]);
    expect(byKey.get(`bounces.${d.name} MX`)?.values).toEqual(['10 feedback.svc.test']);
    for (const r of p.records) expect(r.state).toBe('visible');
  });

  it('verify → verified: verified_at and last_checked_at set, every record ok', async () => {
    await s.advance(5);
    const now = new Date(await serviceNow(s)).toISOString();
    const v = await verify(s, key, d.id);
    expect(v.verified).toBe(true);
    expect(v.propagating).toBe(false);
    expect(v.status).toBe('verified');
    expect(v.verified_at).toBe(now);
    expect(v.last_checked_at).toBe(now);
    for (const f of v.findings) expect(f.status, f.kind).toBe('ok');
    for (const r of v.records) {
      expect(r.status, r.kind).toBe('ok');
      expect(r.observed_value).toBeUndefined();
    }
    const dns = await s.call('GET', `/v1/domains/${d.id}/dns`, { token: key });
    expect(dns.body.status).toBe('verified');
    expect(dns.body.records.every((r: { status: string }) => r.status === 'ok')).toBe(true);
  });

  it('a later passing check moves last_checked_at but not verified_at', async () => {
    const first = await getDomain(s, key, d.id);
    await s.advance(30);
    const v = await verify(s, key, d.id);
    expect(v.verified).toBe(true);
    expect(v.verified_at).toBe(first.verified_at);
    expect(Date.parse(v.last_checked_at!)).toBe(Date.parse(first.last_checked_at!) + 30_000);
  });
});

describe('partly published', () => {
  it('DMARC missing alone: still verified, the DMARC finding says missing', async () => {
    const d = await addDomain(s, key, uniqueName('nodmarc'));
    await publish(s, d.id, { kinds: REQUIRED_SENDING });
    const v = await verify(s, key, d.id);
    expect(v.verified).toBe(true);
    expect(v.status).toBe('verified');
    expect(finding(v, 'dmarc').status).toBe('missing');
    expect(record(v, 'dmarc')).toMatchObject({ status: 'missing', required: false });
  });

  it('a required record missing: not verified, not propagating; the others are ok', async () => {
    const d = await addDomain(s, key, uniqueName('nodkim'));
    await publish(s, d.id, { kinds: ['ownership', 'mail_from_mx', 'mail_from_spf', 'dmarc'] });
    const v = await verify(s, key, d.id);
    expect(v.verified).toBe(false);
    expect(v.propagating).toBe(false);
    expect(v.status).toBe('pending');
    expect(v.verified_at).toBeNull();
    expect(finding(v, 'dkim').status).toBe('missing');
    expect(finding(v, 'dkim').detail).toContain(record(d, 'dkim').host);
    expect(finding(v, 'ownership').status).toBe('ok');
  });
});

describe('propagating', () => {
  it('records published as propagating: propagating true, verified false, still pending', async () => {
    const d = await addDomain(s, key, uniqueName('prop'));
    await publish(s, d.id, { state: 'propagating' });
    const v = await verify(s, key, d.id);
    expect(v.verified).toBe(false);
    expect(v.propagating).toBe(true);
    expect(v.status).toBe('pending');
    expect(v.verified_at).toBeNull();
    expect(v.last_checked_at).toMatch(ISO_MS_Z);
    for (const kind of REQUIRED_SENDING) expect(finding(v, kind).status, kind).toBe('propagating');
    // Once visible, it passes.
    await publish(s, d.id, { state: 'visible' });
    const ok = await verify(s, key, d.id);
    expect(ok.verified).toBe(true);
    expect(ok.propagating).toBe(false);
  });

  it('one record propagating, the rest visible: propagating true', async () => {
    const d = await addDomain(s, key, uniqueName('prop1'));
    await publish(s, d.id);
    await publish(s, d.id, { kinds: ['dkim'], state: 'propagating' });
    const v = await verify(s, key, d.id);
    expect(v.verified).toBe(false);
    expect(v.propagating).toBe(true);
    expect(finding(v, 'dkim').status).toBe('propagating');
    expect(finding(v, 'ownership').status).toBe('ok');
  });

  it('one propagating and one missing: propagating false (something is not published at all)', async () => {
    const d = await addDomain(s, key, uniqueName('prop2'));
    await publish(s, d.id, { kinds: ['ownership', 'mail_from_mx', 'mail_from_spf'] });
    await publish(s, d.id, { kinds: ['ownership'], state: 'propagating' });
    const v = await verify(s, key, d.id);
    expect(finding(v, 'ownership').status).toBe('propagating');
    expect(finding(v, 'dkim').status).toBe('missing');
    expect(v.verified).toBe(false);
    expect(v.propagating).toBe(false);
  });
});

describe('mistakes in the zone', () => {
  let d: Domain;
  beforeAll(async () => {
    d = await addDomain(s, key, uniqueName('mistake'));
  });
  // These tests verify one domain many times: let the 6-per-minute verify window empty between them.
  beforeEach(() => s.advance(60));

  it('a wrong DKIM value → mismatch naming both the expected and the published value', async () => {
    await publish(s, d.id);
    const wrong = 'v=DKIM1; k=rsa; p=MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEAwrongwrongwrong';
    const put = await putDns(record(d, 'dkim').host, 'TXT', [wrong]);
    expect(put).toMatchObject({ host: record(d, 'dkim').host, type: 'TXT', values: [wrong], state: 'visible' });
    const v = await verify(s, key, d.id);
    expect(v.verified).toBe(false);
    expect(v.propagating).toBe(false);
    const f = finding(v, 'dkim');
    expect(f.status).toBe('mismatch');
    expect(f.expected).toBe(record(d, 'dkim').value);
    expect(f.observed).toBe(wrong);
    expect(f.detail).toContain(wrong);
    expect(f.detail).toContain(record(d, 'dkim').value);
    expect(record(v, 'dkim')).toMatchObject({
      status: 'mismatch',
      observed_value: wrong,
      value: record(d, 'dkim').value,
    });
  });

  it('DELETE /sandbox/dns removes a record → missing', async () => {
    await publish(s, d.id);
    expect((await verify(s, key, d.id)).verified).toBe(true);
    await deleteDns(record(d, 'mail_from_spf').host, 'TXT');
    const v = await verify(s, key, d.id);
    expect(finding(v, 'mail_from_spf').status).toBe('missing');
    // The MX at the same host is still there.
    expect(finding(v, 'mail_from_mx').status).toBe('ok');
    expect(v.verified).toBe(false);
  });

  it('an MX with the wrong priority or target is a mismatch; case and a trailing dot do not matter', async () => {
    await publish(s, d.id);
    const host = record(d, 'mail_from_mx').host;
    await putDns(host, 'MX', ['20 feedback.svc.test']);
    let v = await verify(s, key, d.id);
    expect(finding(v, 'mail_from_mx')).toMatchObject({ status: 'mismatch', expected: '10 feedback.svc.test' });
    expect(finding(v, 'mail_from_mx').observed).toContain('20 feedback.svc.test');
    await putDns(host, 'MX', ['10 mx.elsewhere.example']);
    v = await verify(s, key, d.id);
    expect(finding(v, 'mail_from_mx').status).toBe('mismatch');
    await putDns(host, 'MX', ['10 FEEDBACK.SVC.TEST.']);
    v = await verify(s, key, d.id);
    expect(finding(v, 'mail_from_mx').status).toBe('ok');
    expect(v.verified).toBe(true);
  });

  it('a TXT host with other values besides the expected one still matches; a near miss does not', async () => {
    await publish(s, d.id);
    const own = record(d, 'ownership');
    await putDns(own.host, 'TXT', ['google-site-verification=abc', own.value]);
    expect(finding(await verify(s, key, d.id), 'ownership').status).toBe('ok');
    await putDns(own.host, 'TXT', [`${own.value} `]);
    expect(finding(await verify(s, key, d.id), 'ownership').status).toBe('mismatch');
    await putDns(own.host, 'TXT', [own.value.toUpperCase()]);
    expect(finding(await verify(s, key, d.id), 'ownership').status).toBe('mismatch');
  });

  it('a mismatch shows the published values meant for the record, not unrelated ones at the same host', async () => {
    await publish(s, d.id);
    const own = record(d, 'ownership');
    await putDns(own.host, 'TXT', ['google-site-verification=abc', 'svc-verification=an-old-token']);
    let v = await verify(s, key, d.id);
    expect(finding(v, 'ownership')).toMatchObject({
      status: 'mismatch',
      observed: 'svc-verification=an-old-token',
      expected: own.value,
    });
    const spf = record(d, 'mail_from_spf');
    await putDns(spf.host, 'TXT', ['unrelated=1', 'v=spf1 include:other.example ~all']);
    v = await verify(s, key, d.id);
    expect(finding(v, 'mail_from_spf')).toMatchObject({
      status: 'mismatch',
      observed: 'v=spf1 include:other.example ~all',
    });
    expect(record(v, 'mail_from_spf').observed_value).toBe('v=spf1 include:other.example ~all');
  });

  it('a tracking CNAME: wrong target is a mismatch; case and a trailing dot do not matter', async () => {
    const p = await s.call('PATCH', `/v1/domains/${d.id}`, { token: key, body: { tracking_host: `click.${d.name}` } });
    expect(p.status, p.text).toBe(200);
    await publish(s, d.id);
    await putDns(`click.${d.name}`, 'CNAME', ['track.other-provider.example']);
    let v = await verify(s, key, d.id);
    expect(finding(v, 'tracking')).toMatchObject({
      status: 'mismatch',
      expected: 'track.svc.test',
      observed: 'track.other-provider.example',
    });
    await putDns(`click.${d.name}`, 'CNAME', ['Track.SVC.test.']);
    v = await verify(s, key, d.id);
    expect(finding(v, 'tracking').status).toBe('ok');
    expect(v.verified).toBe(true);
  });
});

describe('sandbox zone routes', () => {
  it('need the admin token', async () => {
    expect((await s.call('PUT', '/sandbox/dns', { body: { host: 'x.test', type: 'TXT', values: ['a'] } })).status).toBe(
      401,
    );
    expect(
      (await s.call('PUT', '/sandbox/dns', { token: key, body: { host: 'x.test', type: 'TXT', values: ['a'] } }))
        .status,
    ).toBe(401);
    expect((await s.call('POST', `/sandbox/domains/${s.seed!.domain_id}/publish`, { body: {} })).status).toBe(401);
  });

  it('publish of an unknown domain is 404', async () => {
    const r = await s.admin('POST', '/sandbox/domains/dom_000000000000000000000000/publish', {});
    expect(r.status, r.text).toBe(404);
  });
});
