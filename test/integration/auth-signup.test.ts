// POST /v1/auth/signup: invite-only posture, signup rules, the created workspace, the per-IP limit.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.js';
import {
  GOOD_PASSWORD,
  claimsOf,
  expectIdenticalResponses,
  expectProblem,
  expectRateLimited,
  login,
  newUser,
  serviceNow,
  signup,
  uniqueEmail,
  uniqueIp,
} from './auth-helpers.js';

const SLUG = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;

describe('signup is invite-only by default', () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer({ trustProxy: true });
  });
  afterAll(() => s.close());

  const invite = async (body: { max_uses?: number; expires_at?: string } = {}) => {
    const r = await s.admin('POST', '/sandbox/invites', body);
    expect(r.status, r.text).toBe(201);
    return r.body as { id: string; code: string; max_uses: number; expires_at: string | null };
  };

  it('refuses a missing and a wrong invite code with the identical 403 invite_required', async () => {
    const email = uniqueEmail();
    const missing = await signup(s, { email });
    const wrong = await signup(s, { email, invite_code: 'inv-not-a-real-code' });
    expectProblem(missing, 403, 'invite_required');
    expectProblem(wrong, 403, 'invite_required');
    expectIdenticalResponses(missing, wrong);
    expect(missing.body.request_id).not.toBe(wrong.body.request_id);
  });

  it('points at the waitlist with an absolute URL', async () => {
    const r = await signup(s);
    expectProblem(r, 403, 'invite_required');
    expect(r.body.waitlist_url).toBeTypeOf('string');
    const url = new URL(r.body.waitlist_url); // throws for a relative reference
    expect(url.protocol).toMatch(/^https?:$/);
    expect(url.host).not.toBe('');
  });

  it('no account exists after a refused signup', async () => {
    const email = uniqueEmail();
    expectProblem(await signup(s, { email }), 403, 'invite_required');
    expectProblem(await login(s, email, GOOD_PASSWORD), 401, 'invalid_credentials');
  });

  it('creates invites through the sandbox: single use by default', async () => {
    const inv = await invite();
    expect(inv.id).toMatch(/^inv_[0-9A-Za-z]{24}$/);
    expect(inv.code).toBeTypeOf('string');
    expect(inv.max_uses).toBe(1);
    expect(inv.expires_at).toBeNull();

    const first = await signup(s, { invite_code: inv.code });
    expect(first.status, first.text).toBe(201);

    const again = await signup(s, { invite_code: inv.code });
    expectProblem(again, 403, 'invite_required');
    // A used code is indistinguishable from no code at all.
    expectIdenticalResponses(await signup(s), again);
  });

  it('an invite with max_uses admits that many signups and no more', async () => {
    const inv = await invite({ max_uses: 3 });
    expect(inv.max_uses).toBe(3);
    for (let i = 0; i < 3; i++) {
      const r = await signup(s, { invite_code: inv.code });
      expect(r.status, r.text).toBe(201);
    }
    expectProblem(await signup(s, { invite_code: inv.code }), 403, 'invite_required');
  });

  it('an expired invite is refused like a wrong one; before expiry it works', async () => {
    const now = await serviceNow(s);
    const expires = new Date(now + 3600_000).toISOString();
    const a = await invite({ expires_at: expires });
    const b = await invite({ expires_at: expires });
    expect(a.expires_at).toBe(expires);

    await s.advance(3599);
    const ok = await signup(s, { invite_code: a.code });
    expect(ok.status, ok.text).toBe(201);

    await s.advance(2);
    const late = await signup(s, { invite_code: b.code });
    expectProblem(late, 403, 'invite_required');
    expectIdenticalResponses(await signup(s), late);
  });

  it('a signup refused for a rule does not use up the invite', async () => {
    const existing = await newUser(s, { invite_code: (await invite()).code });
    const inv = await invite();

    expectProblem(await signup(s, { invite_code: inv.code, password: 'short' }), 422, 'password_too_short');
    expectProblem(await signup(s, { invite_code: inv.code, password: 'password1234' }), 422, 'password_breached');
    expectProblem(await signup(s, { invite_code: inv.code, email: existing.email }), 422, 'email_taken');

    const ok = await signup(s, { invite_code: inv.code });
    expect(ok.status, ok.text).toBe(201);
    expectProblem(await signup(s, { invite_code: inv.code }), 403, 'invite_required');
  });
});

