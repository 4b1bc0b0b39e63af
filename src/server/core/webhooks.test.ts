// The webhook rules (docs/api.md#webhooks) on core over `:memory:`: endpoints and their limit, which events go to
// which endpoint, the secrets that sign an attempt (a rotation's overlap), the retry schedule, and disabling after
// seven failed attempts with no success meanwhile. The attempts themselves are recorded by hand, as the webhook
// worker records what lib/post-event.ts answered.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DAY, HOUR, MINUTE, SECOND } from '../../lib/clock.js';
import { memoryCore, START, type Job, type MemoryCore } from '../../../test/helpers/core.js';
import type { SendInput } from './rules/send-rules.js';
import { queueOf, type Delivery } from './webhook-deliveries.js';

let c: MemoryCore;
beforeEach(async () => {
  c = await memoryCore();
});
afterEach(() => c.close());

const endpoint = (events?: string[]) =>
  c.core.webhooks.create({
    workspace_id: c.seed.workspaceId,
    url: 'http://127.0.0.1:3000/webhooks',
    ...(events ? { events: events as never } : {}),
  });
const send = async (to = 'ada@example.org') => {
  const input = { from: 'orders@example.test', to: [to], subject: 'Hi', text: 'Hello' } as SendInput;
  return (await c.core.emails.send(c.seed.key, input, undefined)).body.id;
};
/** The webhook jobs waiting for an endpoint. */
const deliveries = (endpointId: string): Job[] => c.jobs('webhook').filter((j) => j.queue === queueOf(endpointId));
const FAILED = { status: 500, error: 'HTTP 500', durationMs: 3 };
const OK = { status: 204, error: null, durationMs: 3 };

describe('endpoints', () => {
  it('get a whsec_ secret of 32 random bytes, active; at most five per workspace', async () => {
    const e = await endpoint();
    expect(e).toMatchObject({ status: 'active', workspace_id: c.seed.workspaceId });
    expect(Buffer.from(e.secret.replace(/^whsec_/, ''), 'base64')).toHaveLength(32);
    expect(e.secret).not.toBe((await endpoint()).secret);
    for (let i = 0; i < 3; i++) await endpoint();
    await expect(endpoint()).rejects.toMatchObject({ code: 'endpoint_limit_reached' });
  });

  it('take only an http(s) URL', () => {
    expect(() => c.core.webhooks.create({ workspace_id: c.seed.workspaceId, url: 'ftp://example.org/hook' })).toThrow(
      expect.objectContaining({ code: 'validation_failed' }),
    );
  });
});

describe('fan-out', () => {
  it('each event goes to every active endpoint whose filter takes it, in that endpoint’s own queue', async () => {
    const all = await endpoint();
    const delivered = await endpoint(['email.delivered']);
    await send();
    expect(deliveries(all.id).map((j) => j.payload)).toEqual([
      expect.objectContaining({ endpoint_id: all.id, attempt: 1, first_attempt_at: null }),
    ]);
    expect(deliveries(delivered.id)).toEqual([]);
  });

  it('an attempt carries the event exactly as GET /v1/events lists it', async () => {
    const e = await endpoint();
    const id = await send();
    const job = deliveries(e.id)[0]!;
    const plan = c.core.webhooks.begin(1, job.payload as unknown as Delivery)!;
    expect(plan.eventType).toBe('email.queued');
    expect(JSON.parse(plan.body)).toMatchObject({ type: 'email.queued', data: { message_id: id } });
    expect(plan.secrets).toEqual([e.secret]);
  });
});

describe('signing secrets', () => {
  it('after a rotation the old secret signs beside the new one for 24 hours of service clock', async () => {
    const e = await endpoint();
    await send();
    const delivery = deliveries(e.id)[0]!.payload as unknown as Delivery;
    const rotated = await c.core.webhooks.rotateSecret(e.id);
    expect(rotated.secret).not.toBe(e.secret);
    expect(rotated.previous_secret_expires_at).toBe(new Date(START + DAY).toISOString());
    expect(c.core.webhooks.begin(1, delivery)!.secrets).toEqual([rotated.secret, e.secret]);
    c.clock.advance(DAY);
    expect(c.core.webhooks.begin(1, delivery)!.secrets).toEqual([rotated.secret]);
  });
});

describe('retries and disabling', () => {
  /** Fails the delivery's attempts, each when it is due; answers when each retry was due, from the first attempt. */
  function failAll(delivery: Delivery, times: number): number[] {
    const due: number[] = [];
    let d = delivery;
    for (let i = 0; i < times; i++) {
      const plan = c.core.webhooks.begin(1, d);
      if (!plan) break;
      const next = c.core.webhooks.record(plan, FAILED);
      if (!next) break;
      due.push(next.retryAt - START);
      c.clock.set(next.retryAt);
      d = next.payload;
    }
    return due;
  }

  it('retries at 30 s, 2 min, 10 min, 1 h, 6 h and 24 h after the first attempt', async () => {
    const e = await endpoint();
    await send();
    const due = failAll(deliveries(e.id)[0]!.payload as unknown as Delivery, 6);
    expect(due).toEqual([30 * SECOND, 2 * MINUTE, 10 * MINUTE, HOUR, 6 * HOUR, DAY]);
  });

  it('disables the endpoint after the seventh failure, drops its queue and mails the owner', async () => {
    const e = await endpoint();
    await send();
    const delivery = deliveries(e.id)[0]!.payload as unknown as Delivery;
    failAll(delivery, 7);
    const [after] = c.core.webhooks.list(c.seed.workspaceId);
    expect(after).toMatchObject({ id: e.id, status: 'disabled_by_failures' });
    expect(c.core.webhooks.begin(1, delivery)).toBeNull();
    expect(deliveries(e.id)).toEqual([]);
    expect(c.jobs('system_mail')).toEqual([
      expect.objectContaining({
        payload: expect.objectContaining({ to: 'owner@example.test', subject: `Webhook endpoint disabled: ${e.url}` }),
      }),
    ]);
    // Nothing new goes to it; enabled again, it takes the next events (not what it missed).
    await send();
    expect(deliveries(e.id)).toEqual([]);
    await c.core.webhooks.enable(e.id);
    await send();
    expect(deliveries(e.id)).toHaveLength(1);
  });

  it('keeps an endpoint that succeeded since the failing event’s first attempt', async () => {
    const e = await endpoint();
    await send('ada@example.org');
    const failing = deliveries(e.id)[0]!.payload as unknown as Delivery;
    const first = c.core.webhooks.begin(1, failing)!;
    const retry = c.core.webhooks.record(first, FAILED)!;
    await send('bob@example.org');
    const other = deliveries(e.id).find((j) => j.payload.event_id !== failing.event_id)!;
    c.core.webhooks.record(c.core.webhooks.begin(2, other.payload as unknown as Delivery)!, OK);
    c.clock.set(retry.retryAt);
    failAll(retry.payload, 6);
    expect(c.core.webhooks.list(c.seed.workspaceId)[0]!.status).toBe('active');
    expect(c.jobs('system_mail')).toEqual([]);
  });
});
