// The delivery rules (docs/api.md#message-statuses, docs/local-server.md#simulator-recipients) on core over
// `:memory:`: a message claimed, handed over, deferred and failed, the simulated outcomes of each recipient, the
// suppression list they feed, and the events each change records (one per change: a lost race records none).
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { iso } from '../../lib/clock.js';
import { memoryCore, START, type MemoryCore } from '../../../test/helpers/core.js';
import { SIMULATED_DEFERRAL_MS } from './rules/retry-policy.js';
import type { SendInput } from './rules/send-rules.js';

let c: MemoryCore;
beforeEach(async () => {
  c = await memoryCore();
});
afterEach(() => c.close());

async function send(to: string[], over: Partial<SendInput> = {}): Promise<string> {
  const input = { from: 'orders@example.test', to, subject: 'Hi', text: 'Hello', ...over } as SendInput;
  return (await c.core.emails.send(c.seed.key, input, undefined)).body.id;
}
const message = (id: string) => c.core.emails.get(c.seed.workspaceId, id);
const timeline = (id: string) => message(id).events.map((e) => [e.type, e.detail] as const);

/** Claims a message and has the provider accept it: its recipients' simulated outcomes are played. */
async function deliver(id: string) {
  const out = await c.core.delivery.claim(id);
  expect(out).not.toBeNull();
  await c.core.delivery.sent(out!);
  return out!;
}

describe('a hand-over', () => {
  it('queued → sending → sent → delivered, with email.queued, email.sent and one email.delivered per recipient', async () => {
    const id = await send(['ada@example.org', 'bob@example.org']);
    const out = await c.core.delivery.claim(id);
    expect(out).toMatchObject({ recipients: ['ada@example.org', 'bob@example.org'], row: { status: 'sending' } });
    expect(message(id).status).toBe('sending');
    await c.core.delivery.sent(out!);
    expect(message(id).status).toBe('delivered');
    expect(timeline(id)).toEqual([
      ['email.queued', { to: ['ada@example.org', 'bob@example.org'] }],
      ['email.sent', { to: ['ada@example.org', 'bob@example.org'] }],
      ['email.delivered', { to: 'ada@example.org' }],
      ['email.delivered', { to: 'bob@example.org' }],
    ]);
  });

  it('claims a scheduled message as queued, with its email.queued, and no message twice', async () => {
    const id = await send(['ada@example.org'], { scheduled_at: iso(START + 60_000) });
    expect(await c.core.delivery.claim(id)).not.toBeNull();
    expect(await c.core.delivery.claim(id)).toMatchObject({ row: { status: 'sending' } });
    expect(timeline(id).map(([type]) => type)).toEqual(['email.queued']);
  });

  it('deferred (a 4xx, no connection): back to queued, one email.deferred per recipient; a second report is a no-op', async () => {
    const id = await send(['ada@example.org', 'bob@example.org']);
    const out = (await c.core.delivery.claim(id))!;
    const why = { smtpCode: 451, reason: '451 try later', retryInMs: 4_000 };
    expect(await c.core.delivery.deferred(out, why)).toBe(true);
    expect(await c.core.delivery.deferred(out, why)).toBe(false);
    expect(message(id).status).toBe('queued');
    const detail = { smtp_code: '451', reason: '451 try later', next_attempt_at: iso(START + 4_000) };
    expect(timeline(id).slice(1)).toEqual([
      ['email.deferred', { to: 'ada@example.org', ...detail }],
      ['email.deferred', { to: 'bob@example.org', ...detail }],
    ]);
    // The next attempt claims it again.
    expect(await c.core.delivery.claim(id)).not.toBeNull();
  });

  it('failed: from sending or queued, once, with the reason', async () => {
    const id = await send(['ada@example.org']);
    await c.core.delivery.claim(id);
    await c.core.delivery.failed(id, '550 5.1.1 no such user');
    await c.core.delivery.failed(id, 'again');
    expect(message(id).status).toBe('failed');
    expect(timeline(id).slice(1)).toEqual([
      ['email.failed', { to: ['ada@example.org'], reason: '550 5.1.1 no such user' }],
    ]);
    // Nothing to claim any more.
    expect(await c.core.delivery.claim(id)).toBeNull();
  });
});

