// A machine whose clock ran two hours ahead, then kill -9, then a start on the right clock: the real binary under
// libfaketime (Debian's faketime) accepts mail while the sink refuses some of it, is killed while deliveries are in
// flight, and the next start, on the machine's own clock, delivers every accepted message at once (the refused ones
// after their own 2 s), each caught once, while a scheduled send keeps the instant its sender chose
// (src/server/core/README.md, How a job runs).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt, kill9, killAll, libfaketime, serve, stop, type Served } from '../helpers/binary.js';

const AHEAD_MS = 2 * 3600_000;
const MESSAGES = 122;
const FROM = 'Shop <orders@example.test>';

async function call(s: Served, method: string, path: string, token: string, body?: unknown) {
  const res = await fetch(s.origin + path, {
    method,
    headers: {
      authorization: `Bearer ${token}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined, text };
}

/** How many times the sink caught each /v1 message (every page of GET /sandbox/messages). */
async function caughtCounts(s: Served): Promise<Map<string, number>> {
  const count = new Map<string, number>();
  let after: string | undefined;
  for (let page = 0; page < 100; page++) {
    const r = await call(s, 'GET', `/sandbox/messages?limit=100${after ? `&after=${after}` : ''}`, s.ready.admin_token);
    expect(r.status, r.text).toBe(200);
    for (const m of r.body.data) if (m.message_id) count.set(m.message_id, (count.get(m.message_id) ?? 0) + 1);
    if (!r.body.has_more) return count;
    after = r.body.data.at(-1).id;
  }
  throw new Error('more than 100 pages of caught mail');
}

describe('svc serve killed while its clock ran ahead, restarted on the right clock', () => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-e2e-clock-ahead-'));
  beforeAll(() => ensureBuilt(), 120_000);
  afterAll(() => {
    killAll();
    rmSync(dir, { recursive: true, force: true });
  });

  it('delivers every accepted message once, at once, and keeps a scheduled send for its instant', async () => {
    const args = ['--data-dir', join(dir, 'data'), '--send-rate', '1000000'];
    const ahead = await serve(args, { LD_PRELOAD: libfaketime(), FAKETIME: '+2h' });
    const admin = ahead.ready.admin_token;
    const key = ahead.ready.seed!.api_key_test!;
    const clock = await call(ahead, 'GET', '/sandbox/clock', admin);
    expect(Date.parse(clock.body.now) - Date.now()).toBeGreaterThan(AHEAD_MS - 60_000);

    // The sink refuses the first 30 hand-overs: those messages are deferred, their retries due 2 s on.
    const rules = [{ match: { smtp: 'rcpt' }, action: { code: 451 }, times: 30 }];
    expect((await call(ahead, 'PUT', '/sandbox/chaos', admin, { rules })).status).toBe(200);
    const when = Date.parse(clock.body.now) + 3600_000;
    const scheduled = await call(ahead, 'POST', '/v1/emails', key, {
      from: FROM,
      to: 'later@example.org',
      subject: 'Later',
      text: 'At the hour its sender chose.',
      scheduled_at: new Date(when).toISOString(),
    });
    expect(scheduled.status, scheduled.text).toBe(202);

    // Four loops send until MESSAGES are accepted; the kill follows the last 202 at once, deliveries in flight.
    const accepted: string[] = [];
    const loop = async (n: number) => {
      for (let i = n; accepted.length < MESSAGES; i += 4) {
        const r = await call(ahead, 'POST', '/v1/emails', key, {
          from: FROM,
          to: `order-${i}@example.org`,
          subject: `Order ${i}`,
          text: `Your order ${i} is on its way.`,
        });
        expect(r.status, r.text).toBe(202);
        if (accepted.length < MESSAGES) accepted.push(r.body.id);
      }
    };
    await Promise.all([0, 1, 2, 3].map(loop));
    expect(await kill9(ahead)).toMatchObject({ signal: 'SIGKILL' });

    const right = await serve(args);
    try {
      const now = Date.parse((await call(right, 'GET', '/sandbox/clock', admin)).body.now);
      expect(Math.abs(now - Date.now())).toBeLessThan(60_000);
      // Caught within seconds, not once the clock has caught up two hours later.
      await expect
        .poll(
          async () => {
            const counts = await caughtCounts(right);
            return accepted.filter((id) => !counts.has(id)).length;
          },
          { timeout: 45_000, interval: 200 },
        )
        .toBe(0);
      const counts = await caughtCounts(right);
      expect([...counts].filter(([, n]) => n > 1)).toEqual([]);
      for (const id of [accepted[0]!, accepted[MESSAGES - 1]!]) {
        const m = await call(right, 'GET', `/v1/emails/${id}`, key);
        expect(m.body.status, id).toBe('delivered');
      }
      const later = await call(right, 'GET', `/v1/emails/${scheduled.body.id}`, key);
      expect(later.body.status).toBe('scheduled');
      expect(later.body.scheduled_at).toBe(new Date(when).toISOString());
      expect(counts.has(scheduled.body.id)).toBe(false);
    } finally {
      expect(await stop(right)).toEqual({ code: 0, signal: null });
    }
  }, 90_000);
});
