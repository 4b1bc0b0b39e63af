// The abuse filter and the sending rate limit of POST /v1/emails (docs/api.md#sending,
// docs/api.md#rate-limits: 451 and 429; rate limits run on the service clock).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Reply } from '../helpers/server.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import {
  EICAR,
  FROM,
  GTUBE,
  addDomain,
  caughtTo,
  createKey,
  expectProblem,
  mail,
  newTenant,
  outbox,
  publishAndVerify,
  rcpt,
  send,
  sendOk,
} from './emails-helpers.js';

/** Sends, expects 451 content_blocked, and checks that nothing was stored, queued or sent. */
async function expectBlocked(s: TestServer, body: Record<string, unknown>, headers?: Record<string, string>) {
  await s.settle();
  const before = outbox(s, s.seed!.workspace_id).length;
  const r = await send(s, body, { headers });
  expectProblem(r, 451, 'content_blocked');
  expect(r.body.detail).toMatch(/abuse filter/);
  expect(r.headers.get('location')).toBeNull();
  await s.settle();
  expect(await caughtTo(s, body.to as string)).toEqual([]);
  expect(outbox(s, s.seed!.workspace_id).length).toBe(before);
  return r;
}

describe('abuse filter', () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer({ blockPattern: ['forbidden-word', 'buy\\s+cheap\\s+\\w+'] });
  });
  afterAll(() => s.close());

  it('GTUBE in the subject, the text or the html → 451 content_blocked; nothing stored or sent', async () => {
    await expectBlocked(s, mail({ to: rcpt(), subject: `Offer ${GTUBE}` }));
    await expectBlocked(s, mail({ to: rcpt(), text: `Hello\n${GTUBE}\nbye` }));
    await expectBlocked(s, mail({ to: rcpt(), text: undefined, html: `<p>${GTUBE}</p>` }));
  });

  it('EICAR in a base64 attachment → 451; the same bytes as text of the body are not a virus match', async () => {
    const content = Buffer.from(EICAR, 'latin1').toString('base64');
    await expectBlocked(s, mail({ to: rcpt(), attachments: [{ filename: 'eicar.com', content }] }));
    // Among other files, and not first in the list.
    await expectBlocked(
      s,
      mail({
        to: rcpt(),
        attachments: [
          { filename: 'ok.txt', content: Buffer.from('fine').toString('base64') },
          { filename: 'bad.zip', content: Buffer.from(`prefix ${EICAR} suffix`, 'latin1').toString('base64') },
        ],
      }),
    );
  });

  it('an operator-configured pattern in subject, text or html → 451 (case-insensitive)', async () => {
    await expectBlocked(s, mail({ to: rcpt(), subject: 'The Forbidden-Word inside' }));
    await expectBlocked(s, mail({ to: rcpt(), text: 'contains forbidden-word here' }));
    await expectBlocked(s, mail({ to: rcpt(), text: undefined, html: '<b>forbidden-word</b>' }));
    await expectBlocked(s, mail({ to: rcpt(), text: 'buy   cheap watches' }));
  });

  it('a refused request is not stored under its Idempotency-Key: the cleaned body with the same key is accepted', async () => {
    const to = rcpt();
    const key = `abuse-${to}`;
    await expectBlocked(s, mail({ to, subject: GTUBE }), { 'Idempotency-Key': key });
    const ok = await send(s, mail({ to, subject: 'clean' }), { headers: { 'Idempotency-Key': key } });
    expect(ok.status, ok.text).toBe(202);
    expect(ok.headers.get('idempotent-replay')).toBeNull();
  });

  it('clean mail passes on the same server and arrives', async () => {
    const to = rcpt();
    const a = await sendOk(
      s,
      mail({ to, subject: 'Quarterly numbers', text: 'a forbidden word, but not the pattern' }),
    );
    await s.settle();
    const caught = await caughtTo(s, to);
    expect(caught).toHaveLength(1);
    expect(caught[0].message_id).toBe(a.id);
  });

  it('a server without operator patterns lets the pattern through (the pattern is configuration, not a built-in)', async () => {
    const plain = await startTestServer();
    try {
      const r = await send(plain, mail({ subject: 'forbidden-word' }));
      expect(r.status, r.text).toBe(202);
      // GTUBE is built in everywhere.
      expectProblem(await send(plain, mail({ subject: GTUBE })), 451, 'content_blocked');
    } finally {
      await plain.close();
    }
  });
});

