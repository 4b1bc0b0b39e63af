// A message that cannot be handed over ends `failed` with the reason, never stranded in `queued`: temporary SMTP
// refusals are retried, a permanent one ends it at once, and a compose thread that dies under messages sends them
// back to the queue. The relay's refusals (--relay) follow the same retry policy on the relay's own job, and leave the
// message as the sink had it.
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.js';

/** A relay that answers each message with the next reply of `script` (then the last one forever). */
async function scriptedRelay(script: (string | null)[]) {
  const seen: string[] = [];
  const relay = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    disableReverseLookup: true,
    logger: false,
    onData(stream, _session, done) {
      stream.resume();
      stream.on('end', () => {
        const reply = script[Math.min(seen.length, script.length - 1)]!;
        seen.push(reply ?? '250');
        if (reply === null) return done();
        const code = Number(reply.slice(0, 3));
        done(Object.assign(new Error(reply.slice(4)), { responseCode: code }));
      });
    },
  });
  await new Promise<void>((resolve) => relay.listen(0, '127.0.0.1', () => resolve()));
  return {
    url: `smtp://127.0.0.1:${(relay.server.address() as AddressInfo).port}`,
    seen,
    close: () => new Promise<void>((resolve) => relay.close(() => resolve())),
  };
}

const sendLive = (s: TestServer, to: string) =>
  s.call('POST', '/v1/emails', {
    token: s.seed!.api_key_live,
    body: { from: 'Shop <orders@example.test>', to, subject: 'Relayed', text: 'Hello' },
  });

/** GET /v1/emails/{id} with the seeded live key (or the test key), expecting 200. */
async function message(s: TestServer, id: string, key = s.seed!.api_key_live) {
  const r = await s.call('GET', `/v1/emails/${id}`, { token: key });
  expect(r.status, r.text).toBe(200);
  return r.body as { status: string; events: { type: string; detail: Record<string, unknown> }[] };
}

/** The relay's entries on the caught message's timeline (docs/local-server.md#release-and-relay). */
async function relayEntries(s: TestServer, id: string) {
  const r = await s.admin('GET', `/sandbox/messages/${id}`);
  expect(r.status, r.text).toBe(200);
  return (r.body.events as { type: string; detail: Record<string, unknown> }[]).filter((e) =>
    e.type.startsWith('relay.'),
  );
}

describe('the sink answering 451, then 554', () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer();
  });
  afterAll(() => s?.close());

  it('retries after the 451, then ends the message failed with the 554 in email.failed’s reason', async () => {
    const chaos = await s.admin('PUT', '/sandbox/chaos', {
      rules: [
        { match: { smtp: 'data' }, action: { code: 451, message: '4.3.0 Try again later' }, times: 1 },
        { match: { smtp: 'data' }, action: { code: 554, message: '5.7.1 Message refused by policy' }, times: 1 },
      ],
    });
    expect(chaos.status, chaos.text).toBe(200);
    const sent = await sendLive(s, 'customer@example.com');
    expect(sent.status, sent.text).toBe(202);
    await s.settle();
    const waiting = await message(s, sent.body.id);
    expect(waiting.status).toBe('queued');
    // The 451 is a deferral: an event per recipient, with the answer and the job's next attempt.
    const deferred = waiting.events.filter((e) => e.type === 'email.deferred');
    expect(deferred.map((e) => e.detail)).toEqual([
      {
        to: 'customer@example.com',
        smtp_code: '451',
        reason:
          'The sandbox sink answered 451 4.3.0 Try again later (svc sandbox chaos rule 0); the message will be tried again.',
        next_attempt_at: expect.any(String),
      },
    ]);
    // The retry is due 2 s later on the service clock.
    await s.advance(2);
    const m = await message(s, sent.body.id);
    expect(m.status).toBe('failed');
    const failed = m.events.filter((e) => e.type === 'email.failed');
    expect(failed).toHaveLength(1);
    expect(failed[0]!.detail.reason).toMatch(
      /^The sandbox sink refused the message: 554 5\.7\.1 Message refused by policy \(svc sandbox chaos rule \d\)\.$/,
    );
    // Nothing further: no more attempts, however far the clock moves.
    await s.advance(3600);
    expect((await message(s, sent.body.id)).events.map((e) => e.type)).toEqual([
      'email.queued',
      'email.deferred',
      'email.failed',
    ]);
  });
});

