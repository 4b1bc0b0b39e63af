// What the inbox page reads about webhooks: a message's events with every delivery of them (grouped by endpoint and
// delivery, each attempt with its number, time, status code or error and duration), the endpoints with their
// workspaces' names, the live stream's `webhooks` events, and who may enable and redeliver.
// Real receivers on port 0; the manual clock for retries.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { CaughtMessage } from '../../src/contract/inbox.js';
import { WebhookAttempt } from '../../src/contract/webhook-endpoints.js';
import { expectProblem } from '../helpers/problems.js';
import { startReceiver, type Answer, type Receiver } from '../helpers/receiver.js';
import { inboxSession } from '../helpers/inbox-session.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { eventsOf } from '../helpers/sse.js';

let s: TestServer;
const receivers: Receiver[] = [];

beforeAll(async () => {
  s = await startTestServer({ webhookTimeoutMs: 1_500 });
});
afterAll(() => s?.close());
afterEach(async () => {
  for (const e of (await s.admin('GET', '/sandbox/webhooks')).body.data)
    await s.admin('DELETE', `/sandbox/webhooks/${e.id}`);
  for (const r of receivers.splice(0)) await r.close();
});

async function receiver(answer?: Answer): Promise<Receiver> {
  const r = await startReceiver(answer);
  receivers.push(r);
  return r;
}

async function endpoint(url: string, events?: string[]): Promise<string> {
  const r = await s.admin('POST', '/sandbox/webhooks', {
    workspace_id: s.seed!.workspace_id,
    url,
    ...(events ? { events } : {}),
  });
  expect(r.status, r.text).toBe(201);
  return r.body.id;
}

/** Sends a /v1 message, lets its delivery (and the first webhook attempts) run, and answers its caught message. */
async function send(to = 'delivered@simulator.test'): Promise<CaughtMessage> {
  const r = await s.call('POST', '/v1/emails', {
    token: s.seed!.api_key_test,
    body: { from: 'orders@example.test', to, subject: 'Hooked', text: 'x' },
  });
  expect(r.status, r.text).toBe(202);
  await s.settle();
  const list = await s.admin('GET', `/sandbox/messages?limit=100`);
  const caught = list.body.data.find((m: { message_id: string }) => m.message_id === r.body.id);
  return message(caught.id);
}

async function message(id: string): Promise<CaughtMessage> {
  const r = await s.admin('GET', `/sandbox/messages/${id}`);
  expect(r.status, r.text).toBe(200);
  return CaughtMessage.parse(r.body);
}

const eventOf = (m: CaughtMessage, type: string) => m.events!.find((e) => e.type === type)!;

describe("a message's webhook deliveries", () => {
  it('lists under each event every delivery, grouped by endpoint then delivery, with each attempt as it happened', async () => {
    const flaky = await receiver((n) => (n === 1 ? 500 : 200));
    const steady = await receiver();
    const flakyId = await endpoint(flaky.url, ['email.delivered']);
    const steadyId = await endpoint(steady.url);
    let m = await send();
    await Promise.all([flaky.waitFor(1), steady.waitFor(3)]);
    const now = Date.parse((await s.admin('GET', '/sandbox/clock')).body.now);

    m = await message(m.id);
    // The steady endpoint takes every event; the flaky one only email.delivered.
    for (const type of ['email.queued', 'email.sent']) {
      expect(
        eventOf(m, type).deliveries.map((d) => [
          d.endpoint_id,
          d.url,
          d.attempts.map((a) => [a.attempt, a.status_code, a.ok]),
        ]),
      ).toEqual([[steadyId, steady.url, [[1, 200, true]]]]);
    }
    const delivered = eventOf(m, 'email.delivered');
    expect(delivered.deliveries.map((d) => d.endpoint_id).sort()).toEqual([flakyId, steadyId].sort());
    const first = delivered.deliveries.find((d) => d.endpoint_id === flakyId)!;
    expect(first.attempts).toEqual([
      {
        delivery_id: first.delivery_id,
        endpoint_id: flakyId,
        event_id: delivered.id,
        event_type: 'email.delivered',
        attempt: 1,
        at: new Date(now).toISOString(),
        status_code: 500,
        error: 'HTTP 500',
        duration_ms: expect.any(Number),
        ok: false,
      },
    ]);
    expect(WebhookAttempt.parse(first.attempts[0]).duration_ms).toBeGreaterThanOrEqual(0);

    // The retry 30 s later succeeds: the same delivery, attempt 2, at the service time it was made.
    await s.advance(30);
    m = await message(m.id);
    const retried = eventOf(m, 'email.delivered').deliveries.find((d) => d.endpoint_id === flakyId)!;
    expect(retried.delivery_id).toBe(first.delivery_id);
    expect(retried.attempts.map((a) => [a.attempt, a.at, a.status_code, a.error, a.ok])).toEqual([
      [1, new Date(now).toISOString(), 500, 'HTTP 500', false],
      [2, new Date(now + 30_000).toISOString(), 200, null, true],
    ]);

    // A redelivery is another delivery to the same endpoint, listed after the first, its attempts numbered from 1.
    const redelivered = await s.admin('POST', `/sandbox/events/${delivered.id}/redeliver`, { endpoint_id: flakyId });
    expect(redelivered.status, redelivered.text).toBe(202);
    await s.settle();
    await flaky.waitFor(3);
    m = await message(m.id);
    const toFlaky = eventOf(m, 'email.delivered').deliveries.filter((d) => d.endpoint_id === flakyId);
    expect(toFlaky.map((d) => d.attempts.map((a) => [a.attempt, a.status_code]))).toEqual([
      [
        [1, 500],
        [2, 200],
      ],
      [[1, 200]],
    ]);
    expect(toFlaky[1]!.delivery_id).toBeGreaterThan(toFlaky[0]!.delivery_id);

    // Once an endpoint is removed its deliveries stay listed, without a URL.
    await s.admin('DELETE', `/sandbox/webhooks/${flakyId}`);
    m = await message(m.id);
    expect(
      eventOf(m, 'email.delivered')
        .deliveries.filter((d) => d.endpoint_id === flakyId)
        .map((d) => d.url),
    ).toEqual([null, null]);
  });

  it('an event no endpoint took has no deliveries', async () => {
    const m = await send();
    expect(m.events!.map((e) => e.deliveries)).toEqual([[], [], []]);
  });
});

