// A wall clock stepped back (an NTP correction, a restored VM) stops nothing: the sending bucket and the throttles
// measure intervals on a reading that does not go back, and caught mail's ids keep the order it arrived in
// (docs/api.md#rate-limits, docs/api.md: ids).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import nodemailer from 'nodemailer';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HOUR, iso, MINUTE, SECOND } from '../../src/lib/clock.js';
import { steppableTime } from '../helpers/clock.js';
import { startReceiver } from '../helpers/receiver.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { caughtOf, expectProblem, getMessage, mail, send, sendOk, serviceNow } from './emails-helpers.js';

describe('a wall clock stepped back', () => {
  const time = steppableTime();
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer({ clock: 'real', time: time.sources, sendRate: 1 });
  });
  afterAll(() => s.close());

  it('leaves the sending bucket as it was: a send waits a second for its token, not an hour for the clock', async () => {
    for (let i = 0; i < 2; i++) expect((await send(s, mail())).status).toBe(202);
    const limited = await send(s, mail());
    expectProblem(limited, 429, 'rate_limited');
    expect(limited.headers.get('retry-after')).toBe('1');

    time.step(-HOUR);
    const after = await send(s, mail());
    expectProblem(after, 429, 'rate_limited');
    expect(after.headers.get('retry-after')).toBe('1');
    time.pass(SECOND);
    expect((await send(s, mail())).status).toBe(202);
  });

  it('leaves the login throttle as it was: a throttled account waits out its 15 minutes, no more', async () => {
    const login = (password: string) => s.call('POST', '/v1/auth/login', { body: { email: s.seed!.email, password } });
    for (let i = 0; i < 10; i++) expectProblem(await login('not the password'), 401, 'invalid_credentials');
    const throttled = await login(s.seed!.password);
    expectProblem(throttled, 429, 'rate_limited');
    expect(throttled.headers.get('retry-after')).toBe('900');
    time.step(-HOUR);
    const after = await login(s.seed!.password);
    expectProblem(after, 429, 'rate_limited');
    expect(after.headers.get('retry-after')).toBe('900');
    time.pass(900 * SECOND);
    expect((await login(s.seed!.password)).status).toBe(200);
  });

  it('keeps caught mail in the order it arrived: a later message has a later id, though an earlier time', async () => {
    const smtp = nodemailer.createTransport({ host: '127.0.0.1', port: s.smtpPort, secure: false, ignoreTLS: true });
    const to = 'stepped@example.org';
    await smtp.sendMail({ from: 'a@example.org', to, subject: 'first', text: 'one' });
    time.step(-HOUR);
    await smtp.sendMail({ from: 'a@example.org', to, subject: 'second', text: 'two' });
    smtp.close();
    const listed = (await s.admin('GET', `/sandbox/messages?to=${to}`)).body.data as {
      id: string;
      subject: string;
      received_at: string;
    }[];
    expect(listed.map((m) => m.subject)).toEqual(['second', 'first']);
    expect(Date.parse(listed[0]!.received_at)).toBeLessThan(Date.parse(listed[1]!.received_at));
    expect(listed[0]!.id > listed[1]!.id).toBe(true);
  });
});

