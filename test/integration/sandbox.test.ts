import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { endpoints } from '../../src/contract/endpoints.js';
import { serviceNow } from '../helpers/clock.js';
import { expectProblem } from '../helpers/problems.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

const PASSWORD = 'plum-quartz-harbor-1987';

describe('sandbox routes', () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer();
  });
  afterAll(() => s?.close());

  const login = async (workspace_id?: string) => {
    const r = await s.call('POST', '/v1/auth/login', {
      body: { email: s.seed!.email, password: s.seed!.password, ...(workspace_id ? { workspace_id } : {}) },
    });
    expect(r.status, r.text).toBe(200);
    return r.body;
  };

  describe('admin token', () => {
    const routes = Object.values(endpoints)
      .filter((e) => e.auth === 'admin')
      .map((e) => ({
        method: e.method,
        path: e.path.replace(':id', 'ws_doesnotexist000000000000'),
        body: 'body' in e ? {} : undefined,
      }));

    it('every sandbox route answers 401 Problem without the token or with a wrong one', async () => {
      expect(routes.length).toBeGreaterThanOrEqual(11);
      for (const r of routes) {
        const label = `${r.method} ${r.path}`;
        const none = await s.call(r.method, r.path, { body: r.body });
        expect(none.status, `${label} without token`).toBe(401);
        expectProblem(none, 401);
        for (const token of [`${s.adminToken}x`, s.adminToken.slice(0, -1), s.seed!.api_key_test, 'adm_']) {
          const wrong = await s.call(r.method, r.path, { body: r.body, token });
          expect(wrong.status, `${label} with a wrong token`).toBe(401);
          expectProblem(wrong, 401);
        }
      }
    });

    it('a refused call changes nothing', async () => {
      const before = await serviceNow(s);
      await s.call('POST', '/sandbox/clock', { body: { advance_seconds: 3600 }, token: 'adm_wrong' });
      expect(await serviceNow(s)).toBe(before);
      const ws = await s.call('POST', `/sandbox/workspaces/${s.seed!.workspace_id}/suspend`, { token: 'adm_wrong' });
      expect(ws.status).toBe(401);
      const session = await login();
      expect((await s.call('GET', '/v1/api-keys', { token: session.access_token })).status).toBe(200);
    });

    it('the admin token is not a /v1 credential', async () => {
      const r = await s.call('GET', '/v1/api-keys', { token: s.adminToken });
      expectProblem(r, 401);
    });
  });

  describe('clock', () => {
    it('GET /sandbox/clock tells the manual clock and its time', async () => {
      const r = await s.admin('GET', '/sandbox/clock');
      expect(r.status).toBe(200);
      expect(r.body).toEqual({ now: new Date(s.clock.now()).toISOString(), mode: 'manual' });
      expect(r.body.now).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    });

    it('advance_seconds moves the clock forward by that much', async () => {
      const before = await serviceNow(s);
      const r = await s.admin('POST', '/sandbox/clock', { advance_seconds: 60 });
      expect(r.status).toBe(200);
      expect(Date.parse(r.body.now)).toBe(before + 60_000);
      expect(r.body.ran).toEqual(expect.any(Number));
      expect(await serviceNow(s)).toBe(before + 60_000);
      // The clock stays where it was put: it does not run by itself.
      expect(await serviceNow(s)).toBe(before + 60_000);
      const half = await s.admin('POST', '/sandbox/clock', { advance_seconds: 1.5 });
      expect(Date.parse(half.body.now)).toBe(before + 61_500);
    });

    it('to sets the clock; the same time is fine, an earlier one is 422', async () => {
      const target = (await serviceNow(s)) + 3 * 86_400_000;
      const iso = new Date(target).toISOString();
      const r = await s.admin('POST', '/sandbox/clock', { to: iso });
      expect(r.status).toBe(200);
      expect(r.body.now).toBe(iso);
      expect((await s.admin('POST', '/sandbox/clock', { to: iso })).status).toBe(200);

      const back = await s.admin('POST', '/sandbox/clock', { to: new Date(target - 1000).toISOString() });
      expectProblem(back, 422, 'validation_failed');
      expect(back.body.errors).toEqual([expect.objectContaining({ path: 'to' })]);
      expect(await serviceNow(s)).toBe(target);
    });

    it('refuses both fields, neither, bad types and bad values without moving the clock', async () => {
      const before = await serviceNow(s);
      const both = await s.admin('POST', '/sandbox/clock', {
        advance_seconds: 5,
        to: new Date(before + 10_000).toISOString(),
      });
      expect([400, 422]).toContain(both.status);
      expectProblem(both, both.status);
      const neither = await s.admin('POST', '/sandbox/clock', {});
      expect([400, 422]).toContain(neither.status);
      expectProblem(neither, neither.status);

      const badTypes: unknown[] = [
        { advance_seconds: '60' },
        { to: 1234567890 },
        { advance_seconds: null },
        [60],
        'soon',
        { advance: 60 },
      ];
      for (const body of badTypes) {
        const r = await s.admin('POST', '/sandbox/clock', body);
        expectProblem(r, 400);
        expect(r.body.errors?.length ?? 0, JSON.stringify(body)).toBeGreaterThan(0);
      }
      expectProblem(await s.admin('POST', '/sandbox/clock', { advance_seconds: -1 }), 422, 'validation_failed');
      expectProblem(await s.admin('POST', '/sandbox/clock', { to: 'next tuesday' }), 422, 'validation_failed');

      const notJson = await s.call('POST', '/sandbox/clock', {
        raw: '{"advance_seconds":',
        token: s.adminToken,
        headers: { 'content-type': 'application/json' },
      });
      expectProblem(notJson, 400, 'invalid_json');
      const notJsonType = await s.call('POST', '/sandbox/clock', { raw: 'advance_seconds=60', token: s.adminToken });
      expectProblem(notJsonType, 400, 'unsupported_content_type');

      expect(await serviceNow(s)).toBe(before);
    });

    it('with a real clock, GET says real and POST is a 409 Problem', async () => {
      const real = await startTestServer({ clock: 'real' });
      try {
        const got = await real.admin('GET', '/sandbox/clock');
        expect(got.status).toBe(200);
        expect(got.body.mode).toBe('real');
        expect(Math.abs(Date.parse(got.body.now) - Date.now())).toBeLessThan(60_000);
        for (const body of [{ advance_seconds: 60 }, { to: new Date(Date.now() + 86_400_000).toISOString() }]) {
          const r = await real.admin('POST', '/sandbox/clock', body);
          expectProblem(r, 409);
          expect(r.body.detail).toMatch(/--clock manual/);
        }
      } finally {
        await real.close();
      }
    });
  });

  describe('invites', () => {
    it('creates a single-use invite by default, and the code lets exactly one person sign up', async () => {
      const r = await s.admin('POST', '/sandbox/invites', {});
      expect(r.status).toBe(201);
      expect(r.body).toEqual({
        id: expect.stringMatching(/^inv_[A-Za-z0-9]{24}$/),
        code: expect.any(String),
        max_uses: 1,
        expires_at: null,
      });

      const signup = (email: string) =>
        s.call('POST', '/v1/auth/signup', {
          body: { email, password: PASSWORD, workspace_name: 'Invited', invite_code: r.body.code },
        });
      const first = await signup('invited-1@example.test');
      expect(first.status, first.text).toBe(201);
      expectProblem(await signup('invited-2@example.test'), 403, 'invite_required');
    });

    it('takes no body at all, with or without a Content-Type, as every field is optional (publish too)', async () => {
      for (const headers of [{}, { 'content-type': 'application/json' }, { 'content-type': 'text/plain' }] as Record<
        string,
        string
      >[]) {
        const r = await s.call('POST', '/sandbox/invites', { token: s.adminToken, headers });
        expect(r.status, r.text).toBe(201);
        expect(r.body.max_uses).toBe(1);
      }
      const published = await s.call('POST', `/sandbox/domains/${s.seed!.domain_id}/publish`, { token: s.adminToken });
      expect(published.status, published.text).toBe(200);
      expect(published.body.records.length).toBeGreaterThan(0);
      // A body that is there must still be JSON.
      const r = await s.call('POST', '/sandbox/invites', {
        token: s.adminToken,
        raw: 'max_uses=2',
        headers: { 'content-type': 'text/plain' },
      });
      expectProblem(r, 400, 'unsupported_content_type');
    });

    it('honours max_uses and expires_at on the service clock', async () => {
      const now = await serviceNow(s);
      const expires = new Date(now + 3600_000).toISOString();
      const r = await s.admin('POST', '/sandbox/invites', { max_uses: 2, expires_at: expires });
      expect(r.status).toBe(201);
      expect(r.body).toMatchObject({ max_uses: 2, expires_at: expires });
      const signup = (email: string) =>
        s.call('POST', '/v1/auth/signup', {
          body: { email, password: PASSWORD, workspace_name: 'Team', invite_code: r.body.code },
        });
      expect((await signup('multi-1@example.test')).status).toBe(201);
      await s.advance(3600);
      expectProblem(await signup('multi-2@example.test'), 403, 'invite_required');
    });

    it('rejects bad invite bodies', async () => {
      expectProblem(await s.admin('POST', '/sandbox/invites', { max_uses: 0 }), 422, 'validation_failed');
      expectProblem(await s.admin('POST', '/sandbox/invites', { max_uses: '2' }), 400, 'invalid_request');
      expectProblem(await s.admin('POST', '/sandbox/invites', { uses: 2 }), 400, 'invalid_request');
    });
  });

  describe('workspaces', () => {
    it('adds an existing user to a new workspace with the given role', async () => {
      const r = await s.admin('POST', '/sandbox/workspaces', {
        email: s.seed!.email,
        name: 'Second Team',
        role: 'admin',
      });
      expect(r.status, r.text).toBe(201);
      expect(r.body).toEqual({
        id: expect.stringMatching(/^ws_/),
        name: 'Second Team',
        slug: 'second-team',
        role: 'admin',
        status: 'active',
      });
      // The seeded owner is now a member of two workspaces.
      const session = await login();
      expect(session.workspace).toBeUndefined();
      expect(session.workspaces.map((w: { id: string }) => w.id).sort()).toEqual(
        [r.body.id, s.seed!.workspace_id].sort(),
      );
      const picked = await login(r.body.id);
      expect(picked.workspace).toMatchObject({ id: r.body.id, role: 'admin' });
    });

    it('422 naming email for an email no user has; 400/422 for a bad body', async () => {
      const unknown = await s.admin('POST', '/sandbox/workspaces', {
        email: 'nobody@example.test',
        name: 'X',
        role: 'owner',
      });
      expectProblem(unknown, 422, 'validation_failed');
      expect(unknown.body.errors).toEqual([
        expect.objectContaining({ path: 'email', message: expect.stringContaining('no user has this email') }),
      ]);
      const malformed = await s.admin('POST', '/sandbox/workspaces', {
        email: 'not an address',
        name: 'X',
        role: 'owner',
      });
      expectProblem(malformed, 422, 'validation_failed');
      expect(malformed.body.errors).toEqual([
        { path: 'email', code: 'invalid_format', message: 'must be an email address' },
      ]);
      expectProblem(
        await s.admin('POST', '/sandbox/workspaces', { email: s.seed!.email, name: 'X', role: 'emperor' }),
        422,
      );
      expectProblem(
        await s.admin('POST', '/sandbox/workspaces', { email: s.seed!.email, role: 'owner' }),
        400,
        'invalid_request',
      );
    });

    it('suspend, activate and close set the status, and a suspended or closed workspace is refused on /v1', async () => {
      const created = await s.admin('POST', '/sandbox/workspaces', {
        email: s.seed!.email,
        name: 'Lifecycle',
        role: 'owner',
      });
      const id = created.body.id as string;
      const session = await login(id);
      const keys = () => s.call('GET', '/v1/api-keys', { token: session.access_token });
      expect((await keys()).status).toBe(200);

      const suspended = await s.admin('POST', `/sandbox/workspaces/${id}/suspend`);
      expect(suspended.status).toBe(200);
      expect(suspended.body).toMatchObject({ id, name: 'Lifecycle', status: 'suspended', role: 'owner' });
      // The role shown is the one the workspace was created with, not always owner.
      const memberWs = await s.admin('POST', '/sandbox/workspaces', {
        email: s.seed!.email,
        name: 'Member',
        role: 'member',
      });
      expect(memberWs.body.role).toBe('member');
      expect((await s.admin('POST', `/sandbox/workspaces/${memberWs.body.id}/suspend`)).body).toMatchObject({
        role: 'member',
        status: 'suspended',
      });
      expectProblem(await keys(), 403, 'workspace_suspended');

      const active = await s.admin('POST', `/sandbox/workspaces/${id}/activate`);
      expect(active.status).toBe(200);
      expect(active.body).toMatchObject({ id, status: 'active' });
      expect((await keys()).status).toBe(200);

      const closed = await s.admin('POST', `/sandbox/workspaces/${id}/close`);
      expect(closed.status).toBe(200);
      expect(closed.body).toMatchObject({ id, status: 'closed' });
      expectProblem(await keys(), 403, 'workspace_suspended');

      // Another workspace of the same user is untouched.
      const seeded = await login(s.seed!.workspace_id);
      expect((await s.call('GET', '/v1/api-keys', { token: seeded.access_token })).status).toBe(200);
    });

    it('404 Problem for an unknown workspace id', async () => {
      for (const action of ['suspend', 'activate', 'close']) {
        expectProblem(
          await s.admin('POST', `/sandbox/workspaces/ws_doesnotexist000000000000/${action}`),
          404,
          'not_found',
        );
      }
    });
  });
});

