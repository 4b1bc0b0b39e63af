// Webhook delivery (docs/api.md#webhooks; the sandbox's webhook routes): real receivers on
// port 0, the manual clock for the retry schedule.
import { createHmac } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { Event } from '../../src/contract/events.js';
import { WebhookEndpoint } from '../../src/contract/webhook-endpoints.js';
import { verifyWebhook } from '../../src/contract/signature.js';
import { expectProblem } from '../helpers/problems.js';
import { startReceiver, type Answer, type Receiver } from '../helpers/receiver.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

const FROM = 'Shop <orders@example.test>';
const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;

let s: TestServer;
const receivers: Receiver[] = [];

beforeAll(async () => {
  s = await startTestServer({ webhookTimeoutMs: 1_500 });
});
afterAll(() => s?.close());
afterEach(async () => {
  // Each test starts with no endpoints and no receivers.
  const list = await s.admin('GET', '/sandbox/webhooks');
  for (const e of list.body.data) await s.admin('DELETE', `/sandbox/webhooks/${e.id}`);
  for (const r of receivers.splice(0)) await r.close();
});

async function receiver(answer?: Answer): Promise<Receiver> {
  const r = await startReceiver(answer);
  receivers.push(r);
  return r;
}

async function endpoint(url: string, events?: string[], workspace = s.seed!.workspace_id): Promise<WebhookEndpoint> {
  const r = await s.admin('POST', '/sandbox/webhooks', { workspace_id: workspace, url, ...(events ? { events } : {}) });
  expect(r.status, r.text).toBe(201);
  return WebhookEndpoint.parse(r.body);
}

async function send(to = 'delivered@simulator.test'): Promise<string> {
  const r = await s.call('POST', '/v1/emails', {
    token: s.seed!.api_key_test,
    body: { from: FROM, to, subject: 'Hook', text: 'Hi' },
  });
  expect(r.status, r.text).toBe(202);
  return r.body.id;
}

/** The workspace's events of a type, as GET /v1/events lists them. */
async function listed(type?: string): Promise<Event[]> {
  const r = await s.call('GET', `/v1/events?limit=100${type ? `&type=${type}` : ''}`, { token: s.seed!.api_key_test });
  expect(r.status, r.text).toBe(200);
  return r.body.data;
}

async function attemptsOf(id: string) {
  const list = await s.admin('GET', '/sandbox/webhooks');
  return list.body.data.find((e: WebhookEndpoint) => e.id === id) as WebhookEndpoint;
}

describe('a delivery', () => {
  it('POSTs the listed event byte for byte, signed so that the exported verifier and plain node:crypto both accept it', async () => {
    const rx = await receiver();
    const e = await endpoint(rx.url, ['email.delivered']);
    const id = await send();
    await s.settle();
    const [got] = await rx.waitFor(1);
    const event = (await listed('email.delivered')).find((ev) => ev.data.message_id === id)!;
    expect(got!.body).toBe(JSON.stringify(event));
    expect(Event.parse(JSON.parse(got!.body))).toEqual(event);
    expect(got!.headers['content-type']).toBe('application/json');
    expect(got!.headers['user-agent']).toMatch(/^svc-webhooks\/\d+\.\d+\.\d+$/);
    expect(got!.headers['service-event-id']).toBe(event.id);
    expect(got!.headers['service-delivery-attempt']).toBe('1');
    const header = got!.headers['service-signature'] as string;
    // The signature's time is the wall clock, whatever the manual service clock says.
    const t = Number(/^t=(\d+),v1=([0-9a-f]{64})$/.exec(header)![1]);
    expect(Math.abs(t - Date.now() / 1000)).toBeLessThan(60);
    expect(verifyWebhook({ secret: e.secret, header, body: got!.body })).toBe(t);
    const v1 = createHmac('sha256', Buffer.from(e.secret, 'utf8')).update(`${t}.${got!.body}`).digest('hex');
    expect(header).toBe(`t=${t},v1=${v1}`);
    // Seen in the endpoint's recent attempts.
    const seen = await attemptsOf(e.id);
    expect(seen.recent_attempts).toEqual([
      {
        delivery_id: expect.any(Number),
        endpoint_id: e.id,
        event_id: event.id,
        event_type: 'email.delivered',
        attempt: 1,
        at: expect.any(String),
        status_code: 200,
        error: null,
        duration_ms: expect.any(Number),
        ok: true,
      },
    ]);
  });

  it('goes only to endpoints whose type filter matches; without a filter, every event', async () => {
    const bounces = await receiver();
    const all = await receiver();
    await endpoint(bounces.url, ['email.bounced']);
    await endpoint(all.url);
    await send('delivered@simulator.test');
    await send('bounce@simulator.test');
    await s.settle();
    // Each endpoint has a queue of its own: the bounce may reach its endpoint after the six reach the other.
    await all.waitFor(6);
    await bounces.waitFor(1);
    expect(bounces.received.map((r) => JSON.parse(r.body).type)).toEqual(['email.bounced']);
    expect(all.received.map((r) => JSON.parse(r.body).type).sort()).toEqual(
      ['email.bounced', 'email.delivered', 'email.queued', 'email.queued', 'email.sent', 'email.sent'].sort(),
    );
  });
});

