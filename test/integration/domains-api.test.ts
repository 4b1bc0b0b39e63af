// Sending domains through /v1/domains (docs/api.md#domains, with the scopes,
// credential kinds, roles and pagination of docs/api.md): the seven operations,
// name rules, the record sets of each purpose, PATCH, DELETE, tenancy, scopes, roles and the verify limit.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.js';
import {
  DOMAIN_ID,
  FEEDBACK_HOST,
  ISO_MS_Z,
  SPF_INCLUDE,
  TRACKING_TARGET,
  addDomain,
  createKey,
  dkimPublicKey,
  errorPaths,
  expectProblem,
  getDomain,
  newTenant,
  publish,
  record,
  seedTenant,
  serviceNow,
  sessionOf,
  uniqueName,
  verify,
  type Domain,
  type Tenant,
} from './domains-helpers.js';

let s: TestServer;
let key: string; // the seed's test key: every scope
let owner: Tenant;

beforeAll(async () => {
  s = await startTestServer();
  key = s.seed!.api_key_test;
  owner = seedTenant(s);
});
afterAll(() => s.close());

describe('POST /v1/domains: a sending domain', () => {
  let d: Domain;
  let name: string;
  beforeAll(async () => {
    name = uniqueName('send');
    d = await addDomain(s, key, { name });
  });

  it('answers 201 with a pending Domain and the records to publish', async () => {
    expect(d.id).toMatch(DOMAIN_ID);
    expect(d.name).toBe(name);
    expect(d.status).toBe('pending');
    expect(d.purpose).toEqual(['sending']);
    expect(d.mail_from_subdomain).toBe('bounces');
    expect(d.tracking_host).toBeNull();
    expect(d.created_at).toMatch(ISO_MS_Z);
    expect(Date.parse(d.created_at)).toBe(await serviceNow(s));
    expect(d.verified_at).toBeNull();
    expect(d.last_checked_at).toBeNull();
    expect(d.records.map((r) => r.kind)).toEqual(['ownership', 'dkim', 'mail_from_mx', 'mail_from_spf', 'dmarc']);
    for (const r of d.records) expect(r.status, r.kind).toBe('pending');
  });

  it('lists an ownership TXT record with a token', () => {
    const r = record(d, 'ownership');
    expect(r).toMatchObject({ type: 'TXT', host: `_svc-verification.${name}`, required: true });
    expect(r.value).toMatch(/^svc-verification=[A-Za-z0-9]{16,}$/);
  });

  it('lists a DKIM TXT record carrying a real 2048-bit RSA public key (longer than one 255-byte TXT string)', () => {
    const r = record(d, 'dkim');
    expect(r.type).toBe('TXT');
    expect(r.required).toBe(true);
    expect(r.host).toMatch(new RegExp(`^[a-z0-9-]+\\._domainkey\\.${name.replace(/\./g, '\\.')}$`));
    const pub = dkimPublicKey(r.value);
    expect(pub.asymmetricKeyType).toBe('rsa');
    expect(pub.asymmetricKeyDetails?.modulusLength).toBe(2048);
    expect(Buffer.byteLength(r.value)).toBeGreaterThan(255);
  });

  it('lists the custom MAIL FROM records: MX priority 10 to the feedback host, and SPF', () => {
    expect(record(d, 'mail_from_mx')).toMatchObject({
      type: 'MX',
      host: `bounces.${name}`,
      value: FEEDBACK_HOST,
      priority: 10,
      required: true,
    });
    expect(record(d, 'mail_from_spf')).toMatchObject({
      type: 'TXT',
      host: `bounces.${name}`,
      value: SPF_INCLUDE,
      required: true,
    });
  });

  it('recommends DMARC without requiring it, and says so', () => {
    const r = record(d, 'dmarc');
    expect(r).toMatchObject({ type: 'TXT', host: `_dmarc.${name}`, value: 'v=DMARC1; p=none;', required: false });
    expect(r.note).toBeTypeOf('string');
  });

  it('has no tracking record until a tracking host is set', () => {
    expect(d.records.some((r) => r.kind === 'tracking')).toBe(false);
  });

  it('GET /v1/domains/{id} returns the same domain', async () => {
    expect(await getDomain(s, key, d.id)).toEqual(d);
  });

  it('gives every domain its own DKIM key and ownership token', async () => {
    const other = await addDomain(s, key, uniqueName('other'));
    expect(record(other, 'dkim').value).not.toBe(record(d, 'dkim').value);
    expect(record(other, 'ownership').value).not.toBe(record(d, 'ownership').value);
  });
});

