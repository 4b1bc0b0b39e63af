// Fair to every workspace (docs/api.md#sending): due deliveries are taken round-robin across workspaces, so one
// workspace's backlog does not hold another's mail behind all of it. The backlog is made with the scheduler stopped,
// and the order the sink caught the mail in is read back.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { addDomain, createKey, mail, newTenant, publishAndVerify, sendOk } from './emails-helpers.js';

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer({ sendRate: 10_000 });
});
afterAll(() => s.close());

/** The subjects of the test's caught messages (not the sign-up's own mail), in the order the sink caught them. */
async function caughtInOrder(): Promise<string[]> {
  const r = await s.admin('GET', '/sandbox/messages?limit=100');
  expect(r.status, r.text).toBe(200);
  const subjects = (r.body.data as { subject: string }[]).map((m) => m.subject).reverse();
  return subjects.filter((m) => /^(flood|marker) /.test(m));
}

describe('fairness across workspaces', () => {
  it("a workspace's mail is taken in turn with another's backlog, not behind all of it; each keeps its own order", async () => {
    const t = await newTenant(s, 'fair');
    const d = await addDomain(s, t.token, 'fair.test');
    await publishAndVerify(s, t.token, d.id);
    const theirs = await createKey(s, t.token, { scopes: ['emails:send'] });

    const FLOOD = 60;
    await s.scheduler.stop();
    try {
      // The seeded workspace floods first; the other workspace's two messages come after all of it.
      for (let n = 1; n <= FLOOD; n++) await sendOk(s, mail({ subject: `flood ${n}` }));
      for (let n = 1; n <= 2; n++)
        await sendOk(s, mail({ from: `hi@${d.name}`, subject: `marker ${n}` }), { key: theirs.key });
    } finally {
      s.scheduler.start();
    }
    await s.settle();

    const order = await caughtInOrder();
    expect(order).toHaveLength(FLOOD + 2);
    // First come first served would catch the markers last (61st and 62nd). Taken in turn, they are in the first
    // claim of jobs (32 in flight), whatever order the deliveries in flight finish in.
    const markers = ['marker 1', 'marker 2'].map((m) => order.indexOf(m));
    expect(Math.max(...markers), order.join(', ')).toBeLessThan(32);
    // Every job in flight delivers at its own pace, but a workspace's own mail is taken in its order: each flood
    // message is caught within the 32 in flight of where it was sent.
    const flood = order.filter((m) => m.startsWith('flood ')).map((m) => Number(m.slice(6)));
    for (const [i, n] of flood.entries()) expect(Math.abs(n - 1 - i), order.join(', ')).toBeLessThan(32);
  });
});
