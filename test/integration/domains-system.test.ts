// Verification against real DNS (`svc serve --dns system --dns-server …`, docs/api.md#domains, how a
// record matches): the server's resolver queries loopback DNS responders (test/helpers/dns-server.ts).
import dgram from 'node:dgram';
import { promises as nodeDns } from 'node:dns';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startDnsServer, txtCharacterStrings, type DnsServer } from '../helpers/dns-server.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { addDomain, finding, record, serveRecords, uniqueName, verify, type Domain } from './domains-helpers.js';

let dnsA: DnsServer;
let dnsB: DnsServer;
beforeAll(async () => {
  dnsA = await startDnsServer();
  dnsB = await startDnsServer();
});
afterAll(async () => {
  await dnsA?.close();
  await dnsB?.close();
});

describe('the test DNS responder', () => {
  it('answers Node’s resolver: TXT split into 255-byte strings, MX, CNAME, NXDOMAIN and NODATA', async () => {
    const r = new nodeDns.Resolver({ timeout: 2000, tries: 1 });
    r.setServers([dnsA.address]);
    const long = `v=DKIM1; k=rsa; p=${'Q'.repeat(600)}`;
    dnsA.set('self-check.test', 'TXT', [long, 'short']);
    dnsA.set('self-check.test', 'MX', ['10 mx.self-check.test']);
    dnsA.set('www.self-check.test', 'CNAME', ['target.self-check.test']);
    const txt = await r.resolveTxt('self-check.test');
    expect(txt).toHaveLength(2);
    const chunks = txt.find((c) => c.join('') === long)!;
    expect(chunks.map((c) => Buffer.byteLength(c))).toEqual([255, 255, long.length - 510]);
    expect(txt.find((c) => c.join('') === 'short')).toEqual(['short']);
    // Node 24's resolver adds `type: 'MX'` to each answer; priority and exchange are what count.
    expect(await r.resolveMx('self-check.test')).toEqual([
      expect.objectContaining({ priority: 10, exchange: 'mx.self-check.test' }),
    ]);
    expect(await r.resolveCname('www.self-check.test')).toEqual(['target.self-check.test']);
    await expect(r.resolveTxt('unknown.self-check.test')).rejects.toMatchObject({ code: 'ENOTFOUND' });
    await expect(r.resolveCname('self-check.test')).rejects.toMatchObject({ code: 'ENODATA' });
    dnsA.remove('self-check.test', 'TXT');
    await expect(r.resolveTxt('self-check.test')).rejects.toMatchObject({ code: 'ENODATA' });
    dnsA.remove('self-check.test', 'MX');
    await expect(r.resolveMx('self-check.test')).rejects.toMatchObject({ code: 'ENOTFOUND' });
  });
});

