// POST /v1/auth/login: credentials, the Session, and the sign-in throttle on the service clock.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.js';
import {
  claimsOf,
  expectIdenticalResponses,
  expectProblem,
  expectRateLimited,
  login,
  newUser,
  serviceNow,
  uniqueEmail,
  uniqueIp,
} from './auth-helpers.js';

describe('login', () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer();
  });
  afterAll(() => s.close());

  it('signs in the seeded owner: 200 Session with the only workspace selected', async () => {
    const r = await login(s, s.seed!.email, s.seed!.password);
    expect(r.status, r.text).toBe(200);
    expect(r.headers.get('content-type')).toMatch(/^application\/json/);
    expect(r.headers.get('service-version')).toBe('2026-08-01');
    expect(r.headers.get('x-request-id')).toMatch(/^req_[0-9A-Za-z]{24}$/);
    const b = r.body;
    expect(b.user).toMatchObject({ id: s.seed!.user_id, email: s.seed!.email, role: 'owner' });
    expect(b.workspace).toMatchObject({ id: s.seed!.workspace_id, role: 'owner', status: 'active' });
    expect(b.workspaces).toEqual([b.workspace]);
    expect(b.refresh_token).toBeTypeOf('string');
    expect(b.refresh_token.length).toBeGreaterThanOrEqual(43); // ≥ 256 bits
    expect(b.expires_at).toBe(new Date(claimsOf(b.access_token).exp * 1000).toISOString());
  });

  it('the email is matched case-insensitively', async () => {
    const r = await login(s, s.seed!.email.toUpperCase(), s.seed!.password);
    expect(r.status, r.text).toBe(200);
    expect(r.body.user.id).toBe(s.seed!.user_id);
  });

  it('each login is a new session with its own tokens', async () => {
    const a = await login(s, s.seed!.email, s.seed!.password);
    const b = await login(s, s.seed!.email, s.seed!.password);
    expect(a.body.refresh_token).not.toBe(b.body.refresh_token);
    expect(a.body.access_token).not.toBe(b.body.access_token);
    expect(claimsOf(a.body.access_token).sid).not.toBe(claimsOf(b.body.access_token).sid);
  });

  it('wrong password and unknown email: the same 401 invalid_credentials', async () => {
    const wrong = await login(s, s.seed!.email, 'not the right password');
    const unknown = await login(s, uniqueEmail('nobody'), 'not the right password');
    expectProblem(wrong, 401, 'invalid_credentials');
    expectProblem(unknown, 401, 'invalid_credentials');
    expectIdenticalResponses(wrong, unknown);
    // The password of another account does not open this one.
    const other = await newUserOpen();
    expectProblem(await login(s, s.seed!.email, other.password), 401, 'invalid_credentials');
  });

  it('400 invalid_request for missing or unknown fields; 400 for a non-JSON body', async () => {
    const noPassword = await s.call('POST', '/v1/auth/login', { body: { email: s.seed!.email } });
    expectProblem(noPassword, 400, 'invalid_request');
    expect(noPassword.body.errors.map((e: { path: string }) => e.path)).toContain('password');

    const noEmail = await s.call('POST', '/v1/auth/login', { body: { password: 'x' } });
    expectProblem(noEmail, 400, 'invalid_request');
    expect(noEmail.body.errors.map((e: { path: string }) => e.path)).toContain('email');

    const extra = await s.call('POST', '/v1/auth/login', {
      body: { email: s.seed!.email, password: s.seed!.password, remember_me: true },
    });
    expectProblem(extra, 400, 'invalid_request');
    expect(extra.body.errors.map((e: { path: string }) => e.path)).toContain('remember_me');

    expectProblem(
      await s.call('POST', '/v1/auth/login', {
        raw: 'email=a&password=b',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
      }),
      400,
      'unsupported_content_type',
    );
    expectProblem(
      await s.call('POST', '/v1/auth/login', { raw: '{not json', headers: { 'content-type': 'application/json' } }),
      400,
      'invalid_json',
    );
  });

  it('honours Service-Version: the supported date works, any other is 400 unsupported_version', async () => {
    const ok = await s.call('POST', '/v1/auth/login', {
      body: { email: s.seed!.email, password: s.seed!.password },
      headers: { 'service-version': '2026-08-01' },
    });
    expect(ok.status).toBe(200);
    expect(ok.headers.get('service-version')).toBe('2026-08-01');
    const bad = await s.call('POST', '/v1/auth/login', {
      body: { email: s.seed!.email, password: s.seed!.password },
      headers: { 'service-version': '2025-01-01' },
    });
    expectProblem(bad, 400, 'unsupported_version');
  });

  // A second account, signed up through an invite, used above.
  async function newUserOpen() {
    const inv = await s.admin('POST', '/sandbox/invites', {});
    return newUser(s, { invite_code: inv.body.code, ip: null });
  }
});

