// Access tokens (HS256 JWT, 15 minutes), POST /v1/auth/refresh, POST /v1/auth/logout, POST /v1/auth/sessions/revoke-all.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { claimsOf, expectProblem, headerOf, login, newUser, refresh, serviceNow } from './auth-helpers.js';

const me = (s: TestServer, token: string | null) => s.call('GET', '/v1/auth/me', { token });
const b64url = (v: unknown) => Buffer.from(typeof v === 'string' ? v : JSON.stringify(v)).toString('base64url');

describe('access tokens', () => {
  let s: TestServer;
  let dir: string;
  let jwtKey: Uint8Array;
  beforeAll(async () => {
    // A data directory, so the test can read the server's signing key and forge tokens with it.
    dir = mkdtempSync(join(tmpdir(), 'svc-auth-'));
    s = await startTestServer({ dataDir: dir });
    const secrets = JSON.parse(readFileSync(join(dir, 'secrets.json'), 'utf8')) as { jwt: string };
    jwtKey = new Uint8Array(Buffer.from(secrets.jwt, 'base64'));
  });
  afterAll(async () => {
    await s.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const seedLogin = async () => {
    const r = await login(s, s.seed!.email, s.seed!.password);
    expect(r.status, r.text).toBe(200);
    return r.body;
  };

  it('is an HS256 JWT with sub, sid, ws, iat, exp = iat + 900, jti; expires_at = exp', async () => {
    const now = await serviceNow(s);
    const session = await seedLogin();
    const header = headerOf(session.access_token);
    expect(header.alg).toBe('HS256');
    const c = claimsOf(session.access_token);
    expect(c.sub).toBe(s.seed!.user_id);
    expect(c.ws).toBe(s.seed!.workspace_id);
    expect(c.sid).toBeTypeOf('string');
    expect(c.jti).toBeTypeOf('string');
    expect(c.iat).toBe(Math.floor(now / 1000));
    expect(c.exp).toBe(c.iat + 900);
    expect(session.expires_at).toBe(new Date(c.exp * 1000).toISOString());
    expect(session.expires_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    const other = await seedLogin();
    expect(claimsOf(other.access_token).jti).not.toBe(c.jti);
  });

  it('GET /auth/me answers with the user and the selected workspace', async () => {
    const session = await seedLogin();
    const r = await me(s, session.access_token);
    expect(r.status, r.text).toBe(200);
    expect(r.body.user).toMatchObject({ id: s.seed!.user_id, email: s.seed!.email, email_verified: true });
    // Case of the scheme does not matter.
    const lower = await s.call('GET', '/v1/auth/me', { headers: { authorization: `bearer ${session.access_token}` } });
    expect(lower.status).toBe(200);
  });

  it('works for 15 minutes on the service clock, then 401 invalid_token', async () => {
    const session = await seedLogin();
    await s.advance(899);
    expect((await me(s, session.access_token)).status).toBe(200);
    await s.advance(2);
    const r = await me(s, session.access_token);
    expectProblem(r, 401, 'invalid_token');
    // Other session endpoints refuse it too.
    expectProblem(await s.call('GET', '/v1/api-keys', { token: session.access_token }), 401, 'invalid_token');
  });

  it('no Authorization header: 401 missing_credentials', async () => {
    expectProblem(await me(s, null), 401, 'missing_credentials');
    expectProblem(
      await s.call('GET', '/v1/auth/me', { headers: { authorization: 'Basic dXNlcjpwYXNz' } }),
      401,
      'missing_credentials',
    );
  });

  it('a tampered payload is 401 invalid_token', async () => {
    const session = await seedLogin();
    const [h, p, sig] = session.access_token.split('.');
    const claims = JSON.parse(Buffer.from(p!, 'base64url').toString());
    for (const change of [
      { sub: 'usr_000000000000000000000000' },
      { exp: claims.exp + 86400 },
      { ws: 'ws_000000000000000000000000' },
    ]) {
      const forged = `${h}.${b64url({ ...claims, ...change })}.${sig}`;
      expectProblem(await me(s, forged), 401, 'invalid_token');
    }
    // The signature itself altered.
    const flipped = sig!.slice(0, -2) + (sig!.endsWith('AA') ? 'BB' : 'AA');
    expectProblem(await me(s, `${h}.${p}.${flipped}`), 401, 'invalid_token');
    expectProblem(await me(s, 'not-a-jwt'), 401, 'invalid_token');
  });

  it('a token signed by the server key with the same claims is accepted (control for the forgeries below)', async () => {
    const session = await seedLogin();
    const claims = claimsOf(session.access_token);
    const token = await new SignJWT({ ...claims }).setProtectedHeader({ alg: 'HS256', typ: 'JWT' }).sign(jwtKey);
    const r = await me(s, token);
    expect(r.status, r.text).toBe(200);
    expect(r.body.user.id).toBe(s.seed!.user_id);
  });

  it('alg none, HS512 (even with the server key), or another key: 401 invalid_token', async () => {
    const session = await seedLogin();
    const claims = claimsOf(session.access_token);

    const none = `${b64url({ alg: 'none', typ: 'JWT' })}.${b64url(claims)}.`;
    expectProblem(await me(s, none), 401, 'invalid_token');
    const noneUpper = `${b64url({ alg: 'None', typ: 'JWT' })}.${b64url(claims)}.`;
    expectProblem(await me(s, noneUpper), 401, 'invalid_token');

    const hs512 = await new SignJWT({ ...claims }).setProtectedHeader({ alg: 'HS512', typ: 'JWT' }).sign(jwtKey);
    expectProblem(await me(s, hs512), 401, 'invalid_token');
    const hs384 = await new SignJWT({ ...claims }).setProtectedHeader({ alg: 'HS384', typ: 'JWT' }).sign(jwtKey);
    expectProblem(await me(s, hs384), 401, 'invalid_token');

    const otherKey = await new SignJWT({ ...claims })
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
      .sign(new Uint8Array(randomBytes(32)));
    expectProblem(await me(s, otherKey), 401, 'invalid_token');
  });

  it('a server-signed token that is already expired, or lacks sid, is refused', async () => {
    const session = await seedLogin();
    const claims = claimsOf(session.access_token);
    const expired = await new SignJWT({ ...claims, iat: claims.iat - 1000, exp: claims.iat - 100 })
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
      .sign(jwtKey);
    expectProblem(await me(s, expired), 401, 'invalid_token');
    const { sid: _sid, ...noSid } = claims;
    const withoutSid = await new SignJWT({ ...noSid }).setProtectedHeader({ alg: 'HS256', typ: 'JWT' }).sign(jwtKey);
    expectProblem(await me(s, withoutSid), 401, 'invalid_token');
  });

  it('an API key is not a session: 403 session_required on /auth/me; an unknown key is 401', async () => {
    expectProblem(await me(s, s.seed!.api_key_test), 403, 'session_required');
    expectProblem(await me(s, s.seed!.api_key_live), 403, 'session_required');
    expectProblem(
      await s.call('POST', '/v1/auth/sessions/revoke-all', { token: s.seed!.api_key_test }),
      403,
      'session_required',
    );
    expectProblem(await me(s, `svc_test_${'A'.repeat(32)}`), 401, 'invalid_api_key');
  });
});

describe('refresh', () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer();
  });
  afterAll(() => s.close());

  const seedLogin = async () => {
    const r = await login(s, s.seed!.email, s.seed!.password);
    expect(r.status, r.text).toBe(200);
    return r.body;
  };

  it('rotates: a new refresh token and a new working access token, same session family and workspace', async () => {
    const first = await seedLogin();
    const r = await refresh(s, first.refresh_token);
    expect(r.status, r.text).toBe(200);
    expect(r.body.refresh_token).toBeTypeOf('string');
    expect(r.body.refresh_token).not.toBe(first.refresh_token);
    expect(r.body.access_token).not.toBe(first.access_token);
    expect(r.body.user.id).toBe(s.seed!.user_id);
    expect(r.body.workspace.id).toBe(s.seed!.workspace_id);
    const c = claimsOf(r.body.access_token);
    expect(c.sid).toBe(claimsOf(first.access_token).sid);
    expect(c.ws).toBe(s.seed!.workspace_id);
    expect(r.body.expires_at).toBe(new Date(c.exp * 1000).toISOString());
    expect((await me(s, r.body.access_token)).status).toBe(200);

    // The chain goes on.
    let token = r.body.refresh_token;
    for (let i = 0; i < 3; i++) {
      const next = await refresh(s, token);
      expect(next.status, next.text).toBe(200);
      token = next.body.refresh_token;
    }
  });

  it('a refreshed access token is valid 15 minutes from the refresh', async () => {
    const first = await seedLogin();
    await s.advance(600);
    const r = await refresh(s, first.refresh_token);
    const now = await serviceNow(s);
    expect(claimsOf(r.body.access_token).exp).toBe(Math.floor(now / 1000) + 900);
    await s.advance(600); // 1200 s after login: the first access token has expired, the new one has not
    expectProblem(await me(s, first.access_token), 401, 'invalid_token');
    expect((await me(s, r.body.access_token)).status).toBe(200);
  });

  it('reusing a rotated token is 401 and revokes the whole family, newest token included; other sessions survive', async () => {
    const other = await seedLogin();
    const first = await seedLogin();
    const second = await refresh(s, first.refresh_token);
    expect(second.status).toBe(200);
    const third = await refresh(s, second.body.refresh_token);
    expect(third.status).toBe(200);

    const reuse = await refresh(s, first.refresh_token);
    expectProblem(reuse, 401, 'invalid_refresh_token');
    // The newest token of the family no longer works either.
    expectProblem(await refresh(s, third.body.refresh_token), 401, 'invalid_refresh_token');
    expectProblem(await refresh(s, second.body.refresh_token), 401, 'invalid_refresh_token');
    // A session from another login is a different family.
    const ok = await refresh(s, other.refresh_token);
    expect(ok.status, ok.text).toBe(200);
  });

  it('reusing the token just rotated (a replayed request) also revokes the family', async () => {
    const first = await seedLogin();
    const second = await refresh(s, first.refresh_token);
    expectProblem(await refresh(s, first.refresh_token), 401, 'invalid_refresh_token');
    expectProblem(await refresh(s, second.body.refresh_token), 401, 'invalid_refresh_token');
  });

  it('two concurrent refreshes with one token: exactly one succeeds', async () => {
    const first = await seedLogin();
    const results = await Promise.all([refresh(s, first.refresh_token), refresh(s, first.refresh_token)]);
    const statuses = results.map((r) => r.status).sort();
    expect(statuses).toEqual([200, 401]);
    expectProblem(results.find((r) => r.status === 401)!, 401, 'invalid_refresh_token');
  });

  it('an unknown token is 401 invalid_refresh_token', async () => {
    expectProblem(await refresh(s, 'rt_this-was-never-issued'), 401, 'invalid_refresh_token');
    expectProblem(await refresh(s, ''), 401, 'invalid_refresh_token');
    expectProblem(await refresh(s, `rt_${'x'.repeat(400)}`), 401, 'invalid_refresh_token');
    // An access token is not a refresh token.
    const session = await seedLogin();
    expectProblem(await refresh(s, session.access_token), 401, 'invalid_refresh_token');
  });

  it('400 invalid_request without refresh_token or with an unknown field', async () => {
    const missing = await s.call('POST', '/v1/auth/refresh', { body: {} });
    expectProblem(missing, 400, 'invalid_request');
    expect(missing.body.errors.map((e: { path: string }) => e.path)).toContain('refresh_token');
    expectProblem(await s.call('POST', '/v1/auth/refresh', { body: { refresh_token: 12 } }), 400, 'invalid_request');
    const session = await seedLogin();
    expectProblem(
      await s.call('POST', '/v1/auth/refresh', { body: { refresh_token: session.refresh_token, token: 'x' } }),
      400,
      'invalid_request',
    );
    // The refused request did not use the token up.
    expect((await refresh(s, session.refresh_token)).status).toBe(200);
  });

  // Moves the clock 30 days: kept last in this block.
  it('a refresh token is valid 30 days on the service clock', async () => {
    const a = await seedLogin();
    const b = await seedLogin();
    await s.advance(30 * 86400 - 1);
    const ok = await refresh(s, a.refresh_token);
    expect(ok.status, ok.text).toBe(200);
    await s.advance(1);
    expectProblem(await refresh(s, b.refresh_token), 401, 'invalid_refresh_token');
    // The rotated one is good for 30 days from its own issue.
    expect((await refresh(s, ok.body.refresh_token)).status).toBe(200);
  });
});