describe('POST /v1/domains: purpose', () => {
  it.each([
    ['omitted', {}],
    ['null', { purpose: null }],
    ['["sending"]', { purpose: ['sending'] }],
    ['a duplicate', { purpose: ['sending', 'sending'] }],
  ])('%s means ["sending"]', async (_label, extra) => {
    const d = await addDomain(s, key, { name: uniqueName('p'), ...extra });
    expect(d.purpose).toEqual(['sending']);
    expect(d.records.map((r) => r.kind)).toEqual(['ownership', 'dkim', 'mail_from_mx', 'mail_from_spf', 'dmarc']);
  });

  it('mailbox: ownership, DKIM, two MX, SPF at the apex, autodiscover, TLS-RPT and MTA-STS records', async () => {
    const name = uniqueName('box');
    const d = await addDomain(s, key, { name, purpose: ['mailbox'] });
    expect(d.purpose).toEqual(['mailbox']);
    expect(d.records.map((r) => r.kind)).toEqual([
      'ownership',
      'dkim',
      'mx',
      'mx',
      'spf',
      'autodiscover',
      'tls_rpt',
      'mta_sts',
    ]);
    expect(record(d, 'ownership')).toMatchObject({ type: 'TXT', host: `_svc-verification.${name}`, required: true });
    expect(dkimPublicKey(record(d, 'dkim').value).asymmetricKeyDetails?.modulusLength).toBe(2048);
    const mx = d.records.filter((r) => r.kind === 'mx');
    for (const r of mx) expect(r).toMatchObject({ type: 'MX', host: name, required: true });
    expect(new Set(mx.map((r) => r.value)).size).toBe(2);
    for (const r of mx) expect(r.value).toMatch(/\.svc\.test$/);
    expect(mx.every((r) => Number.isInteger(r.priority))).toBe(true);
    expect(record(d, 'spf')).toMatchObject({ type: 'TXT', host: name, value: SPF_INCLUDE, required: true });
    expect(record(d, 'autodiscover')).toMatchObject({ type: 'CNAME', host: `autodiscover.${name}` });
    expect(record(d, 'tls_rpt')).toMatchObject({ type: 'TXT', host: `_smtp._tls.${name}` });
    expect(record(d, 'tls_rpt').value).toMatch(/^v=TLSRPTv1;/);
    expect(record(d, 'mta_sts')).toMatchObject({ type: 'TXT', host: `_mta-sts.${name}` });
    expect(record(d, 'mta_sts').value).toMatch(/^v=STSv1;/);
    // Hosted mail has no custom MAIL FROM.
    expect(d.records.some((r) => r.kind.startsWith('mail_from'))).toBe(false);
  });

  it('sending and mailbox together: both record sets, one ownership and one DKIM record', async () => {
    const d = await addDomain(s, key, { name: uniqueName('both'), purpose: ['sending', 'mailbox'] });
    expect(d.purpose).toEqual(['sending', 'mailbox']);
    const kinds = d.records.map((r) => r.kind);
    for (const k of [
      'ownership',
      'dkim',
      'mail_from_mx',
      'mail_from_spf',
      'dmarc',
      'mx',
      'spf',
      'autodiscover',
      'tls_rpt',
      'mta_sts',
    ]) {
      expect(kinds).toContain(k);
    }
    expect(kinds.filter((k) => k === 'dkim')).toHaveLength(1);
    expect(kinds.filter((k) => k === 'ownership')).toHaveLength(1);
  });

  it('refuses an unknown purpose or an empty list with 422, and a non-array with 400', async () => {
    const bad = await s.call('POST', '/v1/domains', {
      token: key,
      body: { name: uniqueName(), purpose: ['marketing'] },
    });
    expectProblem(bad, 422, 'validation_failed');
    expect(errorPaths(bad)[0]).toMatch(/^purpose/);
    expectProblem(
      await s.call('POST', '/v1/domains', { token: key, body: { name: uniqueName(), purpose: [] } }),
      422,
      'validation_failed',
    );
    expectProblem(
      await s.call('POST', '/v1/domains', { token: key, body: { name: uniqueName(), purpose: 'sending' } }),
      400,
      'invalid_request',
    );
  });
});

