// Forwarding one event to a real receiver: what counts as a failure, and that a receiver that never answers does not
// hold the listener up.
import { afterEach, describe, expect, it } from 'vitest';
import { startReceiver, type Receiver } from '../helpers/receiver.js';
import { verifyWebhook } from '../../src/contract/signature.js';
import { forwardEvent, type ForwardAttempt } from '../../src/client/forward.js';

const secret = `whsec_${Buffer.alloc(32, 3).toString('base64')}`;
const body = '{"id":"evt_1","type":"email.sent","data":{}}';

describe('forwardEvent', () => {
  let rx: Receiver | undefined;
  afterEach(async () => {
    await rx?.close();
  });

  async function forward(answers: Parameters<typeof startReceiver>[0], timeoutMs?: number) {
    rx = await startReceiver(answers);
    const slept: number[] = [];
    const failures: [ForwardAttempt, number | undefined][] = [];
    const last = await forwardEvent({
      url: rx.url,
      body,
      eventId: 'evt_1',
      secret,
      userAgent: 'svc-webhooks-listen/test',
      timeoutMs,
      sleep: async (ms) => void slept.push(ms),
      onFailure: (a, retryInMs) => void failures.push([a, retryInMs]),
    });
    return { last, slept, failures, received: rx.received };
  }

  it('counts a redirect as a failure, as the service does, and signs every attempt', async () => {
    const r = await forward((n) => (n === 1 ? { status: 302, headers: { location: '/elsewhere' } } : 204));
    expect(r.last).toMatchObject({ attempt: 2, ok: true, status: 204, error: null });
    expect(r.failures.map(([a]) => [a.attempt, a.status, a.error])).toEqual([[1, 302, 'redirect (302) not followed']]);
    expect(r.received.map((x) => x.path)).toEqual(['/webhooks', '/webhooks']);
    for (const x of r.received)
      expect(verifyWebhook({ secret, header: x.headers['service-signature'] as string, body: x.body })).toBeGreaterThan(
        0,
      );
  });

  it('gives up on a receiver that does not answer in time, after the last attempt, and says so', async () => {
    const r = await forward(() => 'hang', 50);
    expect(r.last).toMatchObject({ attempt: 4, ok: false, status: null, error: 'no response within 0.05 s' });
    expect(r.failures.map(([a, retry]) => [a.attempt, retry === undefined])).toEqual([
      [1, false],
      [2, false],
      [3, false],
      [4, true],
    ]);
    expect(r.slept).toHaveLength(3);
    expect(r.received.map((x) => x.headers['service-delivery-attempt'])).toEqual(['1', '2', '3', '4']);
  });
});