describe('--dns system with one resolver', () => {
  let s: TestServer;
  let key: string;
  let d: Domain;
  beforeAll(async () => {
    s = await startTestServer({ dns: 'system', dnsServer: [dnsA.address] });
    key = s.seed!.api_key_test;
    d = await addDomain(s, key, uniqueName('real'));
  });
  afterAll(() => s?.close());
  // One domain is verified many times: let the 6-per-minute window empty between tests.
  beforeEach(() => s.advance(60));

  it('nothing served: every record missing', async () => {
    const v = await verify(s, key, d.id);
    expect(v.verified).toBe(false);
    expect(v.propagating).toBe(false);
    for (const f of v.findings) expect(f.status, f.kind).toBe('missing');
  });

  it('the expected records served: verified (the DKIM record travels as several 255-byte strings)', async () => {
    const dkim = record(d, 'dkim');
    expect(Buffer.byteLength(dkim.value)).toBeGreaterThan(255);
    expect(txtCharacterStrings(dkim.value).length).toBeGreaterThanOrEqual(2);
    serveRecords(dnsA, d);
    const before = dnsA.queries.length;
    const v = await verify(s, key, d.id);
    expect(v.verified, JSON.stringify(v.findings)).toBe(true);
    expect(v.status).toBe('verified');
    expect(v.verified_at).not.toBeNull();
    for (const f of v.findings) expect(f.status, f.kind).toBe('ok');
    // The check really asked the responder.
    const asked = dnsA.queries.slice(before);
    expect(asked).toContain(`TXT ${dkim.host}`);
    expect(asked).toContain(`MX ${record(d, 'mail_from_mx').host}`);
  });

  it('a wrong DKIM value: mismatch with the expected and the observed value', async () => {
    const dkim = record(d, 'dkim');
    const wrong = `v=DKIM1; k=rsa; p=${'B'.repeat(300)}`;
    dnsA.set(dkim.host, 'TXT', [wrong]);
    const v = await verify(s, key, d.id);
    expect(v.verified).toBe(false);
    const f = finding(v, 'dkim');
    expect(f.status).toBe('mismatch');
    expect(f.expected).toBe(dkim.value);
    expect(f.observed).toBe(wrong);
    expect(f.detail).toContain(wrong);
    expect(v.status).toBe('degraded'); // it was verified: a later check finding a mismatch degrades it
    serveRecords(dnsA, d, ['dkim']);
    expect((await verify(s, key, d.id)).verified).toBe(true);
  });

  it('a removed record: missing (NODATA at a known name, NXDOMAIN at an unknown one)', async () => {
    serveRecords(dnsA, d);
    dnsA.remove(record(d, 'mail_from_spf').host, 'TXT'); // the MX stays at that name: NODATA
    dnsA.remove(record(d, 'ownership').host, 'TXT'); // nothing left at that name: NXDOMAIN
    const v = await verify(s, key, d.id);
    expect(finding(v, 'mail_from_spf').status).toBe('missing');
    expect(finding(v, 'ownership').status).toBe('missing');
    expect(finding(v, 'mail_from_mx').status).toBe('ok');
    expect(v.verified).toBe(false);
    expect(v.propagating).toBe(false);
  });

  it('MX and CNAME targets match whatever their case or trailing dot', async () => {
    const p = await s.call('PATCH', `/v1/domains/${d.id}`, { token: key, body: { tracking_host: `t.${d.name}` } });
    expect(p.status, p.text).toBe(200);
    d = p.body;
    serveRecords(dnsA, d);
    dnsA.set(record(d, 'mail_from_mx').host, 'MX', ['10 Feedback.SVC.test.']);
    dnsA.set(`t.${d.name}`, 'CNAME', ['TRACK.svc.test.']);
    const v = await verify(s, key, d.id);
    expect(finding(v, 'tracking').status).toBe('ok');
    expect(finding(v, 'mail_from_mx').status).toBe('ok');
    expect(v.verified).toBe(true);
    dnsA.set(`t.${d.name}`, 'CNAME', ['track.elsewhere.example']);
    await s.advance(60);
    const bad = await verify(s, key, d.id);
    expect(finding(bad, 'tracking')).toMatchObject({ status: 'mismatch', observed: 'track.elsewhere.example' });
  });
});