describe('POST /v1/domains: the name', () => {
  it.each([
    ['uppercase is lowercased', 'Shop.Example-Upper.TEST', 'shop.example-upper.test'],
    ['an IDN is lowercased and stored as punycode', 'Bücher.test', 'xn--bcher-kva.test'],
    ['a name under .test is registrable', 'foo.test', 'foo.test'],
    ['a subdomain is accepted', 'mail.sub-accept.test', 'mail.sub-accept.test'],
    ['a registrable name under a multi-label public suffix', 'shop-example.co.uk', 'shop-example.co.uk'],
  ])('%s: %s → %s', async (_label, input, stored) => {
    const d = await addDomain(s, key, input);
    expect(d.name).toBe(stored);
    expect(record(d, 'dkim').host.endsWith(`._domainkey.${stored}`)).toBe(true);
    expect((await getDomain(s, key, d.id)).name).toBe(stored);
  });

  it.each([
    ['an IPv4 address', '192.0.2.10'],
    ['an IPv6 address', '2001:db8::1'],
    ['a bracketed IPv6 address', '[2001:db8::1]'],
    ['a bare TLD', 'com'],
    ['a bare multi-label public suffix', 'co.uk'],
    ['a single label', 'localhost'],
    ['an empty name', ''],
    ['an empty label', 'foo..test'],
    ['a label starting with a hyphen', '-foo.test'],
    ['a label ending with a hyphen', 'foo-.test'],
    ['an underscore', 'foo_bar.test'],
    ['a space', 'exa mple.test'],
    ['a label longer than 63 characters', `${'a'.repeat(64)}.test`],
    ['a URL', 'https://foo.test/'],
    ['an email address', 'user@foo.test'],
  ])('refuses %s (%j) with 422 on `name`', async (_label, name) => {
    const r = await s.call('POST', '/v1/domains', { token: key, body: { name } });
    expectProblem(r, 422, 'validation_failed');
    expect(errorPaths(r)).toContain('name');
  });

  it('refuses a name already in the workspace with 422 domain_exists, whatever its case', async () => {
    const name = uniqueName('dupe');
    await addDomain(s, key, name);
    expectProblem(await s.call('POST', '/v1/domains', { token: key, body: { name } }), 422, 'domain_exists');
    expectProblem(
      await s.call('POST', '/v1/domains', { token: key, body: { name: name.toUpperCase() } }),
      422,
      'domain_exists',
    );
    // The seeded domain too.
    expectProblem(
      await s.call('POST', '/v1/domains', { token: key, body: { name: 'example.test' } }),
      422,
      'domain_exists',
    );
  });

  it('an IDN and its punycode form are the same domain', async () => {
    const d = await addDomain(s, key, 'straße-idn.test');
    expect(d.name).toMatch(/^xn--/);
    expectProblem(await s.call('POST', '/v1/domains', { token: key, body: { name: d.name } }), 422, 'domain_exists');
    expectProblem(
      await s.call('POST', '/v1/domains', { token: key, body: { name: 'STRASSE-IDN.test'.replace('SS', 'ß') } }),
      422,
      'domain_exists',
    );
  });

  it('lets another workspace add the same name, and the name be added again once deleted', async () => {
    const name = uniqueName('shared');
    const mine = await addDomain(s, key, name);
    const other = await newTenant(s, 'samename');
    const theirs = await addDomain(s, await sessionOf(s, other), name);
    expect(theirs.id).not.toBe(mine.id);
    expect((await s.call('DELETE', `/v1/domains/${mine.id}`, { token: key })).status).toBe(204);
    const again = await addDomain(s, key, name);
    expect(again.id).not.toBe(mine.id);
    expect(again.status).toBe('pending');
  });

  it('answers 400 for a missing name, a wrong type or an unknown field', async () => {
    const missing = await s.call('POST', '/v1/domains', { token: key, body: {} });
    expectProblem(missing, 400, 'invalid_request');
    expect(errorPaths(missing)).toContain('name');
    expectProblem(await s.call('POST', '/v1/domains', { token: key, body: { name: 42 } }), 400, 'invalid_request');
    const unknown = await s.call('POST', '/v1/domains', { token: key, body: { name: uniqueName(), nmae: 'x' } });
    expectProblem(unknown, 400, 'invalid_request');
    expect(errorPaths(unknown)).toContain('nmae');
  });
});