// A step of the wall clock in a running server holds back no retry and lets none run early: a delay is measured on a
// reading that does not step. A scheduled send keeps the instant its sender chose, on the wall clock as it now reads
// (src/server/core/README.md, How a job runs).
describe('a wall clock stepped in a running server', () => {
  const time = steppableTime();
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer({ clock: 'real', time: time.sources, sendRate: 1000 });
  });
  afterAll(() => s.close());

  const status = async (id: string) => (await getMessage(s, id)).status;

  /** A message whose first hand-over the sink refused with a 451: `queued`, its retry due 2 s later. */
  async function deferred(): Promise<string> {
    expect((await s.admin('PUT', '/sandbox/chaos', { rules: [refuseOnce] })).status).toBe(200);
    const { id } = await sendOk(s, mail());
    await s.settle();
    const m = await getMessage(s, id);
    expect(m.status).toBe('queued');
    expect(m.events.map((e) => e.type)).toContain('email.deferred');
    return id;
  }
  const refuseOnce = { match: { smtp: 'rcpt' }, action: { code: 451 }, times: 1 };

  it('back an hour: a deferral runs 2 s later, not an hour later', async () => {
    const id = await deferred();
    time.step(-HOUR);
    time.pass(2 * SECOND - 1);
    await s.settle();
    expect(await status(id)).toBe('queued');
    time.pass(1);
    await s.settle();
    expect(await status(id)).toBe('delivered');
    expect(await caughtOf(s, id)).toHaveLength(1);
  });

  it('forward an hour: a deferral still waits its 2 s', async () => {
    const id = await deferred();
    time.step(HOUR);
    await s.settle();
    expect(await status(id)).toBe('queued');
    time.pass(2 * SECOND);
    await s.settle();
    expect(await status(id)).toBe('delivered');
  });

  it("a webhook's retries keep their schedule, back an hour and forward an hour", async () => {
    const rx = await startReceiver((n) => (n < 3 ? 503 : 204));
    try {
      const created = await s.admin('POST', '/sandbox/webhooks', {
        workspace_id: s.seed!.workspace_id,
        url: rx.url,
        events: ['email.delivered'],
      });
      expect(created.status, created.text).toBe(201);
      await sendOk(s, mail({ to: 'delivered@simulator.test' }));
      await s.settle();
      expect(rx.received).toHaveLength(1);
      // The second attempt is due 30 s after the first, the third 2 min after it.
      time.step(-HOUR);
      time.pass(30 * SECOND - 1);
      await s.settle();
      expect(rx.received).toHaveLength(1);
      time.pass(1);
      await s.settle();
      expect(rx.received).toHaveLength(2);
      time.step(HOUR);
      time.pass(90 * SECOND - 1);
      await s.settle();
      expect(rx.received).toHaveLength(2);
      time.pass(1);
      await s.settle();
      expect(rx.received.map((r) => r.headers['service-delivery-attempt'])).toEqual(['1', '2', '3']);
    } finally {
      await rx.close();
    }
  });

  it('back an hour: a scheduled send waits for its instant on the wall clock, an hour more', async () => {
    const when = time.sources.wall() + 30 * MINUTE;
    const { id } = await sendOk(s, mail({ scheduled_at: iso(when) }));
    time.step(-HOUR);
    time.pass(HOUR);
    await s.settle();
    expect(await status(id)).toBe('scheduled');
    time.pass(30 * MINUTE);
    await s.settle();
    expect(await status(id)).toBe('delivered');
  });

  it('forward an hour: a scheduled send whose instant the wall clock has passed goes at once', async () => {
    const when = time.sources.wall() + 30 * MINUTE;
    const { id } = await sendOk(s, mail({ scheduled_at: iso(when) }));
    await s.settle();
    expect(await status(id)).toBe('scheduled');
    time.step(HOUR);
    await s.settle();
    expect(await status(id)).toBe('delivered');
  });
});

// A restart on a clock behind the one the work was set on (a manual clock moved on, then a start at the real time): a
// delay set then is the same delay from the start, and a scheduled send keeps its instant
// (src/server/core/README.md, How a job runs).
describe('a clock gone back across a restart', () => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-clock-step-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('runs work due then now, a deferral after its own delay, and a scheduled send at its instant', async () => {
    let s = await startTestServer({ dataDir: dir, sendRate: 1000 });
    const key = s.seed!.api_key_test;
    const status = async (id: string) => (await getMessage(s, id, key)).status;
    await s.advance(2 * 3600);
    // A deferral: the sink refused the first hand-over, the retry is due 2 s later.
    expect(
      (
        await s.admin('PUT', '/sandbox/chaos', {
          rules: [{ match: { smtp: 'rcpt' }, action: { code: 451 }, times: 1 }],
        })
      ).status,
    ).toBe(200);
    const deferred = (await sendOk(s, mail())).id;
    await s.settle();
    expect(await status(deferred)).toBe('queued');
    // A scheduled send, 30 min after the clock as it stood.
    const when = (await serviceNow(s)) + 30 * MINUTE;
    const scheduled = (await sendOk(s, mail({ scheduled_at: iso(when) }))).id;
    // Accepted, due at once, and not handed over before the stop.
    await s.scheduler.stop();
    const queued = (await sendOk(s, mail())).id;
    await s.close();

    s = await startTestServer({ dataDir: dir, sendRate: 1000 });
    try {
      expect(await serviceNow(s)).toBeLessThan(when - HOUR);
      await s.settle();
      expect(await status(queued)).toBe('delivered');
      expect(await status(deferred)).toBe('queued');
      await s.advance(2);
      expect(await status(deferred)).toBe('delivered');
      expect(await status(scheduled)).toBe('scheduled');
      await s.advance((when - (await serviceNow(s))) / SECOND);
      expect(await status(scheduled)).toBe('delivered');
    } finally {
      await s.close();
    }
  });
});
