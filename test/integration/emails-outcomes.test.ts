// Simulator outcomes after the hand-over (docs/local-server.md: simulator recipients), their events in the
// message timeline and in the outbox with their payloads (docs/api.md#events), deferrals that resolve only when the
// clock passes next_attempt_at, and suppression (docs/api.md#sending).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.js';
import {
  FROM,
  caughtDetail,
  caughtOf,
  caughtTo,
  getMessage,
  mail,
  outbox,
  rcpt,
  sendOk,
  serviceNow,
  sim,
  type OutboxEvent,
} from './emails-helpers.js';

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer({ sendRate: 10_000 });
});
afterAll(() => s.close());

const TAGS = [{ name: 'flow', value: 'outcomes' }];
const SUBJECT = 'Simulated';

/** Sends to `to` (string or list), runs the hand-over, and returns the id. */
async function deliver(to: string | string[]): Promise<string> {
  const a = await sendOk(s, mail({ to, subject: SUBJECT, tags: TAGS }));
  await s.settle();
  return a.id;
}

const events = (id: string) => outbox(s, s.seed!.workspace_id, id);
const types = (list: { type: string }[]) => list.map((e) => e.type);
const base = (id: string) => ({ message_id: id, from: FROM, subject: SUBJECT, tags: TAGS });

/** Asserts that the timeline of GET /v1/emails/{id} mirrors the outbox: same types, times and details. */
async function expectTimelineMatchesOutbox(id: string): Promise<OutboxEvent[]> {
  const m = await getMessage(s, id);
  const out = events(id);
  expect(m.events.map((e) => e.type)).toEqual(types(out));
  m.events.forEach((e, i) => {
    const { message_id: _m, from: _f, subject: _s, tags: _t, ...detail } = out[i]!.data;
    expect(e.detail).toEqual(detail);
    expect(e.occurred_at).toBe(new Date(out[i]!.created_at).toISOString());
  });
  // Every email.* payload carries message_id, to, from, subject, tags.
  for (const e of out) expect(e.data).toMatchObject(base(id));
  return out;
}