describe('the retry schedule', () => {
  it('a receiver answering 500 gets exactly seven attempts at +0, 30 s, 2 min, 10 min, 1 h, 6 h, 24 h; then the endpoint is disabled and its owner emailed', async () => {
    const rx = await receiver(() => 500);
    const e = await endpoint(rx.url, ['email.delivered']);
    const messageId = await send();
    await s.settle();
    await rx.waitFor(1);
    const offsets = [30 * SECOND, 2 * MINUTE, 10 * MINUTE, HOUR, 6 * HOUR, 24 * HOUR];
    let elapsed = 0;
    for (const [i, offset] of offsets.entries()) {
      // Not a second early…
      await s.advance((offset - elapsed) / SECOND - 1);
      expect(rx.received, `before attempt ${i + 2}`).toHaveLength(i + 1);
      // …and on time.
      await s.advance(1);
      elapsed = offset;
      expect(rx.received, `attempt ${i + 2}`).toHaveLength(i + 2);
    }
    expect(rx.received.map((r) => r.headers['service-delivery-attempt'])).toEqual(['1', '2', '3', '4', '5', '6', '7']);
    expect(new Set(rx.received.map((r) => r.headers['service-event-id'])).size).toBe(1);

    const after = await attemptsOf(e.id);
    expect(after.status).toBe('disabled_by_failures');
    expect(after.disabled_at).not.toBeNull();
    expect(after.recent_attempts.map((a) => [a.attempt, a.status_code, a.error, a.ok])).toEqual(
      [7, 6, 5, 4, 3, 2, 1].map((n) => [n, 500, 'HTTP 500', false]),
    );
    // The workspace owner's notice is in the sink.
    const mail = await s.admin('GET', `/sandbox/messages?to=${encodeURIComponent(s.seed!.email)}`);
    const notice = mail.body.data.find(
      (m: { subject: string }) => m.subject === `Webhook endpoint disabled: ${rx.url}`,
    );
    expect(notice, JSON.stringify(mail.body.data.map((m: { subject: string }) => m.subject))).toBeDefined();
    const full = await s.admin('GET', `/sandbox/messages/${notice.id}`);
    expect(full.body.text).toContain(e.id);
    expect(full.body.text).toContain('enable');
    // No eighth attempt, however far the clock moves; new events are not delivered either; the events stay listed.
    await send();
    await s.advance(48 * 3600);
    expect(rx.received).toHaveLength(7);
    expect((await listed('email.delivered')).some((ev) => ev.data.message_id === messageId)).toBe(true);
  });

  it('a receiver that recovers at the third attempt stops the retries', async () => {
    const rx = await receiver((n) => (n < 3 ? 503 : 204));
    const e = await endpoint(rx.url, ['email.delivered']);
    await send();
    await s.settle();
    await s.advance(30);
    await s.advance(90);
    expect(rx.received).toHaveLength(3);
    await s.advance(48 * 3600);
    expect(rx.received).toHaveLength(3);
    const after = await attemptsOf(e.id);
    expect(after.status).toBe('active');
    expect(after.recent_attempts.map((a) => [a.attempt, a.status_code, a.ok])).toEqual([
      [3, 204, true],
      [2, 503, false],
      [1, 503, false],
    ]);
  });

  it('a redirect is a failure, not followed', async () => {
    const target = await receiver();
    const rx = await receiver(() => ({ status: 302, headers: { location: target.url } }));
    const e = await endpoint(rx.url, ['email.delivered']);
    await send();
    await s.settle();
    await s.advance(30);
    expect(rx.received).toHaveLength(2);
    expect(target.received).toHaveLength(0);
    const after = await attemptsOf(e.id);
    expect(after.recent_attempts[0]).toMatchObject({
      attempt: 2,
      status_code: 302,
      error: 'redirect (302) not followed',
      ok: false,
    });
  });

  it('a receiver that does not answer in time is a failure, recorded with how long it was given', async () => {
    const slow = await receiver(() => 'hang');
    const hung = await endpoint(slow.url, ['email.delivered']);
    const id = await send();
    await slow.waitFor(1);
    // settle() waits for the attempts in flight: this one ends at the receivers' timeout (1.5 s on this server) and is
    // recorded; its retry is due 30 s later on the manual clock, which does not move.
    await s.settle();
    const attempts = (await attemptsOf(hung.id)).recent_attempts;
    expect(attempts).toHaveLength(1);
    expect(attempts[0]).toMatchObject({ status_code: null, error: 'no response within 1.5 s', ok: false });
    expect(attempts[0]!.duration_ms).toEqual(expect.any(Number));
    expect(JSON.parse(slow.received[0]!.body).data.message_id).toBe(id);
  });

  it('a receiver that hangs holds up neither email delivery nor other endpoints, nor its own next deliveries', async () => {
    // A server that gives receivers ten minutes: everything below happens while the first attempt still hangs.
    const patient = await startTestServer({ webhookTimeoutMs: 10 * MINUTE });
    const slow = await startReceiver(() => 'hang');
    const fast = await startReceiver();
    try {
      const add = async (url: string) =>
        WebhookEndpoint.parse(
          (
            await patient.admin('POST', '/sandbox/webhooks', {
              workspace_id: patient.seed!.workspace_id,
              url,
              events: ['email.delivered'],
            })
          ).body,
        );
      const hung = await add(slow.url);
      await add(fast.url);
      const sendOne = async () =>
        (
          await patient.call('POST', '/v1/emails', {
            token: patient.seed!.api_key_test,
            body: { from: FROM, to: 'delivered@simulator.test', subject: 'Hook', text: 'Hi' },
          })
        ).body.id as string;
      // The scheduler runs due work by itself (no clock move).
      const first = await sendOne();
      await Promise.all([slow.waitFor(1), fast.waitFor(1)]);
      const second = await sendOne();
      await Promise.all([slow.waitFor(2), fast.waitFor(2)]);
      const status = await patient.call('GET', `/v1/emails/${second}`, { token: patient.seed!.api_key_test });
      expect(status.body.status).toBe('delivered');
      expect(slow.received.map((r) => JSON.parse(r.body).data.message_id)).toEqual([first, second]);
      // Neither of the slow receiver's attempts has ended: both were in flight at once.
      const listed = await patient.admin('GET', '/sandbox/webhooks');
      const endpoint = listed.body.data.find((e: WebhookEndpoint) => e.id === hung.id) as WebhookEndpoint;
      expect(endpoint.recent_attempts).toEqual([]);
    } finally {
      // The hanging requests end with the receiver (the attempts fail), so the server stops without waiting for them.
      await slow.close();
      await fast.close();
      await patient.close();
    }
  });
});