describe('GET /v1/domains and pagination', () => {
  let tenant: Tenant;
  let ids: string[]; // creation order
  beforeAll(async () => {
    tenant = await newTenant(s, 'pager');
    ids = [];
    for (let i = 0; i < 3; i++) {
      ids.push((await addDomain(s, await sessionOf(s, tenant), uniqueName(`page${i}`))).id);
      await s.advance(1); // distinct created_at, so "newest first" is observable
    }
  });

  it('lists the workspace’s domains, newest first, as {data, has_more}', async () => {
    const r = await s.call('GET', '/v1/domains', { token: await sessionOf(s, tenant) });
    expect(r.status, r.text).toBe(200);
    expect(Object.keys(r.body).sort()).toEqual(['data', 'has_more']);
    expect(r.body.data.map((d: Domain) => d.id)).toEqual([...ids].reverse());
    expect(r.body.has_more).toBe(false);
    expect(r.body.data[0].records.length).toBeGreaterThan(0);
  });

  it('pages with limit and after', async () => {
    const token = await sessionOf(s, tenant);
    const p1 = await s.call('GET', '/v1/domains?limit=2', { token });
    expect(p1.status, p1.text).toBe(200);
    expect(p1.body.data.map((d: Domain) => d.id)).toEqual([ids[2], ids[1]]);
    expect(p1.body.has_more).toBe(true);
    const p2 = await s.call('GET', `/v1/domains?limit=2&after=${ids[1]}`, { token });
    expect(p2.status, p2.text).toBe(200);
    expect(p2.body.data.map((d: Domain) => d.id)).toEqual([ids[0]]);
    expect(p2.body.has_more).toBe(false);
    const exact = await s.call('GET', '/v1/domains?limit=3', { token });
    expect(exact.body.data).toHaveLength(3);
    expect(exact.body.has_more).toBe(false);
    // The seed's domain is another workspace's: as a cursor it is as unknown as an id that never existed.
    for (const after of [s.seed!.domain_id, 'dom_000000000000000000000000']) {
      const r = await s.call('GET', `/v1/domains?after=${after}`, { token });
      expectProblem(r, 400, 'invalid_request');
      expect(r.body.errors[0]).toMatchObject({ path: 'after', code: 'not_found' });
    }
  });

  it.each(['limit=0', 'limit=101', 'limit=abc', 'limit=2.5'])('refuses %s with 400 invalid_request', async (q) => {
    expectProblem(
      await s.call('GET', `/v1/domains?${q}`, { token: await sessionOf(s, tenant) }),
      400,
      'invalid_request',
    );
  });

  it('shows no other workspace’s domains', async () => {
    const r = await s.call('GET', '/v1/domains?limit=100', { token: key });
    expect(r.status).toBe(200);
    const mine = r.body.data.map((d: Domain) => d.id);
    for (const id of ids) expect(mine).not.toContain(id);
    expect(mine).toContain(s.seed!.domain_id);
  });
});

describe('GET /v1/domains/{id}/dns', () => {
  it('returns {domain, status, last_checked_at, records}, updated by a check', async () => {
    const d = await addDomain(s, key, uniqueName('dns'));
    const before = await s.call('GET', `/v1/domains/${d.id}/dns`, { token: key });
    expect(before.status, before.text).toBe(200);
    expect(before.body).toEqual({ domain: d.name, status: 'pending', last_checked_at: null, records: d.records });

    await publish(s, d.id, { kinds: ['ownership', 'mail_from_mx', 'mail_from_spf', 'dmarc'] });
    await verify(s, key, d.id);
    const after = await s.call('GET', `/v1/domains/${d.id}/dns`, { token: key });
    expect(after.status).toBe(200);
    expect(after.body.domain).toBe(d.name);
    expect(after.body.status).toBe('pending');
    expect(after.body.last_checked_at).toBe(new Date(await serviceNow(s)).toISOString());
    const statuses = Object.fromEntries(after.body.records.map((r: Domain['records'][number]) => [r.kind, r.status]));
    expect(statuses).toEqual({
      ownership: 'ok',
      dkim: 'missing',
      mail_from_mx: 'ok',
      mail_from_spf: 'ok',
      dmarc: 'ok',
    });
  });

  it('works for the seeded, verified domain', async () => {
    const r = await s.call('GET', `/v1/domains/${s.seed!.domain_id}/dns`, { token: key });
    expect(r.status, r.text).toBe(200);
    expect(r.body.domain).toBe('example.test');
    expect(r.body.status).toBe('verified');
    expect(r.body.last_checked_at).toMatch(ISO_MS_Z);
    expect(
      r.body.records
        .filter((x: { required: boolean }) => x.required)
        .every((x: { status: string }) => x.status === 'ok'),
    ).toBe(true);
  });
});

