// The domain rules (docs/api.md#domains) on core over `:memory:`, its records in the sandbox zone: names, verification
// and what it finds, the status machine (pending → verified → degraded, 72 h to failed) with its events and its
// background checks, the verify rate limit, and when a domain may be deleted.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { HOUR, MINUTE } from '../../lib/clock.js';
import { memoryCore, START, type MemoryCore } from '../../../test/helpers/core.js';
import { PENDING_CHECK_OFFSETS } from './domain-verification.js';

let c: MemoryCore;
beforeEach(async () => {
  c = await memoryCore();
});
afterEach(() => c.close());

const add = (name: string) => c.core.domains.create(c.seed.workspaceId, { name }, { inMemorySeed: true });
const verify = (id: string) => c.core.domains.verify(c.seed.workspaceId, id);
const domainEvents = () =>
  c.core.events
    .outbox(c.seed.workspaceId, { limit: 100 })
    .filter((e) => e.type.startsWith('domain.'))
    .map((e) => [e.type, (e.data as { name: string }).name]);
/** The domain's pending background check: its generation and when it is due. */
const nextCheck = (id: string) => {
  const job = c
    .jobs('domain_check')
    .filter((j) => j.payload.domain_id === id)
    .at(-1)!;
  return { generation: job.payload.generation as number, runAt: job.runAt };
};

describe('names', () => {
  it('refuses a bare public suffix, an IP address and the same name twice in a workspace', async () => {
    await expect(add('co.uk')).rejects.toMatchObject({ code: 'validation_failed' });
    await expect(add('192.0.2.1')).rejects.toMatchObject({ code: 'validation_failed' });
    await expect(add('Example.TEST')).rejects.toMatchObject({ code: 'domain_exists' });
    expect((await add('Mail.Shop.test')).name).toBe('mail.shop.test');
  });
});

describe('verification', () => {
  it('with nothing published: pending, every required record missing, checked again 5 minutes on', async () => {
    const d = await add('shop.test');
    expect(d.status).toBe('pending');
    const r = await verify(d.id);
    expect(r).toMatchObject({ verified: false, propagating: false, status: 'pending', verified_at: null });
    expect(r.findings.filter((f) => f.required).every((f) => f.status === 'missing')).toBe(true);
    expect(nextCheck(d.id).runAt).toBe(START + PENDING_CHECK_OFFSETS[0]!);
  });

  it('records still propagating: not verified yet, and said so', async () => {
    const d = await add('shop.test');
    c.core.domains.publish(d.id, { state: 'propagating' });
    expect(await verify(d.id)).toMatchObject({ verified: false, propagating: true, status: 'pending' });
  });

  it('every required record ok: verified, verified_at set, domain.verified emitted, a daily check', async () => {
    const d = await add('shop.test');
    c.core.domains.publish(d.id, { kinds: ['ownership', 'dkim', 'mail_from_mx', 'mail_from_spf'] });
    const r = await verify(d.id);
    expect(r).toMatchObject({ verified: true, status: 'verified', verified_at: new Date(START).toISOString() });
    // DMARC is not required: missing, and verified all the same.
    expect(r.findings.find((f) => f.kind === 'dmarc')).toMatchObject({ required: false, status: 'missing' });
    expect(domainEvents()).toContainEqual(['domain.verified', 'shop.test']);
    expect(nextCheck(d.id).runAt).toBe(START + 24 * HOUR);
  });

  it('a required record gone from a verified domain: degraded, with domain.degraded; verified_at stays', async () => {
    const d = await add('shop.test');
    c.core.domains.publish(d.id, {});
    await verify(d.id);
    const dkim = c.core.domains.get(c.seed.workspaceId, d.id).records.find((r) => r.kind === 'dkim')!;
    c.core.zone.delete(dkim.host, dkim.type);
    c.clock.advance(MINUTE);
    const r = await verify(d.id);
    expect(r).toMatchObject({ verified: false, status: 'degraded', verified_at: new Date(START).toISOString() });
    expect(domainEvents()).toEqual([
      ['domain.verified', 'example.test'],
      ['domain.verified', 'shop.test'],
      ['domain.degraded', 'shop.test'],
    ]);
  });

  it('a pending domain fails after 72 h without a passing check, and its background checks stop', async () => {
    const d = await add('shop.test');
    c.clock.advance(72 * HOUR);
    const { generation } = nextCheck(d.id);
    expect(await c.core.domains.check(d.id, generation)).toBeNull();
    expect(c.core.domains.get(c.seed.workspaceId, d.id).status).toBe('failed');
    // …and a later check that finds its records moves it to verified.
    c.core.domains.publish(d.id, {});
    expect((await verify(d.id)).status).toBe('verified');
  });

  it('before 72 h a background check finds it still pending and answers when the next one is due', async () => {
    const d = await add('shop.test');
    c.clock.advance(PENDING_CHECK_OFFSETS[0]!);
    expect(await c.core.domains.check(d.id, nextCheck(d.id).generation)).toBe(START + PENDING_CHECK_OFFSETS[1]!);
    expect(c.core.domains.get(c.seed.workspaceId, d.id).status).toBe('pending');
  });

  it('at most 6 verifications a minute per domain', async () => {
    const d = await add('shop.test');
    for (let i = 0; i < 6; i++) await verify(d.id);
    await expect(verify(d.id)).rejects.toMatchObject({ code: 'rate_limited' });
    c.clock.advance(MINUTE);
    await expect(verify(d.id)).resolves.toMatchObject({ status: 'pending' });
  });
});

describe('delete', () => {
  it('is refused while mail from the domain is queued or scheduled, and allowed once it is not', async () => {
    const input = { from: 'a@example.test', to: ['ada@example.org'], subject: 'Hi', text: 'x' };
    const sent = await c.core.emails.send(c.seed.key, input as never, undefined);
    expect(() => c.core.domains.delete(c.seed.workspaceId, c.seed.domainId)).toThrow(
      expect.objectContaining({ code: 'domain_in_use' }),
    );
    c.core.emails.cancel(c.seed.workspaceId, sent.body.id);
    c.core.domains.delete(c.seed.workspaceId, c.seed.domainId);
    expect(() => c.core.domains.get(c.seed.workspaceId, c.seed.domainId)).toThrow(
      expect.objectContaining({ code: 'not_found' }),
    );
  });
});