describe('endpoints', () => {
  it('a workspace has at most five; the sixth is 422 endpoint_limit_reached', async () => {
    const rx = await receiver();
    for (let i = 0; i < 5; i++) await endpoint(`${rx.url}?n=${i}`);
    const r = await s.admin('POST', '/sandbox/webhooks', { workspace_id: s.seed!.workspace_id, url: rx.url });
    expectProblem(r, 422, 'endpoint_limit_reached');
    expect((await s.admin('GET', `/sandbox/webhooks?workspace_id=${s.seed!.workspace_id}`)).body.data).toHaveLength(5);
  });

  it('refuses a URL that is not http(s), an unknown workspace, and unknown event types', async () => {
    expectProblem(
      await s.admin('POST', '/sandbox/webhooks', { workspace_id: s.seed!.workspace_id, url: 'ftp://example.com/x' }),
      422,
      'validation_failed',
    );
    expectProblem(
      await s.admin('POST', '/sandbox/webhooks', { workspace_id: s.seed!.workspace_id, url: 'not a url' }),
      422,
      'validation_failed',
    );
    expectProblem(
      await s.admin('POST', '/sandbox/webhooks', {
        workspace_id: 'ws_000000000000000000000000',
        url: 'http://127.0.0.1:1/x',
      }),
      404,
      'not_found',
    );
    const bad = await s.admin('POST', '/sandbox/webhooks', {
      workspace_id: s.seed!.workspace_id,
      url: 'http://127.0.0.1:1/x',
      events: ['email.exploded'],
    });
    expect([400, 422]).toContain(bad.status);
  });

  it('a rotated secret signs beside the old one for 24 h of service clock, then alone', async () => {
    const rx = await receiver();
    const before = await endpoint(rx.url, ['email.delivered']);
    const rotated = await s.admin('POST', `/sandbox/webhooks/${before.id}/rotate-secret`);
    expect(rotated.status, rotated.text).toBe(200);
    const after = WebhookEndpoint.parse(rotated.body);
    expect(after.secret).not.toBe(before.secret);
    expect(after.secret).toMatch(/^whsec_/);
    expect(after.previous_secret_expires_at).not.toBeNull();
    await send();
    await s.settle();
    const [one] = await rx.waitFor(1);
    const parts = (one!.headers['service-signature'] as string).split(',');
    expect(parts).toHaveLength(3);
    const t = Number(parts[0]!.slice(2));
    const sig = (secret: string) => createHmac('sha256', secret).update(`${t}.${one!.body}`).digest('hex');
    expect(parts.slice(1)).toEqual([`v1=${sig(after.secret)}`, `v1=${sig(before.secret)}`]);
    expect(
      verifyWebhook({ secret: before.secret, header: one!.headers['service-signature'] as string, body: one!.body }),
    ).toBe(t);

    await s.advance(24 * 3600);
    await send();
    await s.settle();
    const [, two] = await rx.waitFor(2);
    const again = (two!.headers['service-signature'] as string).split(',');
    expect(again).toHaveLength(2);
    expect(() =>
      verifyWebhook({ secret: before.secret, header: two!.headers['service-signature'] as string, body: two!.body }),
    ).toThrow(/No signature/);
    expect((await attemptsOf(before.id)).previous_secret_expires_at).toBeNull();
  });

  it('enable makes a disabled endpoint active again without replaying what it missed; redeliver sends an event anew, attempts from 1', async () => {
    let healthy = false;
    const rx = await receiver(() => (healthy ? 200 : 500));
    const e = await endpoint(rx.url, ['email.delivered']);
    await send();
    await s.settle();
    for (const step of [30, 90, 480, 3000, 18000, 64800]) await s.advance(step);
    expect((await attemptsOf(e.id)).status).toBe('disabled_by_failures');
    const missed = (await listed('email.delivered')).at(-1)!;

    healthy = true;
    const enabled = await s.admin('POST', `/sandbox/webhooks/${e.id}/enable`);
    expect(enabled.status).toBe(200);
    expect(enabled.body.status).toBe('active');
    await s.advance(3600);
    expect(rx.received).toHaveLength(7);

    const again = await s.admin('POST', `/sandbox/events/${missed.id}/redeliver`, {});
    expect(again.status, again.text).toBe(202);
    expect(again.body).toEqual({ event_id: missed.id, endpoint_ids: [e.id] });
    await s.settle();
    await rx.waitFor(8);
    expect(rx.received[7]!.headers['service-delivery-attempt']).toBe('1');
    expect(rx.received[7]!.headers['service-event-id']).toBe(missed.id);
    expect(rx.received[7]!.body).toBe(JSON.stringify(missed));
    // To one named endpoint; unknown events and endpoints are 404.
    const named = await s.admin('POST', `/sandbox/events/${missed.id}/redeliver`, { endpoint_id: e.id });
    expect(named.body.endpoint_ids).toEqual([e.id]);
    expectProblem(
      await s.admin('POST', '/sandbox/events/evt_000000000000000000000000/redeliver', {}),
      404,
      'not_found',
    );
    expectProblem(
      await s.admin('POST', `/sandbox/events/${missed.id}/redeliver`, { endpoint_id: 'whk_000000000000000000000000' }),
      404,
      'not_found',
    );
  });

  it('a deleted endpoint gets nothing more, its pending retries included', async () => {
    const rx = await receiver(() => 500);
    const e = await endpoint(rx.url, ['email.delivered']);
    await send();
    await s.settle();
    await rx.waitFor(1);
    expect((await s.admin('DELETE', `/sandbox/webhooks/${e.id}`)).status).toBe(204);
    expectProblem(await s.admin('DELETE', `/sandbox/webhooks/${e.id}`), 404, 'not_found');
    await s.advance(48 * 3600);
    expect(rx.received).toHaveLength(1);
  });
});