describe('PATCH /v1/domains/{id}', () => {
  it('changes the MAIL FROM subdomain: new records, back to pending, verified_at kept, verify needed again', async () => {
    const d = await addDomain(s, key, uniqueName('patch'));
    await publish(s, d.id);
    const v = await verify(s, key, d.id);
    expect(v.status).toBe('verified');
    const verifiedAt = v.verified_at;
    expect(verifiedAt).toMatch(ISO_MS_Z);

    await s.advance(10);
    const r = await s.call('PATCH', `/v1/domains/${d.id}`, { token: key, body: { mail_from_subdomain: 'Mail' } });
    expect(r.status, r.text).toBe(200);
    expect(r.body.records_changed).toBe(true);
    expect(r.body.status).toBe('pending');
    expect(r.body.mail_from_subdomain).toBe('mail');
    expect(r.body.verified_at).toBe(verifiedAt);
    expect(record(r.body, 'mail_from_mx').host).toBe(`mail.${d.name}`);
    expect(record(r.body, 'mail_from_spf').host).toBe(`mail.${d.name}`);
    for (const rec of r.body.records as Domain['records']) expect(rec.status, rec.kind).toBe('pending');
    // The DKIM key and ownership token stay.
    expect(record(r.body, 'dkim').value).toBe(record(d, 'dkim').value);
    expect(record(r.body, 'ownership').value).toBe(record(d, 'ownership').value);

    const got = await getDomain(s, key, d.id);
    expect(got.status).toBe('pending');
    expect(got.mail_from_subdomain).toBe('mail');

    // The old MAIL FROM records no longer satisfy the check; publishing the new set does.
    const stale = await verify(s, key, d.id);
    expect(stale.verified).toBe(false);
    expect(stale.findings.find((f) => f.kind === 'mail_from_mx')!.status).toBe('missing');
    expect(stale.verified_at).toBe(verifiedAt);
    await publish(s, d.id);
    const again = await verify(s, key, d.id);
    expect(again.verified).toBe(true);
    expect(again.status).toBe('verified');
    expect(again.verified_at).toBe(verifiedAt); // the first pass is what verified_at records
  });

  it('an empty PATCH still sends a verified domain back to pending', async () => {
    const d = await addDomain(s, key, uniqueName('empty'));
    await publish(s, d.id);
    expect((await verify(s, key, d.id)).status).toBe('verified');
    const r = await s.call('PATCH', `/v1/domains/${d.id}`, { token: key, body: {} });
    expect(r.status, r.text).toBe(200);
    expect(r.body.records_changed).toBe(true);
    expect(r.body.status).toBe('pending');
    expect(r.body.verified_at).not.toBeNull();
    expect((await getDomain(s, key, d.id)).status).toBe('pending');
  });

  it('a tracking host adds a required tracking CNAME record', async () => {
    const d = await addDomain(s, key, uniqueName('track'));
    const r = await s.call('PATCH', `/v1/domains/${d.id}`, { token: key, body: { tracking_host: `Links.${d.name}` } });
    expect(r.status, r.text).toBe(200);
    expect(r.body.tracking_host).toBe(`links.${d.name}`);
    expect(record(r.body, 'tracking')).toMatchObject({
      type: 'CNAME',
      host: `links.${d.name}`,
      value: TRACKING_TARGET,
      required: true,
      status: 'pending',
    });
    // Publishing everything but the tracking CNAME is not enough any more.
    await publish(s, d.id, { kinds: ['ownership', 'dkim', 'mail_from_mx', 'mail_from_spf', 'dmarc'] });
    const v = await verify(s, key, d.id);
    expect(v.verified).toBe(false);
    expect(v.findings.find((f) => f.kind === 'tracking')!.status).toBe('missing');
    await publish(s, d.id, { kinds: ['tracking'] });
    expect((await verify(s, key, d.id)).verified).toBe(true);
    // A later PATCH keeps the tracking host.
    const p = await s.call('PATCH', `/v1/domains/${d.id}`, { token: key, body: { mail_from_subdomain: 'bnc' } });
    expect(p.body.tracking_host).toBe(`links.${d.name}`);
    expect(record(p.body, 'tracking').host).toBe(`links.${d.name}`);
  });

  it('changing purpose regenerates the record set', async () => {
    const d = await addDomain(s, key, uniqueName('purp'));
    const r = await s.call('PATCH', `/v1/domains/${d.id}`, { token: key, body: { purpose: ['mailbox'] } });
    expect(r.status, r.text).toBe(200);
    expect(r.body.purpose).toEqual(['mailbox']);
    expect(r.body.records.map((x: { kind: string }) => x.kind)).toEqual([
      'ownership',
      'dkim',
      'mx',
      'mx',
      'spf',
      'autodiscover',
      'tls_rpt',
      'mta_sts',
    ]);
    expect(record(r.body, 'dkim').value).toBe(record(d, 'dkim').value);
  });

  describe('refuses bad values with 422 and leaves the domain unchanged', () => {
    let d: Domain;
    beforeAll(async () => {
      d = await addDomain(s, key, uniqueName('bad'));
      await publish(s, d.id);
      expect((await verify(s, key, d.id)).status).toBe('verified');
    });
    const cases: [string, () => Record<string, unknown>, string][] = [
      ['mail_from_subdomain of two labels', () => ({ mail_from_subdomain: 'a.b' }), 'mail_from_subdomain'],
      ['mail_from_subdomain with an underscore', () => ({ mail_from_subdomain: 'bad_label' }), 'mail_from_subdomain'],
      ['mail_from_subdomain empty', () => ({ mail_from_subdomain: '' }), 'mail_from_subdomain'],
      ['mail_from_subdomain starting with a hyphen', () => ({ mail_from_subdomain: '-x' }), 'mail_from_subdomain'],
      ['tracking_host in another domain', () => ({ tracking_host: 'links.elsewhere.test' }), 'tracking_host'],
      ['tracking_host that only ends with the name', () => ({ tracking_host: `links-${d.name}` }), 'tracking_host'],
      ['tracking_host equal to the domain itself', () => ({ tracking_host: d.name }), 'tracking_host'],
      ['tracking_host with a bad label', () => ({ tracking_host: `li_nks.${d.name}` }), 'tracking_host'],
      ['an unknown purpose', () => ({ purpose: ['bulk'] }), 'purpose'],
    ];
    it.each(cases)('%s', async (_label, body, path) => {
      const r = await s.call('PATCH', `/v1/domains/${d.id}`, { token: key, body: body() });
      expectProblem(r, 422, 'validation_failed');
      expect(errorPaths(r).some((p) => p.startsWith(path))).toBe(true);
      const now = await getDomain(s, key, d.id);
      expect(now.status).toBe('verified');
      expect(now.mail_from_subdomain).toBe('bounces');
      expect(now.tracking_host).toBeNull();
    });

    it('an unknown field is a 400', async () => {
      const r = await s.call('PATCH', `/v1/domains/${d.id}`, { token: key, body: { name: 'other.test' } });
      expectProblem(r, 400, 'invalid_request');
      expect((await getDomain(s, key, d.id)).name).toBe(d.name);
    });
  });
});

