// The domain status machine on the manual clock (docs/api.md#domains: status transitions, background checks,
// events; domain.verified / domain.degraded in docs/api.md#events). One server for the file: every scenario uses its own
// domain and measures time from that domain's creation, so moving the clock for one does not disturb another.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.js';
import {
  addDomain,
  domainEvents,
  expectProblem,
  getDomain,
  publish,
  record,
  serviceNow,
  uniqueName,
  verify,
  type Domain,
} from './domains-helpers.js';

const MIN = 60;
const HOUR = 3600;

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.close());

async function setup(label: string) {
  const s = server;
  const key = s.seed!.api_key_test;
  const ws = s.seed!.workspace_id;
  const d = await addDomain(s, key, uniqueName(label));
  const t0 = await serviceNow(s);
  return { s, key, ws, d, t0 };
}

const at = (ms: number) => new Date(ms).toISOString();

async function removeDns(s: TestServer, host: string, type: string) {
  const r = await s.call('DELETE', `/sandbox/dns?host=${encodeURIComponent(host)}&type=${type}`, {
    token: s.adminToken,
  });
  expect(r.status, r.text).toBe(204);
}

/** POST /v1/emails from the domain; returns the status code (202 when the domain may send). */
async function trySend(s: TestServer, key: string, d: Domain): Promise<number> {
  const r = await s.call('POST', '/v1/emails', {
    token: key,
    body: { from: `hello@${d.name}`, to: 'someone@dest.example', subject: 'Hi', text: 'Hi' },
  });
  if (r.status !== 202) expectProblem(r, 422, 'domain_not_verified');
  return r.status;
}

describe('pending → verified by the background checks', () => {
  it('records published after creation are found by the 5-minute check, without a verify call', async () => {
    const { s, key, ws, d, t0 } = await setup('bg5');
    await publish(s, d.id);
    await s.advance(5 * MIN - 1);
    let now = await getDomain(s, key, d.id);
    expect(now.status).toBe('pending');
    expect(now.last_checked_at).toBeNull();
    expect(domainEvents(s, ws, d.id)).toEqual([]);

    await s.advance(1);
    now = await getDomain(s, key, d.id);
    expect(now.status).toBe('verified');
    expect(now.verified_at).toBe(at(t0 + 5 * MIN * 1000));
    expect(now.last_checked_at).toBe(at(t0 + 5 * MIN * 1000));
    for (const r of now.records) expect(r.status, r.kind).toBe('ok');

    const events = domainEvents(s, ws, d.id);
    expect(events.map((e) => e.type)).toEqual(['domain.verified']);
    expect(Object.keys(events[0]!.data).sort()).toEqual(['domain_id', 'findings', 'name', 'status']);
    expect(events[0]!.data).toMatchObject({ domain_id: d.id, name: d.name, status: 'verified' });
    expect(events[0]!.data.findings.map((f) => f.kind)).toEqual(d.records.map((r) => r.kind));
    expect(events[0]!.data.findings.every((f) => f.status === 'ok')).toBe(true);
    expect(events[0]!.created_at).toBe(t0 + 5 * MIN * 1000);
  });

  it('the checks run at 5 min, 15 min and 1 h: records published at 20 min are found at 1 h', async () => {
    const { s, key, d, t0 } = await setup('bg60');
    await s.advance(5 * MIN);
    expect((await getDomain(s, key, d.id)).last_checked_at).toBe(at(t0 + 5 * MIN * 1000));
    await s.advance(10 * MIN);
    expect((await getDomain(s, key, d.id)).last_checked_at).toBe(at(t0 + 15 * MIN * 1000));
    await s.advance(5 * MIN);
    let now = await getDomain(s, key, d.id);
    expect(now.status).toBe('pending');
    expect(now.last_checked_at).toBe(at(t0 + 15 * MIN * 1000)); // no check at 20 min
    expect(record(now, 'dkim').status).toBe('missing');

    await publish(s, d.id);
    await s.advance(39 * MIN);
    now = await getDomain(s, key, d.id);
    expect(now.status).toBe('pending');
    expect(now.last_checked_at).toBe(at(t0 + 15 * MIN * 1000));

    await s.advance(1 * MIN);
    now = await getDomain(s, key, d.id);
    expect(now.status).toBe('verified');
    expect(now.verified_at).toBe(at(t0 + HOUR * 1000));
  });

  it('after the first hour a pending domain is re-checked hourly', async () => {
    const { s, key, d, t0 } = await setup('hourly');
    for (let h = 1; h <= 4; h++) {
      await s.advance(HOUR);
      expect((await getDomain(s, key, d.id)).last_checked_at).toBe(at(t0 + h * HOUR * 1000));
    }
    await publish(s, d.id);
    await s.advance(HOUR);
    expect((await getDomain(s, key, d.id)).status).toBe('verified');
  });
});