describe('--dns system with two resolvers', () => {
  let s: TestServer;
  let key: string;
  beforeAll(async () => {
    s = await startTestServer({ dns: 'system', dnsServer: [dnsA.address, dnsB.address] });
    key = s.seed!.api_key_test;
  });
  afterAll(() => s?.close());

  it('one has a record and the other not yet: propagating; once both have it: verified', async () => {
    const d = await addDomain(s, key, uniqueName('twoviews'));
    serveRecords(dnsA, d);
    serveRecords(dnsB, d, ['ownership', 'mail_from_mx', 'mail_from_spf', 'dmarc']); // B lacks the DKIM record
    const bBefore = dnsB.queries.length;
    const v = await verify(s, key, d.id);
    expect(v.verified).toBe(false);
    expect(v.propagating).toBe(true);
    expect(v.status).toBe('pending');
    expect(finding(v, 'dkim').status).toBe('propagating');
    expect(finding(v, 'dkim').detail).toMatch(/1 of 2/);
    expect(finding(v, 'ownership').status).toBe('ok');
    expect(dnsB.queries.slice(bBefore)).toContain(`TXT ${record(d, 'dkim').host}`);

    serveRecords(dnsB, d, ['dkim']);
    const ok = await verify(s, key, d.id);
    expect(ok.verified).toBe(true);
    expect(ok.propagating).toBe(false);
  });

  it('both agree a record is absent: missing, not propagating', async () => {
    const d = await addDomain(s, key, uniqueName('bothmissing'));
    serveRecords(dnsA, d, ['ownership', 'mail_from_mx', 'mail_from_spf']);
    serveRecords(dnsB, d, ['ownership', 'mail_from_mx', 'mail_from_spf']);
    const v = await verify(s, key, d.id);
    expect(finding(v, 'dkim').status).toBe('missing');
    expect(v.propagating).toBe(false);
  });

  it('one serves a wrong value, the other none: the mismatch is reported', async () => {
    const d = await addDomain(s, key, uniqueName('wrongone'));
    serveRecords(dnsA, d);
    serveRecords(dnsB, d);
    const wrong = 'svc-verification=not-the-token';
    dnsA.set(record(d, 'ownership').host, 'TXT', [wrong]);
    dnsB.remove(record(d, 'ownership').host, 'TXT');
    const v = await verify(s, key, d.id);
    expect(finding(v, 'ownership')).toMatchObject({
      status: 'mismatch',
      observed: wrong,
      expected: record(d, 'ownership').value,
    });
    expect(v.verified).toBe(false);
    expect(v.propagating).toBe(false);
  });
});

describe('--dns system with a resolver that does not work', () => {
  it('a resolver that refuses: every record missing, the detail says the lookup failed', async () => {
    const sock = dgram.createSocket('udp4');
    await new Promise<void>((resolve) => sock.bind(0, '127.0.0.1', () => resolve()));
    const address = `127.0.0.1:${sock.address().port}`;
    await new Promise<void>((resolve) => sock.close(() => resolve())); // nothing listens there any more
    const s = await startTestServer({ dns: 'system', dnsServer: [address] });
    try {
      const d = await addDomain(s, s.seed!.api_key_test, uniqueName('refused'));
      const v = await verify(s, s.seed!.api_key_test, d.id);
      expect(v.verified).toBe(false);
      expect(v.propagating).toBe(false);
      for (const f of v.findings) {
        expect(f.status, f.kind).toBe('missing');
        expect(f.detail, f.kind).toMatch(/fail/i);
      }
    } finally {
      await s.close();
    }
  });

  it('a resolver that never answers: each lookup gives up at the timeout, and the check ends instead of hanging', async () => {
    const silent = dgram.createSocket('udp4');
    let queries = 0;
    silent.on('message', () => queries++); // swallows every query
    await new Promise<void>((resolve) => silent.bind(0, '127.0.0.1', () => resolve()));
    // The timeout is the server's (5 s unless told): short here, so the test need not wait it out.
    const s = await startTestServer({
      dns: 'system',
      dnsServer: [`127.0.0.1:${silent.address().port}`],
      dnsTimeoutMs: 200,
    });
    try {
      const d = await addDomain(s, s.seed!.api_key_test, uniqueName('silent'));
      const v = await verify(s, s.seed!.api_key_test, d.id);
      expect(queries).toBeGreaterThan(0);
      expect(v.verified).toBe(false);
      for (const f of v.findings) {
        expect(f.status, f.kind).toBe('missing');
        // Given up for want of an answer: the finding names the timeout.
        expect(f.detail, f.kind).toMatch(/failed \(ETIMEOUT\)/);
      }
      expect(v.last_checked_at).not.toBeNull();
    } finally {
      await s.close();
      await new Promise<void>((resolve) => silent.close(() => resolve()));
    }
  });
});