describe('DELETE /v1/domains/{id}', () => {
  it('answers 204; the domain is gone from get, list, dns, verify and delete', async () => {
    const d = await addDomain(s, key, uniqueName('del'));
    const r = await s.call('DELETE', `/v1/domains/${d.id}`, { token: key });
    expect(r.status, r.text).toBe(204);
    expect(r.text).toBe('');
    expectProblem(await s.call('GET', `/v1/domains/${d.id}`, { token: key }), 404, 'not_found');
    expectProblem(await s.call('GET', `/v1/domains/${d.id}/dns`, { token: key }), 404, 'not_found');
    expectProblem(await s.call('POST', `/v1/domains/${d.id}/verify`, { token: key }), 404, 'not_found');
    expectProblem(await s.call('PATCH', `/v1/domains/${d.id}`, { token: key, body: {} }), 404, 'not_found');
    expectProblem(await s.call('DELETE', `/v1/domains/${d.id}`, { token: key }), 404, 'not_found');
    const list = await s.call('GET', '/v1/domains?limit=100', { token: key });
    expect(list.body.data.map((x: Domain) => x.id)).not.toContain(d.id);
  });

  it('an unknown id is 404', async () => {
    expectProblem(await s.call('DELETE', '/v1/domains/dom_000000000000000000000000', { token: key }), 404, 'not_found');
  });

  it('422 domain_in_use while an active API key is restricted to it; 204 once the key is revoked', async () => {
    const d = await addDomain(s, key, uniqueName('inuse'));
    const restricted = await createKey(s, owner, { scopes: ['emails:send'], domain_id: d.id });
    const r = await s.call('DELETE', `/v1/domains/${d.id}`, { token: key });
    expectProblem(r, 422, 'domain_in_use');
    expect((await getDomain(s, key, d.id)).id).toBe(d.id);

    const revoke = await s.call('DELETE', `/v1/api-keys/${restricted.id}`, { token: await sessionOf(s, owner) });
    expect(revoke.status, revoke.text).toBe(204);
    expect((await s.call('DELETE', `/v1/domains/${d.id}`, { token: key })).status).toBe(204);
  });

  it('an expired restricted key no longer holds the domain', async () => {
    const d = await addDomain(s, key, uniqueName('expkey'));
    const expiresAt = new Date((await serviceNow(s)) + 60_000).toISOString();
    await createKey(s, owner, { scopes: ['emails:send'], domain_id: d.id, expires_at: expiresAt });
    expectProblem(await s.call('DELETE', `/v1/domains/${d.id}`, { token: key }), 422, 'domain_in_use');
    await s.advance(61);
    expect((await s.call('DELETE', `/v1/domains/${d.id}`, { token: key })).status).toBe(204);
  });

  it('422 domain_in_use while a message from it is scheduled; 204 once it is cancelled', async () => {
    const d = await addDomain(s, key, uniqueName('sched'));
    await publish(s, d.id);
    expect((await verify(s, key, d.id)).verified).toBe(true);
    const scheduledAt = new Date((await serviceNow(s)) + 3_600_000).toISOString();
    const sent = await s.call('POST', '/v1/emails', {
      token: key,
      body: {
        from: `news@${d.name}`,
        to: 'someone@dest.example',
        subject: 'Later',
        text: 'hi',
        scheduled_at: scheduledAt,
      },
    });
    expect(sent.status, sent.text).toBe(202);
    expect(sent.body.status).toBe('scheduled');
    expectProblem(await s.call('DELETE', `/v1/domains/${d.id}`, { token: key }), 422, 'domain_in_use');
    const cancel = await s.call('POST', `/v1/emails/${sent.body.id}/cancel`, { token: key });
    expect(cancel.status, cancel.text).toBe(200);
    expect((await s.call('DELETE', `/v1/domains/${d.id}`, { token: key })).status).toBe(204);
  });
});