describe('pending → failed', () => {
  it('after 72 h without a passing check (hour by hour); failed then stops being re-checked', async () => {
    const { s, key, ws, d, t0 } = await setup('fail72');
    for (let h = 1; h <= 71; h++) await s.advance(HOUR);
    let now = await getDomain(s, key, d.id);
    expect(now.status).toBe('pending');
    expect(now.last_checked_at).toBe(at(t0 + 71 * HOUR * 1000));

    await s.advance(HOUR);
    now = await getDomain(s, key, d.id);
    expect(now.status).toBe('failed');
    expect(now.verified_at).toBeNull();
    expect(now.last_checked_at).toBe(at(t0 + 72 * HOUR * 1000));
    expect(domainEvents(s, ws, d.id)).toEqual([]);
    expect(await trySend(s, key, d)).toBe(422);

    // A failed domain waits for a manual verify: publishing alone does not bring it back.
    await publish(s, d.id);
    await s.advance(25 * HOUR);
    now = await getDomain(s, key, d.id);
    expect(now.status).toBe('failed');
    expect(now.last_checked_at).toBe(at(t0 + 72 * HOUR * 1000));
  });

  it('in one jump of the clock past 72 h', async () => {
    const { s, key, d } = await setup('jump');
    await s.advance(72 * HOUR - 1);
    expect((await getDomain(s, key, d.id)).status).toBe('pending');
    await s.advance(1);
    expect((await getDomain(s, key, d.id)).status).toBe('failed');
  });

  it('a passing check before 72 h prevents it: records found at 71 h', async () => {
    const { s, key, d } = await setup('late');
    await s.advance(70 * HOUR + 30 * MIN);
    await publish(s, d.id);
    await s.advance(30 * MIN);
    expect((await getDomain(s, key, d.id)).status).toBe('verified');
    await s.advance(5 * HOUR);
    expect((await getDomain(s, key, d.id)).status).toBe('verified');
  });

  it('the 72 h count restarts at a PATCH', async () => {
    const { s, key, d, t0 } = await setup('patch72');
    await s.advance(48 * HOUR);
    const p = await s.call('PATCH', `/v1/domains/${d.id}`, { token: key, body: { mail_from_subdomain: 'mf' } });
    expect(p.status, p.text).toBe(200);
    await s.advance(48 * HOUR); // 96 h after creation, 48 h after the PATCH
    expect((await getDomain(s, key, d.id)).status).toBe('pending');
    await s.advance(24 * HOUR);
    const now = await getDomain(s, key, d.id);
    expect(now.status).toBe('failed');
    expect(now.last_checked_at).toBe(at(t0 + 120 * HOUR * 1000));
  });

  it('a PATCH of a failed domain makes it pending and re-checked again', async () => {
    const { s, key, ws, d } = await setup('patchfailed');
    await s.advance(72 * HOUR);
    expect((await getDomain(s, key, d.id)).status).toBe('failed');
    const p = await s.call('PATCH', `/v1/domains/${d.id}`, { token: key, body: { mail_from_subdomain: 'ret' } });
    expect(p.status, p.text).toBe(200);
    expect(p.body.status).toBe('pending');
    const tp = await serviceNow(s);
    await publish(s, d.id);
    await s.advance(5 * MIN);
    const now = await getDomain(s, key, d.id);
    expect(now.status).toBe('verified');
    expect(now.last_checked_at).toBe(at(tp + 5 * MIN * 1000));
    expect(domainEvents(s, ws, d.id).map((e) => e.type)).toEqual(['domain.verified']);
  });

  it('failed → verified on a passing manual verify, with domain.verified', async () => {
    const { s, key, ws, d } = await setup('revive');
    await s.advance(72 * HOUR);
    expect((await getDomain(s, key, d.id)).status).toBe('failed');
    await publish(s, d.id);
    const v = await verify(s, key, d.id);
    expect(v.verified).toBe(true);
    expect(v.status).toBe('verified');
    expect(v.verified_at).toBe(at(await serviceNow(s)));
    const events = domainEvents(s, ws, d.id);
    expect(events.map((e) => e.type)).toEqual(['domain.verified']);
    expect(events[0]!.data.status).toBe('verified');
    expect(await trySend(s, key, d)).toBe(202);
    // It is a verified domain again: checked daily from now on.
    const t1 = await serviceNow(s);
    await s.advance(24 * HOUR);
    expect((await getDomain(s, key, d.id)).last_checked_at).toBe(at(t1 + 24 * HOUR * 1000));
  });
});