describe('sending rate limit', () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer({ sendRate: 2 });
  });
  afterAll(() => s.close());

  const rateHeaders = (r: Reply) => ({
    limit: r.headers.get('x-ratelimit-limit'),
    remaining: r.headers.get('x-ratelimit-remaining'),
    reset: r.headers.get('x-ratelimit-reset'),
  });
  /** X-RateLimit-Limit is the bucket's size (2 × rate): what Remaining counts down from, never below it. */
  const expectRateHeaders = (r: Reply, remaining: number) => {
    const h = rateHeaders(r);
    expect(h.limit, r.text).toBe('4');
    expect(h.remaining).toBe(String(remaining));
    expect(Number(h.remaining)).toBeLessThanOrEqual(Number(h.limit));
    expect(h.reset).toMatch(/^\d+$/);
  };

  it('the bucket holds 2 × rate: 4 sends pass, the 5th → 429 rate_limited with Retry-After; every response has X-RateLimit-*', async () => {
    const ok: Reply[] = [];
    for (let i = 0; i < 4; i++) ok.push(await send(s, mail()));
    ok.forEach((r, i) => {
      expect(r.status, r.text).toBe(202);
      expectRateHeaders(r, 3 - i);
    });
    // A full bucket resets in 0 s; an empty one in capacity / rate = 2 s.
    expect(Number(ok[3]!.headers.get('x-ratelimit-reset'))).toBe(2);

    const to = rcpt();
    await s.settle(); // settle() runs jobs, it does not move the clock
    const before = outbox(s, s.seed!.workspace_id).length;
    const limited = await send(s, mail({ to }));
    expectProblem(limited, 429, 'rate_limited');
    expect(limited.body.detail).toBe('This workspace may send 2 requests a second, 4 at once; retry in 1 s.');
    const retryAfter = limited.headers.get('retry-after');
    expect(retryAfter).toMatch(/^\d+$/);
    expect(Number(retryAfter)).toBe(1);
    expectRateHeaders(limited, 0);
    // Nothing was accepted.
    await s.settle();
    expect(await caughtTo(s, to)).toEqual([]);
    expect(outbox(s, s.seed!.workspace_id).length).toBe(before);
  });

  it('the bucket refills on the service clock: still 429 without a clock move; +1 s gives 2 tokens', async () => {
    expectProblem(await send(s, mail()), 429, 'rate_limited');
    await s.advance(1);
    const a = await send(s, mail());
    expect(a.status, a.text).toBe(202);
    expectRateHeaders(a, 1);
    const b = await send(s, mail());
    expect(b.status, b.text).toBe(202);
    expectRateHeaders(b, 0);
    expectProblem(await send(s, mail()), 429, 'rate_limited');

    // A long pause refills to the cap (2 × rate), not beyond.
    await s.advance(3600);
    for (let i = 0; i < 4; i++) expect((await send(s, mail())).status).toBe(202);
    expectProblem(await send(s, mail()), 429, 'rate_limited');
  });

  it('rejected requests of other kinds also count against the bucket only when they reach the handler', async () => {
    await s.advance(3600); // full bucket: 4 tokens
    // A malformed body is refused before the handler (400): no token is taken.
    for (let i = 0; i < 3; i++)
      expectProblem(await send(s, { from: FROM, to: rcpt(), text: 'x', htm: 'typo' }), 400, 'invalid_request');
    // One that reaches the handler and is refused there spends a token, and its response says so.
    const refused = await send(s, mail({ from: 'hi@not-a-domain-of-ours.test' }));
    expectProblem(refused, 422, 'domain_not_verified');
    expectRateHeaders(refused, 3);
    for (let i = 0; i < 3; i++) expect((await send(s, mail())).status).toBe(202);
    expectProblem(await send(s, mail()), 429, 'rate_limited');
  });

  it('the bucket is per workspace: another workspace is not limited by this one', async () => {
    await s.advance(3600);
    for (let i = 0; i < 4; i++) expect((await send(s, mail())).status).toBe(202);
    expectProblem(await send(s, mail()), 429, 'rate_limited');

    const t = await newTenant(s, 'other-bucket');
    const d = await addDomain(s, t.token, 'other-bucket.test');
    await publishAndVerify(s, t.token, d.id);
    const key = await createKey(s, t.token, { scopes: ['emails:send'] });
    const r = await send(s, mail({ from: `hi@${d.name}` }), { key: key.key });
    expect(r.status, r.text).toBe(202);
    expect(r.headers.get('x-ratelimit-remaining')).toBe('3');
    // …and the first workspace is still limited.
    expectProblem(await send(s, mail()), 429, 'rate_limited');
  });
});