describe('tenancy: another workspace’s domain is not found', () => {
  let other: Tenant;
  let otherKey: string;
  beforeAll(async () => {
    other = await newTenant(s, 'tenant-b');
    otherKey = (await createKey(s, other, { scopes: ['domains:read', 'domains:write'] })).key;
  });

  it.each([
    ['GET', ''],
    ['GET', '/dns'],
    ['PATCH', ''],
    ['DELETE', ''],
    ['POST', '/verify'],
  ])('%s /v1/domains/{id}%s → 404 with a session and with a key; the domain is untouched', async (method, suffix) => {
    const id = s.seed!.domain_id;
    const body = method === 'PATCH' ? { mail_from_subdomain: 'stolen' } : undefined;
    for (const token of [await sessionOf(s, other), otherKey]) {
      expectProblem(await s.call(method, `/v1/domains/${id}${suffix}`, { token, body }), 404, 'not_found');
    }
    const mine = await getDomain(s, key, id);
    expect(mine.status).toBe('verified');
    expect(mine.mail_from_subdomain).toBe('bounces');
  });

  it('their list does not show it', async () => {
    const r = await s.call('GET', '/v1/domains?limit=100', { token: otherKey });
    expect(r.status).toBe(200);
    expect(r.body.data.map((d: Domain) => d.id)).not.toContain(s.seed!.domain_id);
  });
});