describe('logout', () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer();
  });
  afterAll(() => s.close());

  const logout = (body: unknown) => s.call('POST', '/v1/auth/logout', { body });
  const seedLogin = async () => (await login(s, s.seed!.email, s.seed!.password)).body;

  it('204 with no body for a known token; that refresh token then no longer refreshes', async () => {
    const session = await seedLogin();
    const other = await seedLogin();
    const r = await logout({ refresh_token: session.refresh_token });
    expect(r.status).toBe(204);
    expect(r.text).toBe('');
    expect(r.headers.get('service-version')).toBe('2026-08-01');
    expect(r.headers.get('x-request-id')).toMatch(/^req_/);
    expectProblem(await refresh(s, session.refresh_token), 401, 'invalid_refresh_token');
    // Only that session ended.
    expect((await refresh(s, other.refresh_token)).status).toBe(200);
  });

  it('ends the session, not just the token presented: a rotated-from token cannot resurrect it', async () => {
    const session = await seedLogin();
    const next = await refresh(s, session.refresh_token);
    expect((await logout({ refresh_token: next.body.refresh_token })).status).toBe(204);
    expectProblem(await refresh(s, next.body.refresh_token), 401, 'invalid_refresh_token');
  });

  it('204 for unknown, repeated, empty and very long tokens', async () => {
    expect((await logout({ refresh_token: 'rt_unknown' })).status).toBe(204);
    expect((await logout({ refresh_token: '' })).status).toBe(204);
    expect((await logout({ refresh_token: `rt_${'y'.repeat(400)}` })).status).toBe(204);
    const session = await seedLogin();
    expect((await logout({ refresh_token: session.refresh_token })).status).toBe(204);
    expect((await logout({ refresh_token: session.refresh_token })).status).toBe(204);
  });

  it('400 only when refresh_token is missing', async () => {
    const r = await logout({});
    expectProblem(r, 400, 'invalid_request');
    expect(r.body.errors.map((e: { path: string }) => e.path)).toContain('refresh_token');
  });

  it('204 for an expired token', async () => {
    const session = await seedLogin();
    await s.advance(30 * 86400 + 1);
    expectProblem(await refresh(s, session.refresh_token), 401, 'invalid_refresh_token');
    expect((await logout({ refresh_token: session.refresh_token })).status).toBe(204);
  });
});