describe('simulated outcomes', () => {
  it('a hard bounce: email.bounced, the message bounced, and the recipient suppressed for the next message', async () => {
    const id = await send(['bounce@simulator.test']);
    await deliver(id);
    expect(message(id).status).toBe('bounced');
    expect(timeline(id).at(-1)).toEqual([
      'email.bounced',
      { to: 'bounce@simulator.test', bounce: { class: 'hard', subtype: 'general', smtp_code: '550' } },
    ]);
    expect(c.core.delivery.isSuppressed(c.seed.workspaceId, 'bounce@simulator.test')).toBe(true);

    const next = await send(['bounce@simulator.test']);
    expect(await c.core.delivery.claim(next)).toBeNull();
    expect(message(next).status).toBe('suppressed');
    expect(timeline(next).at(-1)).toEqual(['email.failed', { to: ['bounce@simulator.test'], reason: 'suppressed' }]);
  });

  it('drops a suppressed recipient from a message with others', async () => {
    await deliver(await send(['complaint@simulator.test']));
    const out = await c.core.delivery.claim(await send(['complaint@simulator.test', 'ada@example.org']));
    expect(out!.recipients).toEqual(['ada@example.org']);
  });

  it('a block bounces without suppressing', async () => {
    const id = await send(['block@simulator.test']);
    await deliver(id);
    expect(message(id).status).toBe('bounced');
    expect(c.core.delivery.isSuppressed(c.seed.workspaceId, 'block@simulator.test')).toBe(false);
  });

  it('a complaint: delivered, then complained, and suppressed', async () => {
    const id = await send(['complaint@simulator.test']);
    await deliver(id);
    expect(message(id).status).toBe('complained');
    expect(timeline(id).map(([type]) => type)).toEqual([
      'email.queued',
      'email.sent',
      'email.delivered',
      'email.complained',
    ]);
    expect(c.core.delivery.isSuppressed(c.seed.workspaceId, 'complaint@simulator.test')).toBe(true);
  });

  it('with several recipients the worst outcome wins: bounced over complained over delivered, in any order', async () => {
    const id = await send(['bounce@simulator.test', 'complaint@simulator.test', 'ada@example.org']);
    await deliver(id);
    expect(message(id).status).toBe('bounced');
    // A +label is the same simulator mailbox, not the address the first complaint suppressed.
    const other = await send(['complaint+again@simulator.test', 'ada@example.org']);
    await deliver(other);
    expect(message(other).status).toBe('complained');
  });

  it('a soft bounce is deferred first: email.deferred and an outcome job 5 minutes on, then a soft bounce, not suppressed', async () => {
    const id = await send(['softbounce@simulator.test']);
    await deliver(id);
    const next = START + SIMULATED_DEFERRAL_MS;
    expect(message(id).status).toBe('sent');
    expect(timeline(id).at(-1)).toEqual([
      'email.deferred',
      {
        to: 'softbounce@simulator.test',
        smtp_code: '452',
        reason: 'Mailbox temporarily unavailable (simulated); the provider will retry.',
        next_attempt_at: iso(next),
      },
    ]);
    expect(c.jobs('outcome')).toEqual([
      expect.objectContaining({
        payload: { message_id: id, recipient: 'softbounce@simulator.test', attempt: 2 },
        runAt: next,
      }),
    ]);

    c.clock.advance(SIMULATED_DEFERRAL_MS);
    await c.core.delivery.retryOutcome(id, 'softbounce@simulator.test', 2);
    expect(message(id).status).toBe('bounced');
    expect(timeline(id).at(-1)).toMatchObject(['email.bounced', { bounce: { class: 'soft', smtp_code: '452' } }]);
    expect(c.core.delivery.isSuppressed(c.seed.workspaceId, 'softbounce@simulator.test')).toBe(false);
  });

  it('defer@ is deferred once, then delivered', async () => {
    const id = await send(['defer@simulator.test']);
    await deliver(id);
    expect(timeline(id).at(-1)![0]).toBe('email.deferred');
    await c.core.delivery.retryOutcome(id, 'defer@simulator.test', 2);
    expect(message(id).status).toBe('delivered');
  });
});
