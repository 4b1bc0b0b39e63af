// The rules of a send (docs/api.md#sending) on core over `:memory:`: an Idempotency-Key's replay and conflict and its
// 24 hours, a scheduled send, the cancel rules, and the domain a send needs.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { HOUR, MINUTE } from '../../lib/clock.js';
import { memoryCore, START, type MemoryCore } from '../../../test/helpers/core.js';
import type { SendInput } from './rules/send-rules.js';

let c: MemoryCore;
beforeEach(async () => {
  c = await memoryCore();
});
afterEach(() => c.close());

const message = (over: Partial<SendInput> = {}): SendInput =>
  ({ from: 'Shop <orders@example.test>', to: ['ada@example.org'], subject: 'Hi', text: 'Hello', ...over }) as SendInput;
const send = (input: SendInput, key?: string) => c.core.emails.send(c.seed.key, input, key);
const eventTypes = (id: string) => c.core.emails.get(c.seed.workspaceId, id).events.map((e) => e.type);

describe('Idempotency-Key', () => {
  it('answers the same request again with the first result, and creates one message', async () => {
    const first = await send(message(), 'order-1');
    const again = await send(message(), 'order-1');
    expect(first.replayed).toBe(false);
    expect(again).toEqual({ ...first, replayed: true });
    expect(c.jobs('deliver')).toHaveLength(1);
  });

  it('compares the body as canonical JSON: the same fields in another order are the same request', async () => {
    const first = await send(message(), 'order-2');
    const reordered = { text: 'Hello', subject: 'Hi', to: ['ada@example.org'], from: 'Shop <orders@example.test>' };
    expect((await send(reordered as SendInput, 'order-2')).body.id).toBe(first.body.id);
  });

  it('refuses another body under the key with idempotency_conflict, for 24 hours', async () => {
    await send(message(), 'order-3');
    await expect(send(message({ subject: 'Other' }), 'order-3')).rejects.toMatchObject({
      code: 'idempotency_conflict',
    });
    c.clock.advance(24 * HOUR);
    const later = await send(message({ subject: 'Other' }), 'order-3');
    expect(later.replayed).toBe(false);
    expect(c.jobs('deliver')).toHaveLength(2);
  });

  it('keeps nothing for a refused send: the key is free for a corrected request', async () => {
    await expect(send(message({ from: 'orders@elsewhere.test' }), 'order-4')).rejects.toMatchObject({
      code: 'domain_not_verified',
    });
    expect((await send(message(), 'order-4')).replayed).toBe(false);
  });
});

describe('scheduled_at', () => {
  it('later than now: scheduled, with no email.queued yet and its delivery due at that instant', async () => {
    const at = START + 2 * HOUR;
    const r = await send(message({ scheduled_at: new Date(at).toISOString() }));
    expect(r.body.status).toBe('scheduled');
    expect(eventTypes(r.body.id)).toEqual([]);
    expect(c.jobs('deliver')).toMatchObject([{ payload: { message_id: r.body.id }, runAt: at }]);
  });

  it('now or past: queued at once, with its email.queued', async () => {
    const r = await send(message({ scheduled_at: new Date(START - MINUTE).toISOString() }));
    expect(r.body.status).toBe('queued');
    expect(eventTypes(r.body.id)).toEqual(['email.queued']);
  });

  it('more than 30 days ahead is refused', async () => {
    const far = new Date(START + 31 * 24 * HOUR).toISOString();
    await expect(send(message({ scheduled_at: far }))).rejects.toMatchObject({
      code: 'validation_failed',
      extra: { errors: [{ path: 'scheduled_at' }] },
    });
  });
});

describe('cancel', () => {
  it('cancels a queued or a scheduled message, and answers the same when it is cancelled already', async () => {
    const queued = (await send(message())).body.id;
    const scheduled = (await send(message({ scheduled_at: new Date(START + HOUR).toISOString() }))).body.id;
    for (const id of [queued, scheduled]) {
      expect(c.core.emails.cancel(c.seed.workspaceId, id)).toEqual({ id, status: 'cancelled' });
      expect(c.core.emails.cancel(c.seed.workspaceId, id)).toEqual({ id, status: 'cancelled' });
      expect(c.core.emails.get(c.seed.workspaceId, id).status).toBe('cancelled');
    }
    // A cancelled message is not handed over when its job runs.
    expect(await c.core.delivery.claim(queued)).toBeNull();
  });

  it('refuses once the message is being sent: message_not_cancellable', async () => {
    const id = (await send(message())).body.id;
    expect(await c.core.delivery.claim(id)).not.toBeNull();
    expect(() => c.core.emails.cancel(c.seed.workspaceId, id)).toThrow(
      expect.objectContaining({ code: 'message_not_cancellable' }),
    );
  });

  it("is 404 for another workspace's message", async () => {
    const id = (await send(message())).body.id;
    expect(() => c.core.emails.cancel('ws_000000000000000000000000', id)).toThrow(
      expect.objectContaining({ code: 'not_found' }),
    );
  });
});

describe('the sending domain', () => {
  it('must be a verified (or degraded) domain of the workspace', async () => {
    await expect(send(message({ from: 'a@unknown.test' }))).rejects.toMatchObject({ code: 'domain_not_verified' });
    const other = await c.core.domains.create(c.seed.workspaceId, { name: 'pending.test' }, { inMemorySeed: true });
    await expect(send(message({ from: 'a@pending.test' }))).rejects.toMatchObject({ code: 'domain_not_verified' });
    c.core.domains.publish(other.id, {});
    await c.core.domains.verify(c.seed.workspaceId, other.id);
    expect((await send(message({ from: 'a@pending.test' }))).body.status).toBe('queued');
  });
});
