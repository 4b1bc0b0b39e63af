// Idempotency-Key on POST /v1/emails (docs/api.md#sending: idempotency,
// its 409, window and key length): replays, canonical JSON, conflicts, the 24 h window, key length, failed
// requests not stored, scope per workspace, and concurrent requests creating exactly one message.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type Reply, type TestServer } from '../helpers/server.js';
import {
  MSG_ID,
  addDomain,
  caughtOf,
  caughtTo,
  createKey,
  expectProblem,
  mail,
  newTenant,
  outbox,
  publishAndVerify,
  rcpt,
  send,
} from './emails-helpers.js';

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer({ sendRate: 10_000 });
});
afterAll(() => s.close());

let n = 0;
const newKey = () => `idem-${Date.now().toString(36)}-${++n}`;
const withKey = (key: string) => ({ headers: { 'Idempotency-Key': key } });

/** Messages (email.queued events) created for a recipient, from the outbox. */
function messagesTo(to: string, workspaceId = s.seed!.workspace_id): string[] {
  return outbox(s, workspaceId)
    .filter((e) => e.type === 'email.queued' && (e.data.to as string[]).includes(to))
    .map((e) => e.message_id!);
}

function expectSameResponse(first: Reply, replay: Reply) {
  expect(replay.status, replay.text).toBe(first.status);
  expect(replay.body).toEqual(first.body);
  expect(replay.headers.get('location')).toBe(first.headers.get('location'));
  expect(replay.headers.get('content-type')).toBe(first.headers.get('content-type'));
}