describe('revoke-all', () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer({ openSignup: true });
  });
  afterAll(() => s.close());

  it('revokes every refresh token of the user; issued access tokens work until they expire', async () => {
    const u = await newUser(s, { ip: null }); // session 1 (signup)
    const l2 = (await login(s, u.email, u.password)).body; // session 2
    const l3 = (await login(s, u.email, u.password)).body; // session 3
    const l3b = (await refresh(s, l3.refresh_token)).body; // session 3, rotated: still one session
    const bystander = await newUser(s, { ip: null });

    await s.advance(120);
    const now = await serviceNow(s);
    const r = await s.call('POST', '/v1/auth/sessions/revoke-all', { token: l2.access_token });
    expect(r.status, r.text).toBe(200);
    expect(r.headers.get('content-type')).toMatch(/^application\/json/);
    expect(r.body.revoked).toBe(3);
    expect(r.body.access_tokens_valid_until).toBe(new Date(now + 15 * 60_000).toISOString());
    expect(r.body.note).toBeTypeOf('string');
    expect(r.body.note.length).toBeGreaterThan(0);

    for (const t of [u.session.refresh_token, l2.refresh_token, l3b.refresh_token]) {
      expectProblem(await refresh(s, t), 401, 'invalid_refresh_token');
    }
    // Another user's sessions are untouched.
    expect((await refresh(s, bystander.session.refresh_token)).status).toBe(200);

    // The access token already issued keeps working until its own expiry (login + 900 s) ...
    expect((await me(s, l2.access_token)).status).toBe(200);
    expect((await me(s, l3b.access_token)).status).toBe(200);
    await s.advance(900 - 120 - 1);
    expect((await me(s, l2.access_token)).status).toBe(200);
    await s.advance(2);
    expectProblem(await me(s, l2.access_token), 401, 'invalid_token');

    // ... and signing in again starts a fresh session.
    const again = await login(s, u.email, u.password);
    expect(again.status).toBe(200);
    expect((await refresh(s, again.body.refresh_token)).status).toBe(200);
  });

  it('with nothing left to revoke: 200 revoked 0', async () => {
    const u = await newUser(s, { ip: null });
    const first = await s.call('POST', '/v1/auth/sessions/revoke-all', { token: u.session.access_token });
    expect(first.body.revoked).toBe(1);
    const second = await s.call('POST', '/v1/auth/sessions/revoke-all', { token: u.session.access_token });
    expect(second.status).toBe(200);
    expect(second.body.revoked).toBe(0);
  });

  it('needs a session: 401 without credentials', async () => {
    expectProblem(await s.call('POST', '/v1/auth/sessions/revoke-all'), 401, 'missing_credentials');
    expectProblem(await s.call('POST', '/v1/auth/sessions/revoke-all', { token: 'garbage' }), 401, 'invalid_token');
  });
});