describe('verified → degraded → verified / failed', () => {
  async function verifiedDomain(label: string) {
    const ctx = await setup(label);
    await publish(ctx.s, ctx.d.id);
    const v = await verify(ctx.s, ctx.key, ctx.d.id);
    expect(v.status).toBe('verified');
    return { ...ctx, tv: await serviceNow(ctx.s), verifiedAt: v.verified_at };
  }

  it('a removed required record degrades the domain at the daily re-check, with domain.degraded', async () => {
    const { s, key, ws, d, tv, verifiedAt } = await verifiedDomain('degrade');
    await removeDns(s, record(d, 'dkim').host, 'TXT');
    await s.advance(24 * HOUR - 1);
    expect((await getDomain(s, key, d.id)).status).toBe('verified'); // nothing looked yet
    await s.advance(1);
    const now = await getDomain(s, key, d.id);
    expect(now.status).toBe('degraded');
    expect(now.verified_at).toBe(verifiedAt);
    expect(now.last_checked_at).toBe(at(tv + 24 * HOUR * 1000));
    expect(record(now, 'dkim').status).toBe('missing');

    const events = domainEvents(s, ws, d.id);
    expect(events.map((e) => e.type)).toEqual(['domain.verified', 'domain.degraded']);
    const degraded = events[1]!;
    expect(degraded.data).toMatchObject({ domain_id: d.id, name: d.name, status: 'degraded' });
    expect(degraded.data.findings.find((f) => f.kind === 'dkim')!.status).toBe('missing');
    expect(degraded.data.findings.find((f) => f.kind === 'ownership')!.status).toBe('ok');
    // A degraded domain still sends.
    expect(await trySend(s, key, d)).toBe(202);
  });

  it('a removed DMARC record (not required) keeps it verified', async () => {
    const { s, key, ws, d } = await verifiedDomain('dmarcgone');
    await removeDns(s, record(d, 'dmarc').host, 'TXT');
    await s.advance(24 * HOUR);
    const now = await getDomain(s, key, d.id);
    expect(now.status).toBe('verified');
    expect(record(now, 'dmarc').status).toBe('missing');
    expect(domainEvents(s, ws, d.id).map((e) => e.type)).toEqual(['domain.verified']);
  });

  it('a wrong value found by a manual verify degrades it at once', async () => {
    const { s, key, ws, d } = await verifiedDomain('manualdeg');
    const r = await s.admin('PUT', '/sandbox/dns', {
      host: record(d, 'mail_from_spf').host,
      type: 'TXT',
      values: ['v=spf1 -all'],
    });
    expect(r.status, r.text).toBe(200);
    const v = await verify(s, key, d.id);
    expect(v.verified).toBe(false);
    expect(v.status).toBe('degraded');
    expect(domainEvents(s, ws, d.id).map((e) => e.type)).toEqual(['domain.verified', 'domain.degraded']);
  });

  it('degraded → verified when republished and re-checked in the background, with domain.verified', async () => {
    const { s, key, ws, d, tv } = await verifiedDomain('recover');
    await removeDns(s, record(d, 'mail_from_mx').host, 'MX');
    await s.advance(24 * HOUR);
    expect((await getDomain(s, key, d.id)).status).toBe('degraded');
    await publish(s, d.id);
    await s.advance(5 * MIN);
    const now = await getDomain(s, key, d.id);
    expect(now.status).toBe('verified');
    expect(now.last_checked_at).toBe(at(tv + (24 * HOUR + 5 * MIN) * 1000));
    const events = domainEvents(s, ws, d.id);
    expect(events.map((e) => e.type)).toEqual(['domain.verified', 'domain.degraded', 'domain.verified']);
    expect(events[2]!.data.status).toBe('verified');
  });

  it('degraded → failed after 72 h degraded', async () => {
    const { s, key, ws, d, tv } = await verifiedDomain('degfail');
    await removeDns(s, record(d, 'ownership').host, 'TXT');
    await s.advance(24 * HOUR);
    expect((await getDomain(s, key, d.id)).status).toBe('degraded');
    await s.advance(72 * HOUR - 1);
    expect((await getDomain(s, key, d.id)).status).toBe('degraded');
    await s.advance(1);
    const now = await getDomain(s, key, d.id);
    expect(now.status).toBe('failed');
    expect(now.last_checked_at).toBe(at(tv + 96 * HOUR * 1000));
    expect(domainEvents(s, ws, d.id).map((e) => e.type)).toEqual(['domain.verified', 'domain.degraded']);
    expect(await trySend(s, key, d)).toBe(422);
  });

  it('records still in place: verified stays verified, re-checked every 24 h, no new events', async () => {
    const { s, key, ws, d, tv } = await verifiedDomain('steady');
    await s.advance(3 * 24 * HOUR);
    const now = await getDomain(s, key, d.id);
    expect(now.status).toBe('verified');
    expect(now.last_checked_at).toBe(at(tv + 72 * HOUR * 1000));
    expect(domainEvents(s, ws, d.id)).toHaveLength(1);
  });
});
