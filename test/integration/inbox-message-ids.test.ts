// A `/v1` message's msg_… id in every /sandbox/messages/{id}… route, in place of its caught copy's eml_… id
// (docs/local-server.md#sandbox-routes): the same answers, and for a message not caught (yet) a 404 that says why.
// And GET /sandbox/outbox: the /v1 messages not caught yet.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { expectProblem } from '../helpers/problems.js';
import { inboxSession } from '../helpers/inbox-session.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==',
  'base64',
);

describe('a msg_ id wherever an eml_ id goes', () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer();
  });
  afterAll(() => s?.close());
  beforeEach(async () => {
    expect((await s.admin('DELETE', '/sandbox/messages')).status).toBe(204);
    expect((await s.admin('DELETE', '/sandbox/chaos')).status).toBe(204);
  });

  const send = async (body: Record<string, unknown> = {}) => {
    const r = await s.call('POST', '/v1/emails', {
      token: s.seed!.api_key_test,
      body: {
        from: 'Shop <orders@example.test>',
        to: ['ada@example.org', 'grace@example.org'],
        cc: 'linus@example.org',
        subject: 'Your receipt',
        text: 'Thanks for your order.',
        html: '<p>Thanks for your <b>order</b>.</p>',
        attachments: [{ filename: 'dot.png', content: PNG.toString('base64'), content_type: 'image/png' }],
        ...body,
      },
    });
    expect(r.status, r.text).toBe(202);
    return r.body.id as string;
  };
  const caughtCopies = async (msg: string) =>
    (await s.admin('GET', '/sandbox/messages?limit=100')).body.data.filter((m: any) => m.message_id === msg);
  /** Sends, delivers, and answers the msg_ id and its caught copy's eml_ id. */
  const caught = async (body: Record<string, unknown> = {}) => {
    const msg = await send(body);
    await s.settle();
    const copies = await caughtCopies(msg);
    expect(copies).toHaveLength(1);
    return { msg, eml: copies[0].id as string };
  };
  const get = (path: string, token: string | null = s.adminToken) => s.call('GET', path, { token });

  it('GET the message, its raw source, HTML, attachment and checks: the same answers as by its eml_ id', async () => {
    const { msg, eml } = await caught();
    const byEml = await get(`/sandbox/messages/${eml}`);
    const byMsg = await get(`/sandbox/messages/${msg}`);
    expect(byMsg.status, byMsg.text).toBe(200);
    expect(byMsg.body).toEqual(byEml.body);
    expect(byMsg.body).toMatchObject({ id: eml, message_id: msg, subject: 'Your receipt' });

    for (const view of ['/raw', '/html', '/attachments/0']) {
      const a = await get(`/sandbox/messages/${eml}${view}`);
      const b = await get(`/sandbox/messages/${msg}${view}`);
      expect(b.status, `${view}: ${b.text}`).toBe(200);
      expect(b.headers.get('content-type')).toBe(a.headers.get('content-type'));
      expect(b.text).toBe(a.text);
    }
    expect((await get(`/sandbox/messages/${msg}/raw`)).text).toContain(`Message-ID: <${msg}@example.test>`);

    const checks = await get(`/sandbox/messages/${msg}/checks`);
    expect(checks.status, checks.text).toBe(200);
    expect(checks.body.message_id).toBe(eml);
    expect((await get(`/sandbox/messages/${eml}/checks`)).body).toEqual(checks.body);
  });

  it('read, unread, claim and delete by the msg_ id act on the caught copy', async () => {
    const { msg, eml } = await caught();
    const read = await s.admin('POST', `/sandbox/messages/${msg}/read`);
    expect(read.status, read.text).toBe(200);
    expect(read.body).toMatchObject({ id: eml, read: true });
    expect((await get(`/sandbox/messages/${eml}`)).body.read).toBe(true);
    expect((await s.admin('POST', `/sandbox/messages/${msg}/unread`)).body).toMatchObject({ id: eml, read: false });

    const first = await s.admin('POST', `/sandbox/messages/${msg}/claim`);
    expect(first.status, first.text).toBe(200);
    expect(first.body).toMatchObject({ taken: true, message: { id: eml, claimed: true } });
    expect((await s.admin('POST', `/sandbox/messages/${eml}/claim`)).body.taken).toBe(false);

    expect((await s.admin('DELETE', `/sandbox/messages/${msg}`)).status).toBe(204);
    expectProblem(await get(`/sandbox/messages/${eml}`), 404, 'not_found');
  });

  it('one copy for a message to several recipients; a second copy with its Message-ID (a resend) is not kept', async () => {
    const { msg, eml } = await caught();
    const raw = (await get(`/sandbox/messages/${msg}/raw`)).text;
    const { default: nodemailer } = await import('nodemailer');
    const t = nodemailer.createTransport({ host: '127.0.0.1', port: s.smtpPort, secure: false, ignoreTLS: true });
    await t.sendMail({ envelope: { from: 'orders@example.test', to: ['ada@example.org'] }, raw });
    t.close();
    expect((await caughtCopies(msg)).map((m: any) => m.id)).toEqual([eml]);
    expect((await get(`/sandbox/messages/${msg}`)).body.envelope.rcpt_to).toEqual([
      'ada@example.org',
      'grace@example.org',
      'linus@example.org',
    ]);
  });

  it("the inbox page's view token of a msg_ id opens that message's views, and only its own", async () => {
    const { msg } = await caught();
    const other = await caught({ subject: 'Another' });
    const session = await inboxSession(s.origin, s.adminToken);
    const token = await fetch(`${s.origin}/inbox/views/${msg}`, { headers: { authorization: `Bearer ${session}` } });
    const { view } = (await token.json()) as { view: string };
    expect((await get(`/sandbox/messages/${msg}/html?view=${view}`, null)).status).toBe(200);
    expectProblem(await get(`/sandbox/messages/${other.msg}/html?view=${view}`, null), 401);
  });

  it('a message not caught yet is a 404 that says where it is and names `svc emails get`', async () => {
    // The sink defers every message (451): it waits, queued, for a later attempt.
    expect(
      (await s.admin('PUT', '/sandbox/chaos', { rules: [{ match: { smtp: 'rcpt' }, action: { code: 451 } }] })).status,
    ).toBe(200);
    const queued = await send();
    await s.settle();
    const later = new Date(Date.parse((await s.admin('GET', '/sandbox/clock')).body.now) + 3600_000).toISOString();
    const scheduled = await send({ scheduled_at: later });
    const cancelled = await send({ scheduled_at: later });
    expect((await s.call('POST', `/v1/emails/${cancelled}/cancel`, { token: s.seed!.api_key_test })).status).toBe(200);
    await s.admin('DELETE', '/sandbox/chaos');
    const failed = await send({ to: 'fail@simulator.test', cc: undefined });
    const suppressed = await send({ to: 'suppressed@simulator.test', cc: undefined });
    const gone = (await caught()).msg;
    expect((await s.admin('DELETE', `/sandbox/messages/${gone}`)).status).toBe(204);
    await s.settle();

    const expected: [string, RegExp][] = [
      [queued, /is queued/],
      [scheduled, new RegExp(`is scheduled for ${later.replace(/\./g, '\\.')}`)],
      [cancelled, /was cancelled/],
      [failed, /failed/],
      [suppressed, /suppressed/],
      [gone, /delivered.*deleted/],
    ];
    for (const [id, why] of expected) {
      for (const path of [`/sandbox/messages/${id}`, `/sandbox/messages/${id}/raw`, `/sandbox/messages/${id}/checks`]) {
        const r = await get(path);
        expectProblem(r, 404, 'not_found');
        expect(r.body.detail).toMatch(why);
        expect(r.body.detail).toContain(`\`svc emails get ${id}\``);
      }
    }
    const unknown = await get('/sandbox/messages/msg_000000000000000000000000');
    expectProblem(unknown, 404, 'not_found');
    expect(unknown.body.detail).toMatch(/no message has this id/i);
    const noCopy = await get('/sandbox/messages/eml_000000000000000000000000');
    expectProblem(noCopy, 404, 'not_found');
    expect(noCopy.body.detail).toContain('`svc inbox`');
  });

  it("a msg_ id opens nothing without the sandbox's credential: an API key of its workspace is refused", async () => {
    const { msg } = await caught();
    expectProblem(await get(`/sandbox/messages/${msg}`, s.seed!.api_key_test!), 401, 'invalid_token');
    expectProblem(await get(`/sandbox/messages/${msg}/raw`, null), 401, 'missing_credentials');
    expectProblem(await get(`/sandbox/outbox`, s.seed!.api_key_test!), 401, 'invalid_token');
  });

  // On a fresh server (the last test here): the tests above leave /v1 messages on their way.
  it('GET /sandbox/outbox lists the /v1 messages not caught yet, newest first, with their status', async () => {
    await s.close();
    s = await startTestServer();
    expect((await s.admin('GET', '/sandbox/outbox')).body).toEqual({ data: [], has_more: false });
    expect(
      (await s.admin('PUT', '/sandbox/chaos', { rules: [{ match: { smtp: 'rcpt' }, action: { code: 451 } }] })).status,
    ).toBe(200);
    const queued = await send({ subject: 'Deferred' });
    await s.settle();
    const later = new Date(Date.parse((await s.admin('GET', '/sandbox/clock')).body.now) + 3600_000).toISOString();
    const scheduled = await send({ to: 'bob@example.org', subject: 'Later', scheduled_at: later });
    await s.admin('DELETE', '/sandbox/chaos');
    await caught({ subject: 'Delivered' });

    const all = await s.admin('GET', '/sandbox/outbox');
    expect(all.status, all.text).toBe(200);
    expect(all.body.has_more).toBe(false);
    expect(all.body.data).toEqual([
      {
        id: scheduled,
        status: 'scheduled',
        from: 'Shop <orders@example.test>',
        to: ['bob@example.org'],
        cc: ['linus@example.org'],
        subject: 'Later',
        created_at: expect.any(String),
        scheduled_at: later,
        workspace: { id: s.seed!.workspace_id, name: 'Sandbox' },
      },
      expect.objectContaining({ id: queued, status: 'queued', subject: 'Deferred', scheduled_at: null }),
    ]);
    expect((await s.admin('GET', '/sandbox/outbox?to=BOB@example.org')).body.data.map((m: any) => m.id)).toEqual([
      scheduled,
    ]);
    expect((await s.admin('GET', '/sandbox/outbox?to=linus@example.org&limit=1')).body).toMatchObject({
      data: [{ id: scheduled }],
      has_more: true,
    });
    expect((await s.admin('GET', '/sandbox/outbox?workspace=Sandbox')).body.data).toHaveLength(2);
    expectProblem(await s.admin('GET', '/sandbox/outbox?workspace=Nobody'), 404, 'not_found');

    // Caught once the sink takes it: off the list.
    await s.advance(3600);
    expect((await s.admin('GET', '/sandbox/outbox')).body.data).toEqual([]);
    expect(await caughtCopies(queued)).toHaveLength(1);
  });
});