describe('signup with open registration', () => {
  let s: TestServer;
  beforeAll(async () => {
    // trustProxy lets each signup come from its own address, so the per-IP limit stays out of the way here.
    s = await startTestServer({ openSignup: true, trustProxy: true });
  });
  afterAll(() => s.close());

  it('needs no invite and answers 201 with a usable session for the new owner', async () => {
    const email = uniqueEmail('new');
    const r = await signup(s, { email, workspace_name: 'Acme Mail', name: 'Ada' });
    expect(r.status, r.text).toBe(201);
    expect(r.headers.get('content-type')).toMatch(/^application\/json/);
    expect(r.headers.get('service-version')).toBe('2026-08-01');

    const body = r.body;
    expect(body.user).toMatchObject({ email, name: 'Ada', role: 'owner' });
    expect(body.user.id).toMatch(/^usr_[0-9A-Za-z]{24}$/);
    expect(body.workspace).toMatchObject({ name: 'Acme Mail', slug: 'acme-mail', role: 'owner', status: 'active' });
    expect(body.workspace.id).toMatch(/^ws_[0-9A-Za-z]{24}$/);
    expect(body.workspaces).toEqual([body.workspace]);
    expect(body.refresh_token).toBeTypeOf('string');
    expect(body.refresh_token).not.toBe(body.access_token);

    const claims = claimsOf(body.access_token);
    expect(claims.sub).toBe(body.user.id);
    expect(claims.ws).toBe(body.workspace.id);
    expect(body.expires_at).toBe(new Date(claims.exp * 1000).toISOString());

    const me = await s.call('GET', '/v1/auth/me', { token: body.access_token });
    expect(me.status, me.text).toBe(200);
    expect(me.body.user).toMatchObject({ id: body.user.id, email, email_verified: false });

    // The new owner can manage the new workspace and sign in with the chosen password.
    const keys = await s.call('GET', '/v1/api-keys', { token: body.access_token });
    expect(keys.status, keys.text).toBe(200);
    expect(keys.body.data).toEqual([]);
    const li = await login(s, email, GOOD_PASSWORD);
    expect(li.status, li.text).toBe(200);
    expect(li.body.workspace.id).toBe(body.workspace.id);
  });

  it('email_taken for an address already registered, whatever its case; the account is unchanged', async () => {
    const { email } = await newUser(s);
    const other = 'a different password!';
    const same = await signup(s, { email, password: other });
    expectProblem(same, 422, 'email_taken');

    const upper = await signup(s, { email: email.toUpperCase(), password: other });
    expectProblem(upper, 422, 'email_taken');

    expect((await login(s, email, GOOD_PASSWORD)).status).toBe(200);
    expectProblem(await login(s, email, other), 401, 'invalid_credentials');
  });

  it('password_too_short under 12 characters; exactly 12 is enough', async () => {
    const short = await signup(s, { password: 'abcdefghij1' }); // 11
    expectProblem(short, 422, 'password_too_short');
    expect(short.body.errors).toEqual(expect.arrayContaining([expect.objectContaining({ path: 'password' })]));

    expectProblem(await signup(s, { password: '' }), 422, 'password_too_short');

    const email = uniqueEmail();
    const twelve = await signup(s, { email, password: 'kx7#Qm2!vL9p' });
    expect(twelve.status, twelve.text).toBe(201);
    expect((await login(s, email, 'kx7#Qm2!vL9p')).status).toBe(200);
  });

  it('length is the only composition rule: a long all-lowercase passphrase is accepted', async () => {
    const r = await signup(s, { password: 'zebra lantern orbit quilt' });
    expect(r.status, r.text).toBe(201);
  });

  it('password_breached for a common password on the bundled list, matched case-insensitively', async () => {
    for (const password of ['password1234', 'PASSWORD1234', 'PassWord1234', 'qwertyuiop123', '123456789012']) {
      const email = uniqueEmail();
      const r = await signup(s, { email, password });
      expectProblem(r, 422, 'password_breached');
      expect(r.body.errors).toEqual(expect.arrayContaining([expect.objectContaining({ path: 'password' })]));
      // Nothing was created: the address is still free.
      const ok = await signup(s, { email });
      expect(ok.status, ok.text).toBe(201);
    }
  });

  it('400 invalid_request for missing fields, naming them', async () => {
    const full = { email: uniqueEmail(), password: GOOD_PASSWORD, workspace_name: 'Acme' };
    for (const field of ['email', 'password', 'workspace_name'] as const) {
      const body: Record<string, unknown> = { ...full };
      delete body[field];
      const r = await s.call('POST', '/v1/auth/signup', { body });
      expectProblem(r, 400, 'invalid_request');
      expect(r.body.errors.map((e: { path: string }) => e.path)).toContain(field);
    }
  });

  it('400 invalid_request for an unknown field (a typo is not dropped), and for a wrong JSON type', async () => {
    const typo = await s.call('POST', '/v1/auth/signup', {
      body: { email: uniqueEmail(), password: GOOD_PASSWORD, workspace_name: 'Acme', invite: 'x' },
    });
    expectProblem(typo, 400, 'invalid_request');
    expect(typo.body.errors.map((e: { path: string }) => e.path)).toContain('invite');

    const wrongType = await s.call('POST', '/v1/auth/signup', {
      body: { email: uniqueEmail(), password: 123456789012345, workspace_name: 'Acme' },
    });
    expectProblem(wrongType, 400, 'invalid_request');
    expect(wrongType.body.errors.map((e: { path: string }) => e.path)).toContain('password');

    expectProblem(await s.call('POST', '/v1/auth/signup', { body: [1, 2] }), 400, 'invalid_request');
  });

  it('400 for a body that is not JSON or not sent as JSON', async () => {
    expectProblem(
      await s.call('POST', '/v1/auth/signup', { raw: '{"email":', headers: { 'content-type': 'application/json' } }),
      400,
      'invalid_json',
    );
    expectProblem(
      await s.call('POST', '/v1/auth/signup', {
        raw: JSON.stringify({ email: uniqueEmail(), password: GOOD_PASSWORD, workspace_name: 'Acme' }),
        headers: { 'content-type': 'text/plain' },
      }),
      400,
      'unsupported_content_type',
    );
  });

  it('422 validation_failed for a malformed email', async () => {
    for (const email of ['not-an-email', 'two@@example.com', 'spaces in@example.com']) {
      const r = await signup(s, { email });
      expectProblem(r, 422, 'validation_failed');
      expect(r.body.errors.map((e: { path: string }) => e.path)).toContain('email');
    }
  });

  it('the workspace slug is lowercase ASCII with collapsed dashes, trimmed', async () => {
    const cases: [string, string][] = [
      ['Hello World', 'hello-world'],
      ['  --Foo__Bar!!  Baz--  ', 'foo-bar-baz'],
      ['Café Crème', 'cafe-creme'],
      ['UPPER case 42', 'upper-case-42'],
    ];
    for (const [name, slug] of cases) {
      const { workspace } = await newUser(s, { workspace_name: name });
      expect(workspace.slug).toBe(slug);
      expect(workspace.name).toBe(name.trim());
    }
  });

  it('a slug already taken is made unique with -2, -3', async () => {
    const a = await newUser(s, { workspace_name: 'Globex, Inc.' });
    const b = await newUser(s, { workspace_name: 'GLOBEX inc' });
    const c = await newUser(s, { workspace_name: 'globex---inc!' });
    expect([a.workspace.slug, b.workspace.slug, c.workspace.slug]).toEqual([
      'globex-inc',
      'globex-inc-2',
      'globex-inc-3',
    ]);
    // The seeded workspace is called "Sandbox".
    const d = await newUser(s, { workspace_name: 'Sandbox' });
    expect(d.workspace.slug).toBe('sandbox-2');
  });

  it('a slug is at most 63 characters, also when a suffix is needed', async () => {
    const long = 'x'.repeat(100);
    const a = await newUser(s, { workspace_name: long });
    const b = await newUser(s, { workspace_name: long });
    expect(a.workspace.slug).toBe('x'.repeat(63));
    expect(b.workspace.slug).toMatch(/^x+-2$/);
    expect(b.workspace.slug.length).toBeLessThanOrEqual(63);
    expect(a.workspace.name).toBe(long);
  });

  it('a name with no ASCII letters still gets a valid slug', async () => {
    const a = await newUser(s, { workspace_name: '日本語 !!!' });
    const b = await newUser(s, { workspace_name: '日本語 ???' });
    for (const slug of [a.workspace.slug, b.workspace.slug]) {
      expect(slug).toMatch(SLUG);
      expect(slug.length).toBeGreaterThanOrEqual(1);
      expect(slug.length).toBeLessThanOrEqual(63);
    }
    expect(a.workspace.slug).not.toBe(b.workspace.slug);
  });
});

describe('signup limit: 20 per IP per hour on the service clock', () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer({ openSignup: true });
  });
  afterAll(() => s.close());

  it('the 21st signup from one address within an hour is refused until the clock moves an hour', async () => {
    for (let i = 0; i < 20; i++) {
      const r = await signup(s, { ip: null });
      expect(r.status, `signup ${i + 1}: ${r.text}`).toBe(201);
    }
    const email = uniqueEmail();
    const limited = await signup(s, { email, ip: null });
    const retryAfter = expectRateLimited(limited);
    expect(retryAfter).toBeLessThanOrEqual(3600);
    // Nothing was created by the refused attempt.
    expectProblem(await login(s, email, GOOD_PASSWORD), 401, 'invalid_credentials');

    // X-Forwarded-For is not trusted without --trust-proxy: it does not get around the limit.
    expectRateLimited(await signup(s, { ip: uniqueIp() }));

    await s.advance(3599);
    expectRateLimited(await signup(s, { ip: null }));
    await s.advance(1);
    const after = await signup(s, { email, ip: null });
    expect(after.status, after.text).toBe(201);
  });
});
