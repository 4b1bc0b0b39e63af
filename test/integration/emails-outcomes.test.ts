// Simulator outcomes after the hand-over (docs/local-server.md: simulator recipients), their events in the
// message timeline and in the outbox with their payloads (docs/api.md#events), deferrals that resolve only when the
// clock passes next_attempt_at, and suppression (docs/api.md#sending).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.js';
import {
  FROM,
  ISO_MS_Z,
  caughtDetail,
  caughtOf,
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

type Data = Record<string, unknown>;
/** An event a simulator outcome raises, as [type, payload beyond the fields every email.* event carries]. */
type Expected = (to: string) => [string, Data];

const queued: Expected = (to) => ['email.queued', { to: [to] }];
const sent: Expected = (to) => ['email.sent', { to: [to] }];
/** A per-recipient event: its `to` is the one address. */
const each =
  (type: string, data: Data = {}): Expected =>
  (to) => [`email.${type}`, { to, ...data }];
const failed =
  (reason: unknown): Expected =>
  (to) => ['email.failed', { to: [to], reason }];
const bounced = (kind: string, subtype: string, code: string) =>
  each('bounced', { bounce: { class: kind, subtype, smtp_code: code } });
const deferred = each('deferred', {
  smtp_code: '452',
  reason: expect.stringMatching(/\S/),
  next_attempt_at: expect.stringMatching(ISO_MS_Z),
});

interface Outcome {
  /** The simulator mailbox, written to with a +label of its own. */
  box: string;
  /** The message's status and its events once it is handed over. */
  status: string;
  events: Expected[];
  /** Copies the sink catches: 1 when the provider took the message, 0 when it was refused before. */
  caught: number;
  /** A deferral's outcome, only once the clock passes its next_attempt_at (five minutes on). */
  later?: { status: string; event: Expected };
  /**
   * The suppression list: `none` leaves the recipient off it (the next message goes out the same way); `after` puts
   * the address on it (that +label only), so the next message ends suppressed; `always` is the list's own address.
   */
  suppression: 'none' | 'after' | 'always';
}

/** docs/local-server.md, "Simulator recipients": one row each. */
const OUTCOMES: Outcome[] = [
  { box: 'delivered', status: 'delivered', events: [queued, sent, each('delivered')], caught: 1, suppression: 'none' },
  {
    box: 'bounce',
    status: 'bounced',
    events: [queued, sent, bounced('hard', 'general', '550')],
    caught: 1,
    suppression: 'after',
  },
  {
    box: 'softbounce',
    status: 'sent',
    events: [queued, sent, deferred],
    caught: 1,
    later: { status: 'bounced', event: bounced('soft', 'mailbox_full', '452') },
    suppression: 'none',
  },
  {
    box: 'block',
    status: 'bounced',
    events: [queued, sent, bounced('block', 'policy', '554')],
    caught: 1,
    suppression: 'none',
  },
  {
    box: 'technical',
    status: 'bounced',
    events: [queued, sent, bounced('technical', 'service_unavailable', '421')],
    caught: 1,
    suppression: 'none',
  },
  {
    box: 'complaint',
    status: 'complained',
    events: [queued, sent, each('delivered'), each('complained')],
    caught: 1,
    suppression: 'after',
  },
  {
    box: 'defer',
    status: 'sent',
    events: [queued, sent, deferred],
    caught: 1,
    later: { status: 'delivered', event: each('delivered') },
    suppression: 'none',
  },
  {
    box: 'fail',
    status: 'failed',
    events: [queued, failed(expect.not.stringMatching(/^suppressed$/))],
    caught: 0,
    suppression: 'none',
  },
  { box: 'suppressed', status: 'suppressed', events: [queued, failed('suppressed')], caught: 0, suppression: 'always' },
];

/** `softbounce@: queued, sent, deferred, bounced; suppression none` */
function title(o: Outcome): string {
  const all = [...o.events, ...(o.later ? [o.later.event] : [])].map((ev) => ev('')[0].replace('email.', ''));
  return `${o.box}@: ${all.join(', ')}; suppression ${o.suppression}`;
}

describe('simulator recipients', () => {
  /** The outbox's events of a message as [type, data], against the expected ones filled in for `to`. */
  const expectEvents = (out: OutboxEvent[], id: string, to: string, expected: Expected[]) =>
    expect(out.map((e) => [e.type, e.data])).toEqual(
      expected.map((ev) => {
        const [type, data] = ev(to);
        return [type, { ...base(id), ...data }];
      }),
    );

  for (const o of OUTCOMES)
    it(title(o), async () => {
      const to = sim(o.box);
      const id = await deliver(to);
      expect((await getMessage(s, id)).status).toBe(o.status);
      const out = await expectTimelineMatchesOutbox(id);
      expectEvents(out, id, to, o.events);
      expect(await caughtOf(s, id)).toHaveLength(o.caught);

      if (o.later) {
        // Nothing happens until the clock reaches next_attempt_at, five minutes after the deferral.
        const next = Date.parse(out.at(-1)!.data.next_attempt_at);
        expect(next - out.at(-1)!.created_at).toBe(5 * 60_000);
        await s.advance((next - (await serviceNow(s))) / 1000 - 1);
        expect(types(events(id))).toEqual(types(out));
        expect((await getMessage(s, id)).status).toBe(o.status);
        await s.advance(1);
        expect((await getMessage(s, id)).status).toBe(o.later.status);
        const final = await expectTimelineMatchesOutbox(id);
        expectEvents(final, id, to, [...o.events, o.later.event]);
        expect(final.at(-1)!.created_at).toBe(next);
        // Handed over once: the retry is the provider's.
        expect(await caughtOf(s, id)).toHaveLength(o.caught);
      }

      if (o.suppression !== 'always') {
        expect(s.core.delivery.isSuppressed(s.seed!.workspace_id, to)).toBe(o.suppression === 'after');
        // Per workspace and address: the same mailbox under another +label is not on the list.
        expect(s.core.delivery.isSuppressed(s.seed!.workspace_id, sim(o.box))).toBe(false);
      }
      const again = await deliver(to);
      if (o.suppression === 'none') {
        expect((await getMessage(s, again)).status).toBe(o.status);
        expect(await caughtOf(s, again)).toHaveLength(o.caught);
      } else {
        expect((await getMessage(s, again)).status).toBe('suppressed');
        expectEvents(await expectTimelineMatchesOutbox(again), again, to, [queued, failed('suppressed')]);
        expect(await caughtOf(s, again)).toEqual([]);
      }
    });

  it('suppressed@simulator.test itself, without a +label, is always suppressed', async () => {
    const id = await deliver('suppressed@simulator.test');
    expect((await getMessage(s, id)).status).toBe('suppressed');
    expect(events(id).at(-1)!.data).toMatchObject({ to: ['suppressed@simulator.test'], reason: 'suppressed' });
    expect(await caughtOf(s, id)).toEqual([]);
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
