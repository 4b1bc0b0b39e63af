// POST /v1/emails/batch and GET /v1/emails/{id} (docs/api.md#sending: both
// are served).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type Reply, type TestServer } from '../helpers/server.js';
import {
  FROM,
  GTUBE,
  ISO_MS_Z,
  MSG_ID,
  caughtOf,
  caughtTo,
  createKey,
  expectProblem,
  getMessage,
  mail,
  outbox,
  rcpt,
  seedTenant,
  sendOk,
  serviceNow,
  sessionOf,
} from './emails-helpers.js';

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer({ sendRate: 10_000 });
});
afterAll(() => s.close());

const batch = (body: unknown, o: { key?: string; headers?: Record<string, string> } = {}) =>
  s.call('POST', '/v1/emails/batch', { token: o.key ?? s.seed!.api_key_test, body, headers: o.headers });

function expectItemProblem(item: any, status: number, code: string) {
  expect(item.status).toBe(status);
  expect(item.error).toMatchObject({ status, code, type: expect.any(String), title: expect.any(String) });
  expect(item.id).toBeUndefined();
}

describe('POST /v1/emails/batch', () => {
  it('3 items, one invalid → 207 with per-item results in request order; only the valid ones are sent', async () => {
    const [a, b, c] = [rcpt('a'), rcpt('b'), rcpt('c')];
    const r = await batch([
      mail({ to: a, subject: 'first' }),
      mail({ to: b, subject: 'x'.repeat(999) }),
      mail({ to: c, subject: 'third' }),
    ]);
    expect(r.status, r.text).toBe(207);
    expect(r.headers.get('content-type')).toMatch(/^application\/json/);
    expect(r.body.data).toHaveLength(3);
    const [i0, i1, i2] = r.body.data;
    expect(i0).toEqual({ status: 202, id: expect.stringMatching(MSG_ID), message_status: 'queued' });
    expectItemProblem(i1, 422, 'validation_failed');
    expect(i1.error.errors.map((e: { path: string }) => e.path)).toContain('subject');
    expect(i2).toEqual({ status: 202, id: expect.stringMatching(MSG_ID), message_status: 'queued' });
    expect(i0.id).not.toBe(i2.id);
    // Every send response carries the rate-limit headers.
    expect(r.headers.get('x-ratelimit-remaining')).toMatch(/^\d+$/);

    await s.settle();
    expect((await caughtTo(s, a)).map((m) => m.message_id)).toEqual([i0.id]);
    expect(await caughtTo(s, b)).toEqual([]);
    expect((await caughtTo(s, c)).map((m) => m.message_id)).toEqual([i2.id]);
    expect((await getMessage(s, i0.id)).subject).toBe('first');
    expect((await getMessage(s, i2.id)).status).toBe('delivered');
  });

  it('each item is judged on its own: shape 400, domain 422, abuse 451, template 422, scheduled items', async () => {
    const now = await serviceNow(s);
    const blocked = rcpt('blocked');
    const r = await batch([
      { from: FROM, to: rcpt(), text: 'typo', htm: '<p>' },
      mail({ from: 'x@not-ours.test' }),
      mail({ to: blocked, subject: GTUBE }),
      { from: FROM, to: rcpt(), template_id: 'tpl_1' },
      mail({ scheduled_at: new Date(now + 3600_000).toISOString() }),
      'not an object',
    ]);
    expect(r.status, r.text).toBe(207);
    const d = r.body.data;
    expect(d).toHaveLength(6);
    expectItemProblem(d[0], 400, 'invalid_request');
    expect(d[0].error.errors.map((e: { path: string }) => e.path)).toContain('htm');
    expectItemProblem(d[1], 422, 'domain_not_verified');
    expectItemProblem(d[2], 451, 'content_blocked');
    expectItemProblem(d[3], 422, 'template_not_found');
    expect(d[4]).toEqual({ status: 202, id: expect.stringMatching(MSG_ID), message_status: 'scheduled' });
    expectItemProblem(d[5], 400, 'invalid_request');
    expect((await getMessage(s, d[4].id)).status).toBe('scheduled');
    await s.settle();
    expect(await caughtTo(s, blocked)).toEqual([]);
  });

  it('0 items or 101 items → a 4xx Problem and nothing is sent; 100 items → 207', async () => {
    const empty = await batch([]);
    expect(empty.status).toBeGreaterThanOrEqual(400);
    expect(empty.status).toBeLessThan(500);
    expectProblem(empty, empty.status);
    expect(['invalid_request', 'validation_failed']).toContain(empty.body.code);

    const tos = Array.from({ length: 101 }, () => rcpt('bulk'));
    const tooMany = await batch(tos.map((to) => mail({ to })));
    expect(tooMany.status).toBeGreaterThanOrEqual(400);
    expect(tooMany.status).toBeLessThan(500);
    expectProblem(tooMany, tooMany.status);
    await s.settle();
    expect(await caughtTo(s, tos[0]!)).toEqual([]);
    expect(await caughtTo(s, tos[100]!)).toEqual([]);

    const ok = await batch(tos.slice(0, 100).map((to) => mail({ to })));
    expect(ok.status, ok.text).toBe(207);
    expect(ok.body.data).toHaveLength(100);
    expect(ok.body.data.every((x: { status: number }) => x.status === 202)).toBe(true);
    expect(new Set(ok.body.data.map((x: { id: string }) => x.id)).size).toBe(100);
  });

  it('a body that is not an array → 400 invalid_request', async () => {
    expectProblem(await batch(mail()), 400, 'invalid_request');
    expectProblem(await batch({ emails: [mail()] }), 400, 'invalid_request');
  });

  it('one Idempotency-Key covers the whole batch: a replay returns the same 207 and sends nothing new; another body → 409', async () => {
    const key = `batch-${Date.now()}`;
    const [a, b] = [rcpt('ia'), rcpt('ib')];
    const body = [mail({ to: a }), mail({ to: b, subject: 'x'.repeat(999) })];
    const first = await batch(body, { headers: { 'Idempotency-Key': key } });
    expect(first.status, first.text).toBe(207);
    expect(first.headers.get('idempotent-replay')).toBeNull();

    const replay = await batch(body, { headers: { 'Idempotency-Key': key } });
    expect(replay.status).toBe(207);
    expect(replay.headers.get('idempotent-replay')).toBe('true');
    expect(replay.body).toEqual(first.body);

    expectProblem(await batch([mail({ to: a })], { headers: { 'Idempotency-Key': key } }), 409, 'idempotency_conflict');

    await s.settle();
    expect((await caughtTo(s, a)).map((m) => m.message_id)).toEqual([first.body.data[0].id]);
    const queued = outbox(s, s.seed!.workspace_id).filter((e) => e.type === 'email.queued' && e.data.to.includes(a));
    expect(queued).toHaveLength(1);
  });

  it('needs an API key with emails:send', async () => {
    const token = await sessionOf(s, seedTenant(s));
    expectProblem(await s.call('POST', '/v1/emails/batch', { token, body: [mail()] }), 403, 'api_key_required');
    const reader = await createKey(s, token, { scopes: ['emails:read'] });
    expectProblem(await batch([mail()], { key: reader.key }), 403, 'insufficient_scope');
  });
});

