// Scheduling and cancelling (docs/api.md#message-statuses, docs/api.md#sending: queued vs
// scheduled, status machine, cancel, events timeline): scheduled mail waits for the clock, email.queued occurs at
// scheduled_at, cancel is idempotent and refused once handed over, other tenants see 404, and a cancel racing a
// worker's claim has exactly one winner.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type Reply, type TestServer } from '../helpers/server.js';
import {
  addDomain,
  caughtOf,
  caughtTo,
  createKey,
  expectProblem,
  getMessage,
  mail,
  newTenant,
  outbox,
  publishAndVerify,
  rcpt,
  send,
  sendOk,
  seedTenant,
  serviceNow,
  sessionOf,
} from './emails-helpers.js';

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer({ sendRate: 10_000 });
});
afterAll(() => s.close());

const cancel = (id: string, key = s.seed!.api_key_test) => s.call('POST', `/v1/emails/${id}/cancel`, { token: key });
const at = (ms: number) => new Date(ms).toISOString();

/** Runs `fn` with the background scheduler paused, so queued mail stays queued until settle(). */
async function paused<T>(fn: () => Promise<T>): Promise<T> {
  await s.scheduler.stop();
  try {
    return await fn();
  } finally {
    s.scheduler.start();
  }
}

describe('scheduled_at', () => {
  it('in the future → 202 scheduled; nothing is sent until the clock passes it; then queued (at scheduled_at) and delivered', async () => {
    const to = rcpt();
    const now = await serviceNow(s);
    const when = now + 3600_000;
    const a = await sendOk(s, mail({ to, scheduled_at: at(when) }));
    expect(a.status).toBe('scheduled');
    let m = await getMessage(s, a.id);
    expect(m.status).toBe('scheduled');
    expect((m as any).scheduled_at).toBe(at(when));
    expect(m.events).toEqual([]); // email.queued only when it enters queued
    expect(outbox(s, s.seed!.workspace_id, a.id)).toEqual([]);

    await s.settle();
    await s.advance(3599);
    expect(await caughtTo(s, to)).toEqual([]);
    expect((await getMessage(s, a.id)).status).toBe('scheduled');

    await s.advance(1);
    m = await getMessage(s, a.id);
    expect(m.status).toBe('delivered');
    expect(m.events.map((e) => e.type)).toEqual(['email.queued', 'email.sent', 'email.delivered']);
    expect(m.events[0]!.occurred_at).toBe(at(when));
    expect(m.events[0]!.detail).toEqual({ to: [to] });
    const queued = outbox(s, s.seed!.workspace_id, a.id)[0]!;
    expect(queued.type).toBe('email.queued');
    expect(queued.created_at).toBe(when);
    const caught = await caughtTo(s, to);
    expect(caught).toHaveLength(1);
    expect(caught[0].message_id).toBe(a.id);
  });

  it('with a time-zone offset is the same instant', async () => {
    const now = await serviceNow(s);
    const when = now + 7200_000;
    // The same instant written at +02:00.
    const local = new Date(when + 2 * 3600_000).toISOString().replace('Z', '+02:00');
    const a = await sendOk(s, mail({ scheduled_at: local }));
    expect(a.status).toBe('scheduled');
    expect(((await getMessage(s, a.id)) as any).scheduled_at).toBe(at(when));
    expect((await cancel(a.id)).status).toBe(200);
  });

  it('in the past or exactly now → queued at once', async () => {
    const now = await serviceNow(s);
    const past = await sendOk(s, mail({ scheduled_at: at(now - 86_400_000) }));
    expect(past.status).toBe('queued');
    const exactly = await sendOk(s, mail({ scheduled_at: at(now) }));
    expect(exactly.status).toBe('queued');
    await s.settle();
    expect((await getMessage(s, past.id)).status).toBe('delivered');
    expect((await getMessage(s, exactly.id)).status).toBe('delivered');
    expect((await getMessage(s, past.id)).events[0]!.occurred_at).toBe(at(now));
  });
});