describe('simulator recipients', () => {
  it('delivered@ (and any other address): sent, then delivered', async () => {
    const to = sim('delivered');
    const id = await deliver(to);
    expect((await getMessage(s, id)).status).toBe('delivered');
    const out = await expectTimelineMatchesOutbox(id);
    expect(types(out)).toEqual(['email.queued', 'email.sent', 'email.delivered']);
    expect(out[0]!.data).toEqual({ ...base(id), to: [to] });
    expect(out[1]!.data).toEqual({ ...base(id), to: [to] });
    expect(out[2]!.data).toEqual({ ...base(id), to });
    expect(await caughtTo(s, to)).toHaveLength(1);
  });

  it('bounce@: bounced hard 550 general, the recipient is suppressed: the next message to it ends suppressed', async () => {
    const to = sim('bounce');
    const id = await deliver(to);
    const m = await getMessage(s, id);
    expect(m.status).toBe('bounced');
    const out = await expectTimelineMatchesOutbox(id);
    expect(types(out)).toEqual(['email.queued', 'email.sent', 'email.bounced']);
    expect(out[2]!.data).toEqual({ ...base(id), to, bounce: { class: 'hard', subtype: 'general', smtp_code: '550' } });
    // It was handed over (the provider saw it) before bouncing.
    expect(await caughtOf(s, id)).toHaveLength(1);
    expect(s.core.delivery.isSuppressed(s.seed!.workspace_id, to)).toBe(true);

    const again = await deliver(to);
    const m2 = await getMessage(s, again);
    expect(m2.status).toBe('suppressed');
    const out2 = await expectTimelineMatchesOutbox(again);
    expect(types(out2)).toEqual(['email.queued', 'email.failed']);
    expect(out2[1]!.data).toEqual({ ...base(again), to: [to], reason: 'suppressed' });
    expect(m2.events[1]!.detail.reason).toBe('suppressed');
    expect(await caughtOf(s, again)).toEqual([]);
    expect(await caughtTo(s, to)).toHaveLength(1);

    // Suppression is per workspace-address: another +label of the same box is a different address.
    const other = sim('delivered');
    expect((await getMessage(s, await deliver(other))).status).toBe('delivered');
  });

  it('softbounce@: deferred (452, reason, next_attempt_at), then — only once the clock passes it — bounced soft 452; not suppressed', async () => {
    const to = sim('softbounce');
    const id = await deliver(to);
    let m = await getMessage(s, id);
    expect(m.status).toBe('sent');
    let out = await expectTimelineMatchesOutbox(id);
    expect(types(out)).toEqual(['email.queued', 'email.sent', 'email.deferred']);
    const deferred = out[2]!.data;
    expect(deferred).toEqual({
      ...base(id),
      to,
      smtp_code: '452',
      reason: expect.any(String),
      next_attempt_at: expect.any(String),
    });
    expect(deferred.reason.length).toBeGreaterThan(0);
    const next = Date.parse(deferred.next_attempt_at);
    const now = await serviceNow(s);
    expect(next).toBeGreaterThan(now);

    // Nothing happens until the clock reaches next_attempt_at.
    await s.settle();
    await s.advance((next - now) / 1000 - 1);
    expect(types(events(id))).toEqual(['email.queued', 'email.sent', 'email.deferred']);
    expect((await getMessage(s, id)).status).toBe('sent');

    await s.advance(1);
    m = await getMessage(s, id);
    expect(m.status).toBe('bounced');
    out = await expectTimelineMatchesOutbox(id);
    expect(types(out)).toEqual(['email.queued', 'email.sent', 'email.deferred', 'email.bounced']);
    expect(out[3]!.data).toEqual({
      ...base(id),
      to,
      bounce: { class: 'soft', subtype: expect.any(String), smtp_code: '452' },
    });
    expect(out[3]!.created_at).toBe(next);

    // Not suppressed: the next message to it is handed over again.
    expect(s.core.delivery.isSuppressed(s.seed!.workspace_id, to)).toBe(false);
    const again = await deliver(to);
    expect((await getMessage(s, again)).status).toBe('sent');
    expect(await caughtOf(s, again)).toHaveLength(1);
  });

  it('block@: bounced class block 554; not suppressed', async () => {
    const to = sim('block');
    const id = await deliver(to);
    expect((await getMessage(s, id)).status).toBe('bounced');
    const out = await expectTimelineMatchesOutbox(id);
    expect(types(out)).toEqual(['email.queued', 'email.sent', 'email.bounced']);
    expect(out[2]!.data).toEqual({
      ...base(id),
      to,
      bounce: { class: 'block', subtype: expect.any(String), smtp_code: '554' },
    });
    expect(s.core.delivery.isSuppressed(s.seed!.workspace_id, to)).toBe(false);
    const again = await deliver(to);
    expect((await getMessage(s, again)).status).toBe('bounced');
    expect(await caughtOf(s, again)).toHaveLength(1);
  });

  it('technical@: bounced class technical 421', async () => {
    const to = sim('technical');
    const id = await deliver(to);
    expect((await getMessage(s, id)).status).toBe('bounced');
    const out = await expectTimelineMatchesOutbox(id);
    expect(types(out)).toEqual(['email.queued', 'email.sent', 'email.bounced']);
    expect(out[2]!.data).toEqual({
      ...base(id),
      to,
      bounce: { class: 'technical', subtype: expect.any(String), smtp_code: '421' },
    });
    for (const v of Object.values(out[2]!.data.bounce)) expect(v).toBeTypeOf('string');
  });

  it('complaint@: delivered, then complained; the recipient is suppressed', async () => {
    const to = sim('complaint');
    const id = await deliver(to);
    expect((await getMessage(s, id)).status).toBe('complained');
    const out = await expectTimelineMatchesOutbox(id);
    expect(types(out)).toEqual(['email.queued', 'email.sent', 'email.delivered', 'email.complained']);
    expect(out[2]!.data).toEqual({ ...base(id), to });
    expect(out[3]!.data).toEqual({ ...base(id), to });

    const again = await deliver(to);
    expect((await getMessage(s, again)).status).toBe('suppressed');
    expect(events(again).find((e) => e.type === 'email.failed')!.data.reason).toBe('suppressed');
    expect(await caughtOf(s, again)).toEqual([]);
  });

  it('defer@: deferred, then delivered once the clock passes next_attempt_at', async () => {
    const to = sim('defer');
    const id = await deliver(to);
    expect((await getMessage(s, id)).status).toBe('sent');
    const out = await expectTimelineMatchesOutbox(id);
    expect(types(out)).toEqual(['email.queued', 'email.sent', 'email.deferred']);
    expect(out[2]!.data).toMatchObject({ to, smtp_code: '452' });
    const next = Date.parse(out[2]!.data.next_attempt_at);
    expect(await caughtTo(s, to)).toHaveLength(1); // handed over once; the retry is the provider's

    const now = await serviceNow(s);
    await s.advance((next - now) / 1000 - 1);
    expect((await getMessage(s, id)).status).toBe('sent');
    await s.advance(2);
    expect((await getMessage(s, id)).status).toBe('delivered');
    const final = await expectTimelineMatchesOutbox(id);
    expect(types(final)).toEqual(['email.queued', 'email.sent', 'email.deferred', 'email.delivered']);
    expect(final[3]!.data).toEqual({ ...base(id), to });
    expect(await caughtTo(s, to)).toHaveLength(1);
  });

  it('fail@: failed with email.failed {reason}; the array of recipients; nothing caught', async () => {
    const to = sim('fail');
    const id = await deliver(to);
    expect((await getMessage(s, id)).status).toBe('failed');
    const out = await expectTimelineMatchesOutbox(id);
    expect(types(out)).toEqual(['email.queued', 'email.failed']);
    expect(out[1]!.data).toEqual({ ...base(id), to: [to], reason: expect.any(String) });
    expect(out[1]!.data.reason).not.toBe('suppressed');
    expect(await caughtOf(s, id)).toEqual([]);
  });

  it('suppressed@simulator.test is always suppressed: status suppressed, email.failed reason suppressed, nothing caught', async () => {
    for (const to of ['suppressed@simulator.test', sim('suppressed')]) {
      const id = await deliver(to);
      const m = await getMessage(s, id);
      expect(m.status).toBe('suppressed');
      const out = await expectTimelineMatchesOutbox(id);
      expect(types(out)).toEqual(['email.queued', 'email.failed']);
      expect(out[1]!.data).toEqual({ ...base(id), to: [to], reason: 'suppressed' });
      expect(await caughtOf(s, id)).toEqual([]);
    }
  });

  it('a message to one suppressed and one normal recipient goes to the normal one only', async () => {
    const normal = rcpt();
    const id = await deliver(['suppressed@simulator.test', normal]);
    const m = await getMessage(s, id);
    expect(m.status).toBe('delivered');
    const caught = await caughtDetail(s, id);
    expect(caught.envelope.rcpt_to).toEqual([normal]);
    const out = await expectTimelineMatchesOutbox(id);
    expect(types(out)).toEqual(['email.queued', 'email.sent', 'email.delivered']);
    // Per-recipient events only for the recipient it was sent to.
    expect(out[2]!.data.to).toBe(normal);
  });

  it('a recipient suppressed by an earlier hard bounce is left out of a later message to several recipients', async () => {
    const bounced = sim('bounce');
    await deliver(bounced);
    const normal = rcpt();
    const cc = rcpt('cc');
    const a = await sendOk(s, mail({ to: [bounced, normal], cc: [cc], subject: SUBJECT, tags: TAGS }));
    await s.settle();
    const caught = await caughtDetail(s, a.id);
    expect([...caught.envelope.rcpt_to].sort()).toEqual([normal, cc].sort());
    expect((await getMessage(s, a.id)).status).toBe('delivered');
  });

  it('several recipients: one event per recipient with `to` a string; the message takes the strongest outcome', async () => {
    const ok = sim('delivered');
    const bad = sim('block');
    const id = await deliver([ok, bad]);
    expect((await getMessage(s, id)).status).toBe('bounced');
    const out = await expectTimelineMatchesOutbox(id);
    expect(types(out)).toEqual(['email.queued', 'email.sent', 'email.delivered', 'email.bounced']);
    expect(out[0]!.data.to).toEqual([ok, bad]);
    expect(out[1]!.data.to).toEqual([ok, bad]);
    expect(out[2]!.data.to).toBe(ok);
    expect(out[3]!.data.to).toBe(bad);
  });

  it('the simulator mailbox is matched case-insensitively and with any +label; suppression ignores case', async () => {
    const label = `Mixed${Date.now()}`;
    const to = `BOUNCE+${label}@Simulator.Test`;
    const id = await deliver(to);
    expect((await getMessage(s, id)).status).toBe('bounced');
    // The same mailbox written in another case is the suppressed address too.
    const again = await deliver(`bounce+${label.toLowerCase()}@simulator.test`);
    expect((await getMessage(s, again)).status).toBe('suppressed');
    expect(await caughtOf(s, again)).toEqual([]);
  });
});
