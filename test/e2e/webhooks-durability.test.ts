// kill -9 between webhook attempts: the real binary on one data directory, SIGKILLed after each attempt; the next
// start makes the next attempt when the clock reaches it, numbered on from the last, for the same event.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt, kill9, killAll, serve, stop, type Served } from '../helpers/binary.js';
import { startReceiver, type Receiver } from '../helpers/receiver.js';

describe('webhook attempts across kill -9', () => {
  let dir: string;
  let rx: Receiver;
  let s: Served | undefined;
  beforeAll(async () => {
    ensureBuilt();
    dir = mkdtempSync(join(tmpdir(), 'svc-webhooks-kill-'));
    // Fails twice, then takes it.
    rx = await startReceiver((n) => (n < 3 ? 500 : 200));
  }, 120_000);
  afterAll(async () => {
    if (s) await stop(s);
    killAll();
    await rx.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const start = () => serve(['--data-dir', join(dir, 'data'), '--clock', 'manual']);
  const admin = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(s!.origin + path, {
      method,
      headers: {
        authorization: `Bearer ${s!.ready.admin_token}`,
        ...(body ? { 'content-type': 'application/json' } : {}),
      },
      body: body ? JSON.stringify(body) : undefined,
    });
    return { status: res.status, body: (await res.json().catch(() => null)) as any };
  };

  /** Waits until the server has recorded `n` attempts: from then on, a kill falls between attempts. */
  const recorded = (workspace: string, n: number) =>
    expect
      .poll(
        async () =>
          (await admin('GET', `/sandbox/webhooks?workspace_id=${workspace}`)).body.data[0].recent_attempts.length,
        { timeout: 10_000 },
      )
      .toBe(n);

  it('loses no attempt: each restart makes the next one on time, for the same event', async () => {
    s = await start();
    const seed = s.ready.seed!;
    const created = await admin('POST', '/sandbox/webhooks', {
      workspace_id: seed.workspace_id,
      url: rx.url,
      events: ['email.delivered'],
    });
    expect(created.status).toBe(201);
    const sent = await fetch(`${s.ready.api}/emails`, {
      method: 'POST',
      headers: { authorization: `Bearer ${seed.api_key_test}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        from: 'orders@example.test',
        to: 'delivered@simulator.test',
        subject: 'Durable',
        text: 'Hi',
      }),
    });
    expect(sent.status).toBe(202);
    // Work due now runs without a clock move: the first attempt arrives.
    await rx.waitFor(1);
    await recorded(seed.workspace_id, 1);
    await kill9(s);

    // A new process on the same data: the second attempt is due 30 s after the first, on the service clock.
    s = await start();
    expect((await admin('POST', '/sandbox/clock', { advance_seconds: 30 })).status).toBe(200);
    await rx.waitFor(2);
    await recorded(seed.workspace_id, 2);
    await kill9(s);

    s = await start();
    expect((await admin('POST', '/sandbox/clock', { advance_seconds: 120 })).status).toBe(200);
    await rx.waitFor(3);
    expect(rx.received.map((r) => r.headers['service-delivery-attempt'])).toEqual(['1', '2', '3']);
    expect(new Set(rx.received.map((r) => r.headers['service-event-id'])).size).toBe(1);
    expect(new Set(rx.received.map((r) => r.body)).size).toBe(1);

    const list = await admin('GET', `/sandbox/webhooks?workspace_id=${seed.workspace_id}`);
    const attempts = list.body.data[0].recent_attempts.map((a: { attempt: number; status_code: number }) => [
      a.attempt,
      a.status_code,
    ]);
    expect(attempts).toEqual([
      [3, 200],
      [2, 500],
      [1, 500],
    ]);
    // Delivered: nothing more, however far the clock goes.
    expect((await admin('POST', '/sandbox/clock', { advance_seconds: 2 * 86400 })).status).toBe(200);
    expect(rx.received).toHaveLength(3);
  }, 90_000);
});