describe('Idempotency-Key', () => {
  it('a replay returns the same status, body and Location plus Idempotent-Replay: true, and sends one message', async () => {
    const key = newKey();
    const to = rcpt();
    const body = mail({ to, tags: [{ name: 'kind', value: 'receipt' }] });
    const first = await send(s, body, withKey(key));
    expect(first.status, first.text).toBe(202);
    expect(first.body.id).toMatch(MSG_ID);
    expect(first.headers.get('location')).toBe(`${s.api}/emails/${first.body.id}`);
    expect(first.headers.get('idempotent-replay')).toBeNull();

    const replay = await send(s, body, withKey(key));
    expectSameResponse(first, replay);
    expect(replay.headers.get('idempotent-replay')).toBe('true');
    // Rate-limit headers are those of this request, not replayed ones.
    expect(replay.headers.get('x-ratelimit-remaining')).toMatch(/^\d+$/);

    // A replay after delivery still returns the original response (status queued).
    await s.settle();
    const late = await send(s, body, withKey(key));
    expectSameResponse(first, late);
    expect(late.body.status).toBe('queued');

    expect(messagesTo(to)).toEqual([first.body.id]);
    const caught = await caughtTo(s, to);
    expect(caught).toHaveLength(1);
    expect(caught[0].message_id).toBe(first.body.id);
  });

  it('keys belong to the workspace, not to the API key: another key of the workspace replays', async () => {
    const key = newKey();
    const body = mail();
    const first = await send(s, body, withKey(key));
    expect(first.status).toBe(202);
    const other = await send(s, body, { key: s.seed!.api_key_live, ...withKey(key) });
    expectSameResponse(first, other);
    expect(other.headers.get('idempotent-replay')).toBe('true');
  });

  it('the same body with its keys in another order is a replay (canonical JSON)', async () => {
    const key = newKey();
    const to = rcpt();
    const a = JSON.stringify({
      from: 'sender@example.test',
      to: [to],
      subject: 'Order',
      text: 'hi',
      tags: [{ name: 'a', value: '1' }],
      headers: { 'X-A': '1', 'X-B': '2' },
      tracking: { opens: true, clicks: false },
    });
    const b = JSON.stringify({
      tracking: { clicks: false, opens: true },
      headers: { 'X-B': '2', 'X-A': '1' },
      tags: [{ value: '1', name: 'a' }],
      text: 'hi',
      subject: 'Order',
      to: [to],
      from: 'sender@example.test',
    });
    expect(a).not.toBe(b);
    const first = await send(s, undefined, {
      raw: a,
      headers: { 'content-type': 'application/json', 'Idempotency-Key': key },
    });
    expect(first.status, first.text).toBe(202);
    const replay = await send(s, undefined, {
      raw: b,
      headers: { 'content-type': 'application/json', 'Idempotency-Key': key },
    });
    expectSameResponse(first, replay);
    expect(replay.headers.get('idempotent-replay')).toBe('true');
    // Insignificant whitespace does not matter either.
    const spaced = await send(s, undefined, {
      raw: JSON.stringify(JSON.parse(a), null, 2),
      headers: { 'content-type': 'application/json', 'Idempotency-Key': key },
    });
    expectSameResponse(first, spaced);
    expect(messagesTo(to)).toEqual([first.body.id]);
  });

  it('the same key with a different body → 409 idempotency_conflict; nothing new is created', async () => {
    const key = newKey();
    const to = rcpt();
    const first = await send(s, mail({ to, subject: 'one' }), withKey(key));
    expect(first.status).toBe(202);
    const conflict = await send(s, mail({ to, subject: 'two' }), withKey(key));
    expectProblem(conflict, 409, 'idempotency_conflict');
    expect(conflict.headers.get('idempotent-replay')).toBeNull();
    // An array order change is a different body.
    const other = rcpt();
    const k2 = newKey();
    expect((await send(s, mail({ to: [to, other] }), withKey(k2))).status).toBe(202);
    expectProblem(await send(s, mail({ to: [other, to] }), withKey(k2)), 409, 'idempotency_conflict');
    // The original is still what a replay returns.
    expectSameResponse(first, await send(s, mail({ to, subject: 'one' }), withKey(key)));
    expect(messagesTo(to)).toHaveLength(2); // `first` and the k2 message
    await s.settle();
    expect((await caughtTo(s, to)).map((m) => m.subject).sort()).toEqual(['Hello', 'one']);
  });

  it('the window is 24 hours: still a replay just before, a new message once it has passed', async () => {
    const key = newKey();
    const to = rcpt();
    const body = mail({ to });
    const first = await send(s, body, withKey(key));
    expect(first.status).toBe(202);
    await s.advance(86_399);
    const within = await send(s, body, withKey(key));
    expectSameResponse(first, within);
    expect(within.headers.get('idempotent-replay')).toBe('true');
    // Within the window a different body still conflicts.
    expectProblem(await send(s, mail({ to, subject: 'changed' }), withKey(key)), 409, 'idempotency_conflict');

    await s.advance(2); // 86 401 s after the first request
    const fresh = await send(s, body, withKey(key));
    expect(fresh.status, fresh.text).toBe(202);
    expect(fresh.headers.get('idempotent-replay')).toBeNull();
    expect(fresh.body.id).not.toBe(first.body.id);
    // …and the new response is what the key now replays.
    const again = await send(s, body, withKey(key));
    expectSameResponse(fresh, again);
    expect(messagesTo(to)).toEqual([first.body.id, fresh.body.id]);
    await s.settle();
    expect(await caughtTo(s, to)).toHaveLength(2);
  });

  it('a key of 256 characters → 400; an empty key → 400; 255 characters is fine', async () => {
    const to = rcpt();
    const long = await send(s, mail({ to }), withKey('k'.repeat(256)));
    expectProblem(long, 400, 'invalid_request');
    expect(long.body.errors.map((e: { path: string }) => e.path)).toContain('Idempotency-Key');
    expectProblem(await send(s, mail({ to }), withKey('')), 400, 'invalid_request');
    await s.settle();
    expect(await caughtTo(s, to)).toEqual([]);
    expect(messagesTo(to)).toEqual([]);

    const max = 'm'.repeat(250) + newKey().slice(-5);
    expect(max).toHaveLength(255);
    const ok = await send(s, mail({ to }), withKey(max));
    expect(ok.status, ok.text).toBe(202);
    expect((await send(s, mail({ to }), withKey(max))).headers.get('idempotent-replay')).toBe('true');
  });

  it('a failed request (422) is not stored: the corrected body with the same key is accepted', async () => {
    const key = newKey();
    const to = rcpt();
    const bad = await send(s, mail({ to, subject: 'x'.repeat(999) }), withKey(key));
    expectProblem(bad, 422, 'validation_failed');
    // The same failing request again is evaluated again (not replayed).
    const badAgain = await send(s, mail({ to, subject: 'x'.repeat(999) }), withKey(key));
    expectProblem(badAgain, 422, 'validation_failed');
    expect(badAgain.headers.get('idempotent-replay')).toBeNull();

    const fixed = await send(s, mail({ to, subject: 'fixed' }), withKey(key));
    expect(fixed.status, fixed.text).toBe(202);
    expect(fixed.headers.get('idempotent-replay')).toBeNull();
    expect(messagesTo(to)).toEqual([fixed.body.id]);
    // From now on the key is taken by the fixed body.
    expectProblem(await send(s, mail({ to, subject: 'another' }), withKey(key)), 409, 'idempotency_conflict');
    expect((await send(s, mail({ to, subject: 'fixed' }), withKey(key))).headers.get('idempotent-replay')).toBe('true');
  });

  it('keys are per workspace: the same key in another workspace creates its own message', async () => {
    const t = await newTenant(s, 'idem-other');
    const d = await addDomain(s, t.token, 'idem-other.test');
    await publishAndVerify(s, t.token, d.id);
    const otherKey = await createKey(s, t.token, { scopes: ['emails:send', 'emails:read'] });

    const key = newKey();
    const to = rcpt();
    const mine = await send(s, mail({ to }), withKey(key));
    expect(mine.status).toBe(202);
    // A different body in the other workspace: no conflict there, a message of its own.
    const theirs = await send(s, mail({ to, from: `hi@${d.name}` }), { key: otherKey.key, ...withKey(key) });
    expect(theirs.status, theirs.text).toBe(202);
    expect(theirs.headers.get('idempotent-replay')).toBeNull();
    expect(theirs.body.id).not.toBe(mine.body.id);
    expect(messagesTo(to, t.workspace_id)).toEqual([theirs.body.id]);
    expect(messagesTo(to)).toEqual([mine.body.id]);
    // The other workspace cannot read the first one's message through the shared key.
    expect((await s.call('GET', `/v1/emails/${mine.body.id}`, { token: otherKey.key })).status).toBe(404);
    await s.settle();
    expect((await caughtTo(s, to)).map((m) => m.message_id).sort()).toEqual([mine.body.id, theirs.body.id].sort());
  });

  it('20 concurrent requests with one key create exactly one message', async () => {
    const key = newKey();
    const to = rcpt();
    const body = mail({ to, subject: 'concurrent' });
    const replies = await Promise.all(Array.from({ length: 20 }, () => send(s, body, withKey(key))));
    for (const r of replies) expect(r.status, r.text).toBe(202);
    const ids = new Set(replies.map((r) => r.body.id));
    expect(ids.size).toBe(1);
    const [id] = [...ids];
    expect(replies.filter((r) => r.headers.get('idempotent-replay') === null)).toHaveLength(1);
    expect(replies.filter((r) => r.headers.get('idempotent-replay') === 'true')).toHaveLength(19);
    expect(messagesTo(to)).toEqual([id]);
    await s.settle();
    expect(await caughtTo(s, to)).toHaveLength(1);
    expect(await caughtOf(s, id!)).toHaveLength(1);
  });

  it('concurrent requests with one key and different bodies: one wins, the others conflict', async () => {
    const key = newKey();
    const tos = Array.from({ length: 10 }, () => rcpt('race'));
    const replies = await Promise.all(tos.map((to) => send(s, mail({ to }), withKey(key))));
    const won = replies.filter((r) => r.status === 202);
    expect(won).toHaveLength(1);
    for (const r of replies.filter((x) => x.status !== 202)) expectProblem(r, 409, 'idempotency_conflict');
    await s.settle();
    const caught = (await Promise.all(tos.map((to) => caughtTo(s, to)))).flat();
    expect(caught.map((m) => m.message_id)).toEqual([won[0]!.body.id]);
  });
});
