// GET /v1/events (docs/api.md#events): the outbox as a stream, oldest first, per workspace, with a long poll.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Event } from '../../src/contract/events.js';
import { expectProblem } from '../helpers/problems.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { createKey, newTenant, sessionOf } from '../helpers/tenants.js';

const FROM = 'Shop <orders@example.test>';

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(() => s?.close());

const get = (query: string, token = s.seed!.api_key_test) => s.call('GET', `/v1/events${query}`, { token });

async function send(to = 'delivered@simulator.test', key = s.seed!.api_key_test): Promise<string> {
  const r = await s.call('POST', '/v1/emails', { token: key, body: { from: FROM, to, subject: 'Events', text: 'Hi' } });
  expect(r.status, r.text).toBe(202);
  return r.body.id;
}

describe('GET /v1/events', () => {
  it('lists delivery bodies oldest first and pages with limit, after and has_more', async () => {
    const id = await send();
    await s.settle();
    const all = await get('?limit=100');
    expect(all.status, all.text).toBe(200);
    const mine = (all.body.data as Event[]).filter((e) => e.data.message_id === id);
    expect(mine.map((e) => e.type)).toEqual(['email.queued', 'email.sent', 'email.delivered']);
    for (const e of all.body.data) expect(Event.strict().parse(e)).toEqual(e);
    expect(mine[0]!.api_version).toBe('2026-08-01');

    const first = await get('?limit=1');
    expect(first.body.has_more).toBe(true);
    const second = await get(`?limit=1&after=${first.body.data[0].id}`);
    expect(second.body.data[0].id).toBe(all.body.data[1].id);
    const last = all.body.data.at(-1);
    expect((await get(`?after=${last.id}`)).body).toEqual({ data: [], has_more: false });
  });

  it('filters by type, repeated or comma-separated', async () => {
    await send('bounce@simulator.test');
    await s.settle();
    const types = (r: { body: { data: Event[] } }) => [...new Set(r.body.data.map((e) => e.type))].sort();
    expect(types(await get('?limit=100&type=email.bounced'))).toEqual(['email.bounced']);
    expect(types(await get('?limit=100&type=email.bounced&type=email.sent'))).toEqual(['email.bounced', 'email.sent']);
    expect(types(await get('?limit=100&type=email.bounced,email.sent'))).toEqual(['email.bounced', 'email.sent']);
    expectProblem(await get('?type=email.exploded'), 400, 'invalid_request');
  });

  it('takes a key with emails:read or a session; a key without the scope is 403', async () => {
    expect((await get('', await sessionOf(s))).status).toBe(200);
    const narrow = await createKey(s, await sessionOf(s), { scopes: ['emails:send'] });
    expectProblem(await get('', narrow.key), 403, 'insufficient_scope');
    expectProblem(await s.call('GET', '/v1/events'), 401, 'missing_credentials');
  });

  it('never shows another workspace’s events, and another workspace’s event id is not a cursor', async () => {
    const other = await newTenant(s, 'events');
    const mine = (await get('?limit=100')).body.data as Event[];
    const theirs = await get('?limit=100', other.token);
    expect(theirs.status, theirs.text).toBe(200);
    const ids = new Set((theirs.body.data as Event[]).map((e) => e.id));
    expect(mine.some((e) => ids.has(e.id))).toBe(false);
    expectProblem(await get(`?after=${mine[0]!.id}`, other.token), 400, 'invalid_request');
  });

  it('wait must be 0–30 seconds', async () => {
    for (const bad of ['31', '-1', 'abc', '1.5', '']) expectProblem(await get(`?wait=${bad}`), 400, 'invalid_request');
  });
});

describe('the long poll', () => {
  const tail = async () => ((await get('?limit=100')).body.data as Event[]).at(-1)!.id;

  it('a held wait=30 request answers as soon as a newer event commits', async () => {
    const after = await tail();
    const held = get(`?after=${after}&wait=30`);
    let answered = false;
    void held.then(() => (answered = true));
    // Nothing newer yet: still held while other requests come and go.
    for (let i = 0; i < 3; i++) expect((await s.call('GET', '/v1/openapi.json')).status).toBe(200);
    expect(answered).toBe(false);
    const id = await send();
    // Woken by the commit: an answer only at the end of the 30 s wait would come after the test's own time is up.
    const r = await held;
    expect(r.status).toBe(200);
    expect(r.body.data.map((e: Event) => [e.type, e.data.message_id])).toEqual([['email.queued', id]]);
  });

  it('with a type filter, other events do not end the wait; wait=0 answers at once', async () => {
    const after = await tail();
    const held = get(`?after=${after}&wait=30&type=email.bounced`);
    await send('delivered@simulator.test');
    await s.settle();
    // A label of its own: the address bounced earlier is on the suppression list now.
    await send('bounce+long-poll@simulator.test');
    await s.settle();
    const r = await held;
    expect(r.body.data.map((e: Event) => e.type)).toEqual(['email.bounced']);
    expect((await get(`?after=${await tail()}&wait=0`)).body).toEqual({ data: [], has_more: false });
  });

  it('a server shutting down answers every held request at once', async () => {
    const own = await startTestServer();
    const after = (await own.call('GET', '/v1/events?limit=100', { token: own.seed!.api_key_test })).body.data.at(
      -1,
    )?.id;
    const held = Array.from({ length: 20 }, () =>
      own.call('GET', `/v1/events?wait=30${after ? `&after=${after}` : ''}`, { token: own.seed!.api_key_test }),
    );
    // A request on a connection opened after theirs has come back: they are being held.
    expect((await own.call('GET', '/v1/openapi.json')).status).toBe(200);
    // Held for 30 s each unless the stop answers them: waiting them out would take longer than the test is given.
    await own.close();
    const replies = await Promise.all(held);
    for (const r of replies) {
      expect(r.body).toEqual({ data: [], has_more: false });
      // A client that polls again at once finds the server gone, rather than keeping it up on that connection.
      expect(r.headers.get('connection')).toBe('close');
    }
  });
});