describe('verification email of a signup', () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer({ openSignup: true });
  });
  afterAll(() => s?.close());

  const signup = async (email: string) => {
    const r = await s.call('POST', '/v1/auth/signup', { body: { email, password: PASSWORD, workspace_name: 'Mine' } });
    expect(r.status, r.text).toBe(201);
    return r.body;
  };
  const inboxOf = async (email: string) => {
    const r = await s.admin('GET', `/sandbox/messages?to=${encodeURIComponent(email)}`);
    expect(r.status).toBe(200);
    return r.body.data as any[];
  };
  const tokenIn = async (id: string) => {
    const m = await s.admin('GET', `/sandbox/messages/${id}`);
    const token = /\bvt_[A-Za-z0-9_-]+/.exec(m.body.text)?.[0];
    expect(token).toBeDefined();
    return { token: token!, message: m.body };
  };

  it('arrives in the sink once the due jobs have run, with a token that confirms the address', async () => {
    const email = 'newcomer@example.test';
    await signup(email);
    await s.settle();
    const inbox = await inboxOf(email);
    expect(inbox).toHaveLength(1);
    expect(inbox[0]).toMatchObject({ to: [email], subject: 'Confirm your email address', message_id: null });
    const { token, message } = await tokenIn(inbox[0].id);
    expect(message.envelope.rcpt_to).toEqual([email]);
    expect(message.text).toContain(`${s.origin}/verify-email?token=`);
    const verified = await s.call('POST', '/v1/auth/verify-email', { body: { token } });
    expect(verified.status, verified.text).toBe(200);
    expect(verified.body).toMatchObject({ verified: true, email });
    // Settling again sends nothing more.
    await s.settle();
    expect(await inboxOf(email)).toHaveLength(1);
  });

  it('POST /sandbox/clock {advance_seconds: 0} runs the due mail before it answers', async () => {
    const email = 'clockwise@example.test';
    const before = Date.parse((await s.admin('GET', '/sandbox/clock')).body.now);
    await signup(email);
    const moved = await s.admin('POST', '/sandbox/clock', { advance_seconds: 0 });
    expect(moved.status).toBe(200);
    expect(Date.parse(moved.body.now)).toBe(before);
    const inbox = await inboxOf(email);
    expect(inbox).toHaveLength(1);
    expect(inbox[0].subject).toBe('Confirm your email address');
    expect(inbox[0].received_at).toBe(new Date(before).toISOString());
  });
});