describe('cancel', () => {
  it('a scheduled message → 200 {id, status: cancelled}; again → the same 200; it never arrives', async () => {
    const to = rcpt();
    const now = await serviceNow(s);
    const a = await sendOk(s, mail({ to, scheduled_at: at(now + 600_000) }));
    const c1 = await cancel(a.id);
    expect(c1.status, c1.text).toBe(200);
    expect(c1.body).toEqual({ id: a.id, status: 'cancelled' });
    const c2 = await cancel(a.id);
    expect(c2.status).toBe(200);
    expect(c2.body).toEqual({ id: a.id, status: 'cancelled' });
    expect((await getMessage(s, a.id)).status).toBe('cancelled');

    await s.advance(601);
    await s.advance(86_400);
    expect(await caughtTo(s, to)).toEqual([]);
    const m = await getMessage(s, a.id);
    expect(m.status).toBe('cancelled');
    expect(m.events.map((e) => e.type)).not.toContain('email.queued');
    expect(m.events.map((e) => e.type)).not.toContain('email.sent');
  });

  it('a queued message not yet claimed → 200 cancelled; nothing is sent', async () => {
    const to = rcpt();
    const a = await paused(async () => {
      const acc = await sendOk(s, mail({ to }));
      expect(acc.status).toBe('queued');
      const c = await cancel(acc.id);
      expect(c.status, c.text).toBe(200);
      expect(c.body).toEqual({ id: acc.id, status: 'cancelled' });
      return acc;
    });
    await s.settle();
    expect(await caughtTo(s, to)).toEqual([]);
    const m = await getMessage(s, a.id);
    expect(m.status).toBe('cancelled');
    expect(m.events.map((e) => e.type)).toEqual(['email.queued']);
  });

  it('after delivery → 422 message_not_cancellable; the message is unchanged', async () => {
    const a = await sendOk(s, mail());
    await s.settle();
    expect((await getMessage(s, a.id)).status).toBe('delivered');
    const c = await cancel(a.id);
    expectProblem(c, 422, 'message_not_cancellable');
    expect(c.body.detail).toContain('delivered');
    expect((await getMessage(s, a.id)).status).toBe('delivered');
  });

  it('unknown ids and another tenant’s messages → 404 on get and cancel; the other tenant’s message is untouched', async () => {
    const t = await newTenant(s, 'cancel-other');
    const d = await addDomain(s, t.token, 'cancel-other.test');
    await publishAndVerify(s, t.token, d.id);
    const theirKey = await createKey(s, t.token, { scopes: ['emails:send', 'emails:read'] });
    const to = rcpt();
    const now = await serviceNow(s);
    const theirs = await sendOk(s, mail({ to, from: `hi@${d.name}`, scheduled_at: at(now + 60_000) }), {
      key: theirKey.key,
    });

    expectProblem(await s.call('GET', `/v1/emails/${theirs.id}`, { token: s.seed!.api_key_test }), 404, 'not_found');
    expectProblem(await cancel(theirs.id), 404, 'not_found');
    expectProblem(
      await s.call('GET', '/v1/emails/msg_000000000000000000000000', { token: s.seed!.api_key_test }),
      404,
      'not_found',
    );
    expectProblem(await cancel('msg_000000000000000000000000'), 404, 'not_found');

    expect((await getMessage(s, theirs.id, theirKey.key)).status).toBe('scheduled');
    await s.advance(61);
    expect((await getMessage(s, theirs.id, theirKey.key)).status).toBe('delivered');
    expect(await caughtTo(s, to)).toHaveLength(1);
  });

  it('needs emails:send (a read-only key → 403 insufficient_scope); a session → 403 api_key_required', async () => {
    const token = await sessionOf(s, seedTenant(s));
    const reader = await createKey(s, token, { scopes: ['emails:read'] });
    const now = await serviceNow(s);
    const a = await sendOk(s, mail({ scheduled_at: at(now + 60_000) }));
    expectProblem(await cancel(a.id, reader.key), 403, 'insufficient_scope');
    expectProblem(await s.call('POST', `/v1/emails/${a.id}/cancel`, { token }), 403, 'api_key_required');
    expect((await getMessage(s, a.id, reader.key)).status).toBe('scheduled');
    expect((await cancel(a.id)).status).toBe(200);
  });
});