describe('GET /sandbox/webhooks for the page', () => {
  it("names each endpoint's workspace, and never more workspaces than it lists endpoints of", async () => {
    const rx = await receiver();
    const id = await endpoint(rx.url, ['email.bounced']);
    const r = await s.admin('GET', '/sandbox/webhooks');
    expect(r.body.workspaces).toEqual([{ id: s.seed!.workspace_id, name: 'Sandbox' }]);
    expect(r.body.data.map((e: { id: string }) => e.id)).toEqual([id]);
    await s.admin('DELETE', `/sandbox/webhooks/${id}`);
    expect((await s.admin('GET', '/sandbox/webhooks')).body).toEqual({ data: [], workspaces: [] });
  });
});

describe('the live stream', () => {
  it('tells a new endpoint, and each recorded attempt with the event it delivered', async () => {
    const res = await fetch(`${s.origin}/sandbox/stream`, { headers: { authorization: `Bearer ${s.adminToken}` } });
    const events = eventsOf(res);
    try {
      const rx = await receiver(() => 503);
      await endpoint(rx.url, ['email.delivered']);
      expect(await events.nextOf('webhooks')).toEqual({ event_ids: [] });

      const m = await send();
      const delivered = eventOf(m, 'email.delivered').id;
      expect(await events.nextOf('webhooks')).toEqual({ event_ids: [delivered] });
      // The retries run in one clock move, the last disabling the endpoint in the same commit as its attempt.
      await s.advance(24 * 3600);
      expect(rx.received).toHaveLength(7);
      expect(await events.nextOf('webhooks')).toEqual({ event_ids: [delivered] });
      expect((await s.admin('GET', '/sandbox/webhooks')).body.data[0].status).toBe('disabled_by_failures');
    } finally {
      await events.close();
    }
  });
});

describe('who may enable and redeliver', () => {
  it('an inbox session or the admin token; a cookie, from any site, never', async () => {
    const rx = await receiver(() => 500);
    const id = await endpoint(rx.url, ['email.delivered']);
    const m = await send();
    await s.advance(24 * 3600);
    expect((await s.admin('GET', '/sandbox/webhooks')).body.data[0].status).toBe('disabled_by_failures');

    const session = await inboxSession(s.origin, s.adminToken);
    const delivered = eventOf(m, 'email.delivered').id;
    for (const headers of [
      { cookie: `svc_admin=${session}` },
      { cookie: `svc_admin=${session}`, origin: s.origin },
    ] as Record<string, string>[]) {
      const post = (path: string) => s.call('POST', path, { headers });
      expectProblem(await post(`/sandbox/webhooks/${id}/enable`), 401, 'missing_credentials');
      expectProblem(await post(`/sandbox/events/${delivered}/redeliver`), 401, 'missing_credentials');
    }
    expect((await s.admin('GET', '/sandbox/webhooks')).body.data[0].status).toBe('disabled_by_failures');
    expect(rx.received).toHaveLength(7);

    const enabled = await s.call('POST', `/sandbox/webhooks/${id}/enable`, { token: session });
    expect(enabled.status, enabled.text).toBe(200);
    expect(enabled.body.status).toBe('active');
    rx.answer = () => 200;
    const again = await s.call('POST', `/sandbox/events/${delivered}/redeliver`, { token: session, body: {} });
    expect(again.status, again.text).toBe(202);
    expect(again.body.endpoint_ids).toEqual([id]);
    await s.settle();
    await rx.waitFor(8);
    expect(rx.received[7]!.headers['service-delivery-attempt']).toBe('1');
  });
});