describe('credentials, scopes and roles', () => {
  it('no credential → 401; a bad key → 401', async () => {
    expectProblem(await s.call('GET', '/v1/domains'), 401, 'missing_credentials');
    expectProblem(await s.call('GET', '/v1/domains', { token: `svc_test_${'x'.repeat(32)}` }), 401, 'invalid_api_key');
  });

  it('a key with only domains:read reads but may not write (403 insufficient_scope)', async () => {
    const ro = (await createKey(s, owner, { scopes: ['domains:read'] })).key;
    const id = s.seed!.domain_id;
    expect((await s.call('GET', '/v1/domains', { token: ro })).status).toBe(200);
    expect((await s.call('GET', `/v1/domains/${id}`, { token: ro })).status).toBe(200);
    expect((await s.call('GET', `/v1/domains/${id}/dns`, { token: ro })).status).toBe(200);
    expectProblem(
      await s.call('POST', '/v1/domains', { token: ro, body: { name: uniqueName('ro') } }),
      403,
      'insufficient_scope',
    );
    expectProblem(
      await s.call('PATCH', `/v1/domains/${id}`, { token: ro, body: { mail_from_subdomain: 'x' } }),
      403,
      'insufficient_scope',
    );
    expectProblem(await s.call('DELETE', `/v1/domains/${id}`, { token: ro }), 403, 'insufficient_scope');
    expectProblem(await s.call('POST', `/v1/domains/${id}/verify`, { token: ro }), 403, 'insufficient_scope');
    const still = await getDomain(s, key, id);
    expect(still.mail_from_subdomain).toBe('bounces');
  });

  it('a key without domains:read may not read (403 insufficient_scope)', async () => {
    const wo = (await createKey(s, owner, { scopes: ['domains:write'] })).key;
    const sendOnly = (await createKey(s, owner, { scopes: ['emails:send'] })).key;
    const id = s.seed!.domain_id;
    for (const token of [wo, sendOnly]) {
      expectProblem(await s.call('GET', '/v1/domains', { token }), 403, 'insufficient_scope');
      expectProblem(await s.call('GET', `/v1/domains/${id}`, { token }), 403, 'insufficient_scope');
      expectProblem(await s.call('GET', `/v1/domains/${id}/dns`, { token }), 403, 'insufficient_scope');
    }
    expectProblem(
      await s.call('POST', '/v1/domains', { token: sendOnly, body: { name: uniqueName() } }),
      403,
      'insufficient_scope',
    );
    // domains:write alone may run a check.
    expect((await s.call('POST', `/v1/domains/${id}/verify`, { token: wo })).status).toBe(200);
  });

  it('an owner session may do everything', async () => {
    const token = await sessionOf(s, owner);
    const d = await addDomain(s, token, uniqueName('sess'));
    expect((await s.call('GET', '/v1/domains', { token })).status).toBe(200);
    expect((await s.call('PATCH', `/v1/domains/${d.id}`, { token, body: { mail_from_subdomain: 'm' } })).status).toBe(
      200,
    );
    expect((await s.call('POST', `/v1/domains/${d.id}/verify`, { token })).status).toBe(200);
    expect((await s.call('GET', `/v1/domains/${d.id}/dns`, { token })).status).toBe(200);
    expect((await s.call('DELETE', `/v1/domains/${d.id}`, { token })).status).toBe(204);
  });

  describe('roles', () => {
    let memberWs: string;
    let adminWs: string;
    let domainId: string;
    beforeAll(async () => {
      const m = await s.admin('POST', '/sandbox/workspaces', {
        email: owner.email,
        name: 'Member space',
        role: 'member',
      });
      expect(m.status, m.text).toBe(201);
      memberWs = m.body.id;
      const a = await s.admin('POST', '/sandbox/workspaces', {
        email: owner.email,
        name: 'Admin space',
        role: 'admin',
      });
      expect(a.status, a.text).toBe(201);
      adminWs = a.body.id;
      // Nobody in the member's workspace may add a domain through the API: put one there directly.
      domainId = (await s.core.domains.create(memberWs, { name: uniqueName('memberws') })).id;
    });

    it('a member session reads', async () => {
      const token = await sessionOf(s, { ...owner, workspace_id: memberWs });
      const list = await s.call('GET', '/v1/domains', { token });
      expect(list.status, list.text).toBe(200);
      expect(list.body.data.map((d: Domain) => d.id)).toEqual([domainId]);
      expect((await s.call('GET', `/v1/domains/${domainId}`, { token })).status).toBe(200);
      expect((await s.call('GET', `/v1/domains/${domainId}/dns`, { token })).status).toBe(200);
    });

    it('a member session may not write: 403 forbidden, nothing changes', async () => {
      const token = await sessionOf(s, { ...owner, workspace_id: memberWs });
      expectProblem(
        await s.call('POST', '/v1/domains', { token, body: { name: uniqueName('mem') } }),
        403,
        'forbidden',
      );
      expectProblem(
        await s.call('PATCH', `/v1/domains/${domainId}`, { token, body: { mail_from_subdomain: 'x' } }),
        403,
        'forbidden',
      );
      expectProblem(await s.call('POST', `/v1/domains/${domainId}/verify`, { token }), 403, 'forbidden');
      expectProblem(await s.call('DELETE', `/v1/domains/${domainId}`, { token }), 403, 'forbidden');
      const d = await s.call('GET', `/v1/domains/${domainId}`, { token });
      expect(d.body.mail_from_subdomain).toBe('bounces');
      expect(d.body.last_checked_at).toBeNull();
      const list = await s.call('GET', '/v1/domains', { token });
      expect(list.body.data).toHaveLength(1);
    });

    it('an admin session may write', async () => {
      const token = await sessionOf(s, { ...owner, workspace_id: adminWs });
      const d = await addDomain(s, token, uniqueName('adm'));
      expect((await s.call('DELETE', `/v1/domains/${d.id}`, { token })).status).toBe(204);
    });
  });
});

describe('POST /v1/domains/{id}/verify: rate limit', () => {
  it('answers 429 with Retry-After beyond 6 calls per domain per minute; other domains are unaffected', async () => {
    const a = await addDomain(s, key, uniqueName('rl-a'));
    const b = await addDomain(s, key, uniqueName('rl-b'));
    for (let i = 0; i < 6; i++) {
      const r = await s.call('POST', `/v1/domains/${a.id}/verify`, { token: key });
      expect(r.status, `call ${i + 1}: ${r.text}`).toBe(200);
    }
    const limited = await s.call('POST', `/v1/domains/${a.id}/verify`, { token: key });
    expectProblem(limited, 429, 'rate_limited');
    const retryAfter = limited.headers.get('retry-after');
    expect(retryAfter).toMatch(/^\d+$/);
    expect(Number(retryAfter)).toBeGreaterThan(0);
    expect(Number(retryAfter)).toBeLessThanOrEqual(60);
    // A session is limited the same way: the limit is per domain.
    expectProblem(
      await s.call('POST', `/v1/domains/${a.id}/verify`, { token: await sessionOf(s, owner) }),
      429,
      'rate_limited',
    );
    expect((await s.call('POST', `/v1/domains/${b.id}/verify`, { token: key })).status).toBe(200);
    // Reading is not limited.
    expect((await s.call('GET', `/v1/domains/${a.id}`, { token: key })).status).toBe(200);

    await s.advance(Number(retryAfter));
    expect((await s.call('POST', `/v1/domains/${a.id}/verify`, { token: key })).status).toBe(200);
  });
});