describe('cancel racing a worker’s claim: exactly one winner', () => {
  type Outcome = { cancel: Reply; claimed: boolean; id: string; to: string };

  /** After the race: either cancelled and nothing sent, or sending → delivered and cancel refused with 422. */
  async function expectOneWinner(o: Outcome) {
    await s.settle();
    const m = await getMessage(s, o.id);
    const caught = await caughtOf(s, o.id);
    if (o.claimed) {
      expectProblem(o.cancel, 422, 'message_not_cancellable');
      expect(m.status).toBe('delivered');
      expect(caught).toHaveLength(1);
    } else {
      expect(o.cancel.status, o.cancel.text).toBe(200);
      expect(o.cancel.body).toEqual({ id: o.id, status: 'cancelled' });
      expect(m.status).toBe('cancelled');
      expect(caught).toEqual([]);
      expect(await caughtTo(s, o.to)).toEqual([]);
    }
  }

  it('claim first, then cancel: the claim wins, cancel → 422, the message is sent', async () => {
    const to = rcpt();
    const o = await paused(async () => {
      const a = await sendOk(s, mail({ to }));
      const out = await s.core.delivery.claim(a.id);
      expect(out).not.toBeNull();
      return { id: a.id, to, claimed: true, cancel: await cancel(a.id) };
    });
    await expectOneWinner(o);
  });

  it('cancel first, then claim: the cancel wins, the claim gets nothing, nothing is sent', async () => {
    const to = rcpt();
    const o = await paused(async () => {
      const a = await sendOk(s, mail({ to }));
      const c = await cancel(a.id);
      const out = await s.core.delivery.claim(a.id);
      expect(out).toBeNull();
      return { id: a.id, to, claimed: false, cancel: c };
    });
    await expectOneWinner(o);
  });

  it('a scheduled message: claim and cancel in both orders', async () => {
    for (const claimFirst of [true, false]) {
      const to = rcpt();
      const now = await serviceNow(s);
      const o = await paused(async () => {
        const a = await sendOk(s, mail({ to, scheduled_at: at(now + 60_000) }));
        expect(a.status).toBe('scheduled');
        let claimed = false;
        let c: Reply;
        if (claimFirst) {
          claimed = (await s.core.delivery.claim(a.id)) !== null;
          c = await cancel(a.id);
        } else {
          c = await cancel(a.id);
          claimed = (await s.core.delivery.claim(a.id)) !== null;
        }
        expect(claimed).toBe(claimFirst);
        return { id: a.id, to, claimed, cancel: c };
      });
      await s.advance(61); // its job becomes due: a claimed message is handed over, a cancelled one is not
      await expectOneWinner(o);
    }
  });

  it('issued concurrently, in many interleavings, there is always exactly one winner', async () => {
    // The claim runs at different points while the cancel request is in flight.
    const schedules: ((claim: () => Promise<void>) => Promise<void>)[] = [
      async (claim) => claim(),
      async (claim) => {
        await Promise.resolve();
        await claim();
      },
      (claim) => new Promise((resolve) => setImmediate(() => void claim().then(resolve))),
      (claim) => new Promise((resolve) => setImmediate(() => setImmediate(() => void claim().then(resolve)))),
      (claim) => new Promise((resolve) => process.nextTick(() => void claim().then(resolve))),
    ];
    const outcomes: Outcome[] = [];
    await paused(async () => {
      for (let round = 0; round < 4; round++) {
        for (const schedule of schedules) {
          const to = rcpt('race');
          const a = await sendOk(s, mail({ to }));
          let claimed = false;
          const [c] = await Promise.all([
            cancel(a.id),
            schedule(async () => {
              claimed = (await s.core.delivery.claim(a.id)) !== null;
            }),
          ]);
          outcomes.push({ id: a.id, to, claimed, cancel: c });
        }
      }
    });
    for (const o of outcomes) {
      // The two never both win, and one always does.
      expect(o.claimed && o.cancel.status === 200).toBe(false);
      expect(o.claimed || o.cancel.status === 200).toBe(true);
      await expectOneWinner(o);
    }
  });

  it('the scheduler’s own worker racing a cancel: one winner', async () => {
    const results: Outcome[] = [];
    for (let i = 0; i < 10; i++) {
      const to = rcpt('worker-race');
      const a = await sendOk(s, mail({ to }));
      const c = await cancel(a.id); // the background scheduler may or may not have claimed it by now
      results.push({ id: a.id, to, claimed: c.status === 422, cancel: c });
    }
    for (const o of results) await expectOneWinner(o);
  });
});

it('sending statuses reject cancel: 422 while sending, and the 422 names the status', async () => {
  const a = await paused(async () => {
    const acc = await sendOk(s, mail());
    expect(await s.core.delivery.claim(acc.id)).not.toBeNull();
    const c = await cancel(acc.id);
    expectProblem(c, 422, 'message_not_cancellable');
    expect(c.body.detail).toContain('sending');
    return acc;
  });
  await s.settle();
  expect((await getMessage(s, a.id)).status).toBe('delivered');
  const replay = await send(s, mail()); // the server keeps serving after the races
  expect(replay.status).toBe(202);
});