// The relay (--relay, a relay rule matching every recipient) takes live mail once the sink has caught it, as a job of
// its own: its refusals never touch the /v1 message, and show on the caught message's timeline.
describe('a relay that answers 451, then 554', () => {
  let s: TestServer;
  let relay: Awaited<ReturnType<typeof scriptedRelay>>;
  beforeAll(async () => {
    relay = await scriptedRelay(['451 4.3.0 Try again later', '554 5.7.1 Message refused by policy']);
    s = await startTestServer({ relay: relay.url });
  });
  afterAll(async () => {
    await s?.close();
    await relay?.close();
  });

  it('defers after the 451, then ends refused at the 554; the message stays delivered', async () => {
    const sent = await sendLive(s, 'customer@example.com');
    expect(sent.status, sent.text).toBe(202);
    await s.settle();
    expect(relay.seen).toEqual(['451 4.3.0 Try again later']);
    expect((await message(s, sent.body.id)).status).toBe('delivered');
    expect(await relayEntries(s, sent.body.id)).toEqual([
      {
        id: expect.any(String),
        type: 'relay.deferred',
        occurred_at: expect.any(String),
        deliveries: [],
        detail: {
          relay: expect.stringMatching(/^smtp:\/\/127\.0\.0\.1:\d+$/),
          to: ['customer@example.com'],
          mail_from: `bounces+${sent.body.id}@bounces.example.test`,
          attempt: 1,
          smtp_code: 451,
          response: '451 4.3.0 Try again later',
          next_attempt_at: expect.any(String),
        },
      },
    ]);
    // The retry is due 2 s later on the service clock.
    await s.advance(2);
    expect(relay.seen).toHaveLength(2);
    expect((await relayEntries(s, sent.body.id)).map((e) => [e.type, e.detail.response])).toEqual([
      ['relay.deferred', '451 4.3.0 Try again later'],
      ['relay.refused', '554 5.7.1 Message refused by policy'],
    ]);
    // Nothing further: no more attempts, however far the clock moves.
    await s.advance(3600);
    expect(relay.seen).toHaveLength(2);
    const m = await message(s, sent.body.id);
    expect(m.status).toBe('delivered');
    expect(m.events.map((e) => e.type)).toEqual(['email.queued', 'email.sent', 'email.delivered']);
  });
});

describe('a relay that never stops answering 451', () => {
  let s: TestServer;
  let relay: Awaited<ReturnType<typeof scriptedRelay>>;
  beforeAll(async () => {
    relay = await scriptedRelay(['451 4.7.1 Greylisted, come back later']);
    s = await startTestServer({ relay: relay.url });
  });
  afterAll(async () => {
    await s?.close();
    await relay?.close();
  });

  it('is tried ten times over about 17 minutes, then ends relay.failed with the last answer', async () => {
    const sent = await sendLive(s, 'greylisted@example.com');
    expect(sent.status, sent.text).toBe(202);
    await s.settle();
    for (let i = 0; i < 12 && relay.seen.length < 10; i++) await s.advance(3600);
    await s.advance(3600);
    expect(relay.seen).toHaveLength(10);
    const entries = await relayEntries(s, sent.body.id);
    expect(entries.map((e) => e.type)).toEqual([...Array(9).fill('relay.deferred'), 'relay.failed']);
    expect(entries.at(-1)!.detail).toMatchObject({
      to: ['greylisted@example.com'],
      response: '451 4.7.1 Greylisted, come back later',
      reason: 'The relay was tried 10 times without success.',
    });
    expect((await message(s, sent.body.id)).status).toBe('delivered');
  });
});

describe('a compose thread that dies under messages', () => {
  let s: TestServer;
  beforeAll(async () => {
    // Too small a heap for the large message's 13 MB of HTML beside what the thread holds: building it kills the thread
    // each time (with 14 to 22 MB alike; from 26 MB it is built). The test suite's thread loads its source through tsx
    // and holds about 12 MB once it has built a message, so 12 MB left a new thread, on a loaded machine, dying under
    // the small message too; 18 MB leaves it room.
    s = await startTestServer({ composeResourceLimits: { maxOldGenerationSizeMb: 18, maxYoungGenerationSizeMb: 4 } });
  });
  afterAll(() => s?.close());

  it('the message it was building goes back to the queue and ends failed after its attempts; the one waiting behind it arrives', async () => {
    const send = (to: string, extra: Record<string, unknown>) =>
      s.call('POST', '/v1/emails', {
        token: s.seed!.api_key_test,
        body: { from: 'Shop <orders@example.test>', to, subject: to, text: 'Hello', ...extra },
      });
    const big = await send('big@example.com', bigBody());
    const small = await send('small@example.com', {});
    expect([big.status, small.status]).toEqual([202, 202]);
    await s.settle();
    // The big one was on the thread when it died: back in the queue, not failed. The small one waited behind it.
    expect((await message(s, big.body.id, s.seed!.api_key_test)).status).toBe('queued');
    expect((await message(s, small.body.id, s.seed!.api_key_test)).status).toBe('delivered');
    const caught = await s.admin('GET', '/sandbox/messages?to=small@example.com');
    expect(caught.body.data.map((m: { message_id: string }) => m.message_id)).toEqual([small.body.id]);
    for (let i = 0; i < 12 && (await message(s, big.body.id, s.seed!.api_key_test)).status === 'queued'; i++)
      await s.advance(3600);
    const m = await message(s, big.body.id, s.seed!.api_key_test);
    expect(m.status).toBe('failed');
    expect(m.events.find((e) => e.type === 'email.failed')!.detail.reason).toMatch(
      /^Delivery was tried 10 times without success; the last attempt: the compose thread stopped \(exit code \d+\) before the message was built\.$/,
    );
  }, 60_000);
});

/**
 * An HTML of 13 MB, for a compose thread with an 18 MB heap: it comes over as a string, more than the heap holds beside
 * what the thread already has, and Node ends the thread (ERR_WORKER_OUT_OF_MEMORY). One allocation much larger than
 * the room Node gives a thread at its limit (a 24 MB string) would make V8 end the whole process instead.
 */
function bigBody(): Record<string, string> {
  return { html: `<p>${'Hello there, '.repeat(1_000_000)}</p>` };
}