describe('GET /v1/emails/{id}', () => {
  it('returns the Message: plane transactional, addresses, subject, tags, created_at and the events timeline', async () => {
    const to = rcpt();
    const cc = rcpt('cc');
    const bcc = rcpt('bcc');
    const tags = [{ name: 'kind', value: 'welcome' }];
    const a = await sendOk(
      s,
      mail({ from: 'Acme <hello@example.test>', to: [to], cc: [cc], bcc: [bcc], subject: 'Welcome', tags }),
    );
    let r: Reply = await s.call('GET', `/v1/emails/${a.id}`, { token: s.seed!.api_key_test });
    expect(r.status, r.text).toBe(200);
    expect(r.headers.get('content-type')).toMatch(/^application\/json/);
    expect(r.body).toMatchObject({
      id: a.id,
      plane: 'transactional',
      from: 'Acme <hello@example.test>',
      to: [to],
      cc: [cc],
      bcc: [bcc],
      subject: 'Welcome',
      tags,
      created_at: a.created_at,
      scheduled_at: null,
    });
    expect(r.body.created_at).toMatch(ISO_MS_Z);
    expect(['queued', 'sending', 'sent', 'delivered']).toContain(r.body.status);

    await s.settle();
    r = await s.call('GET', `/v1/emails/${a.id}`, { token: s.seed!.api_key_test });
    expect(r.body.status).toBe('delivered');
    expect(r.body.events.map((e: { type: string }) => e.type)).toEqual([
      'email.queued',
      'email.sent',
      'email.delivered',
      'email.delivered',
      'email.delivered',
    ]);
    for (const e of r.body.events) {
      expect(Object.keys(e).sort()).toEqual(['detail', 'occurred_at', 'type']);
      expect(e.occurred_at).toMatch(ISO_MS_Z);
    }
    // One delivered entry per recipient, each naming it.
    expect(
      r.body.events
        .slice(2)
        .map((e: { detail: { to: string } }) => e.detail.to)
        .sort(),
    ).toEqual([to, cc, bcc].sort());
    expect(await caughtOf(s, a.id)).toHaveLength(1);
  });

  it('an unknown id → 404 not_found; a key without emails:read → 403 insufficient_scope', async () => {
    expectProblem(
      await s.call('GET', '/v1/emails/msg_unknownunknownunknown00', { token: s.seed!.api_key_test }),
      404,
      'not_found',
    );
    expectProblem(await s.call('GET', '/v1/emails/whatever', { token: s.seed!.api_key_test }), 404, 'not_found');
    const token = await sessionOf(s, seedTenant(s));
    const sender = await createKey(s, token, { scopes: ['emails:send'] });
    const a = await sendOk(s, mail(), { key: sender.key });
    expectProblem(await s.call('GET', `/v1/emails/${a.id}`, { token: sender.key }), 403, 'insufficient_scope');
    expect((await getMessage(s, a.id)).id).toBe(a.id);
  });
});