describe('sign-in throttle: 10 per account, 30 per IP, sliding 15 minutes', () => {
  let s: TestServer;
  const PASSWORD = 'correct horse battery staple';
  beforeAll(async () => {
    // trustProxy: X-Forwarded-For sets the client address, so tests can come from several IPs.
    s = await startTestServer({ openSignup: true, trustProxy: true });
  });
  afterAll(() => s.close());

  it('per account: the 11th attempt is refused even with the right password, from any IP, until the oldest attempt leaves', async () => {
    const { email } = await newUser(s);
    const ip = uniqueIp();
    // 10 failures, 10 s apart, with varying case: they all count for the one account.
    for (let i = 0; i < 10; i++) {
      if (i > 0) await s.advance(10);
      const addr = i % 2 ? email.toUpperCase() : email;
      expectProblem(await login(s, addr, 'wrong password!!', { ip }), 401, 'invalid_credentials');
    }
    await s.advance(10); // 100 s after the first failure

    const limited = await login(s, email, PASSWORD, { ip });
    expect(expectRateLimited(limited)).toBe(800); // the first attempt leaves the window 900 s after it was made
    // The account is throttled whatever the address.
    expect(expectRateLimited(await login(s, email, PASSWORD, { ip: uniqueIp() }))).toBe(800);
    // Another account from the same address is not.
    const other = await newUser(s);
    expect((await login(s, other.email, PASSWORD, { ip })).status).toBe(200);

    await s.advance(799); // 899 s after the first
    expect(expectRateLimited(await login(s, email, PASSWORD, { ip }))).toBe(1);

    await s.advance(1); // the first failure leaves the window: 9 counted, refused attempts did not count
    expectProblem(await login(s, email, 'wrong password!!', { ip }), 401, 'invalid_credentials');
    // 10 again: the next one waits until the second failure (made at +10 s) leaves.
    expect(expectRateLimited(await login(s, email, PASSWORD, { ip }))).toBe(10);

    await s.advance(10);
    const ok = await login(s, email, PASSWORD, { ip });
    expect(ok.status, ok.text).toBe(200);
  });

  it('a successful login clears the account counter', async () => {
    const { email } = await newUser(s);
    const ip = uniqueIp();
    for (let i = 0; i < 9; i++)
      expectProblem(await login(s, email, 'wrong password!!', { ip }), 401, 'invalid_credentials');
    expect((await login(s, email, PASSWORD, { ip })).status).toBe(200);
    // Had the 9 failures still counted, the 2nd of these would already be throttled.
    for (let i = 0; i < 9; i++)
      expectProblem(await login(s, email, 'wrong password!!', { ip }), 401, 'invalid_credentials');
    expect((await login(s, email, PASSWORD, { ip })).status).toBe(200);
    // And 10 failures in a row do lock it.
    for (let i = 0; i < 10; i++)
      expectProblem(await login(s, email, 'wrong password!!', { ip }), 401, 'invalid_credentials');
    expect(expectRateLimited(await login(s, email, PASSWORD, { ip }))).toBe(900);
  });

  it('per IP: 30 failed attempts over any accounts throttle that address only; a success clears it', async () => {
    const ip = uniqueIp();
    const target = await newUser(s);
    for (let i = 0; i < 30; i++) {
      // Unknown addresses, one attempt each: no account limit is involved.
      expectProblem(await login(s, uniqueEmail('ghost'), 'wrong password!!', { ip }), 401, 'invalid_credentials');
    }
    const limited = await login(s, target.email, PASSWORD, { ip });
    expect(expectRateLimited(limited)).toBe(900);
    expect(expectRateLimited(await login(s, uniqueEmail('ghost'), 'whatever', { ip }))).toBe(900);
    // Another address is not affected.
    expect((await login(s, target.email, PASSWORD, { ip: uniqueIp() })).status).toBe(200);

    await s.advance(900);
    const ok = await login(s, target.email, PASSWORD, { ip });
    expect(ok.status, ok.text).toBe(200);
  });

  it('the IP counter is cleared by a success too', async () => {
    const ip = uniqueIp();
    const target = await newUser(s);
    for (let i = 0; i < 29; i++) {
      expectProblem(await login(s, uniqueEmail('ghost'), 'wrong password!!', { ip }), 401, 'invalid_credentials');
    }
    expect((await login(s, target.email, PASSWORD, { ip })).status).toBe(200);
    for (let i = 0; i < 29; i++) {
      expectProblem(await login(s, uniqueEmail('ghost'), 'wrong password!!', { ip }), 401, 'invalid_credentials');
    }
    expect((await login(s, target.email, PASSWORD, { ip })).status).toBe(200);
  });
});

describe('sign-in throttle without --trust-proxy', () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer();
  });
  afterAll(() => s.close());

  it('X-Forwarded-For does not get around the per-IP limit', async () => {
    const start = await serviceNow(s);
    for (let i = 0; i < 30; i++) {
      expectProblem(
        await login(s, uniqueEmail('ghost'), 'wrong password!!', { ip: uniqueIp() }),
        401,
        'invalid_credentials',
      );
    }
    expectRateLimited(await login(s, s.seed!.email, s.seed!.password, { ip: uniqueIp() }));
    expectRateLimited(await login(s, s.seed!.email, s.seed!.password));
    await s.advance(900);
    expect(await serviceNow(s)).toBe(start + 900_000);
    expect((await login(s, s.seed!.email, s.seed!.password)).status).toBe(200);
  });
});
