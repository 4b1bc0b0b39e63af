// The verification email, POST /v1/auth/verify-email and POST /v1/auth/resend-verification.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { expectProblem, expectRateLimited, login, mailsTo, newUser, verificationToken } from './auth-helpers.js';

describe('verification email and verify-email', () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer({ openSignup: true, trustProxy: true });
  });
  afterAll(() => s.close());

  const verify = (token: unknown) => s.call('POST', '/v1/auth/verify-email', { body: { token } });

  it('signup sends one verification email, caught by the sink, holding the token and a link', async () => {
    const { email } = await newUser(s);
    const mails = await mailsTo(s, email);
    expect(mails).toHaveLength(1);
    expect(mails[0].to).toEqual([email]);
    expect(mails[0].subject).toBeTypeOf('string');
    expect(mails[0].message_id).toBeNull(); // the service's own mail, not a /v1 message

    const full = await s.admin('GET', `/sandbox/messages/${mails[0].id}`);
    expect(full.status).toBe(200);
    expect(full.body.envelope.rcpt_to).toEqual([email]);
    const token = await verificationToken(s, email);
    // The link points at this server.
    expect(full.body.text).toContain(`${s.origin}/`);
    expect(full.body.text).toContain(encodeURIComponent(token));
  });

  it('the address of the sink search is matched case-insensitively', async () => {
    const { email } = await newUser(s);
    expect(await mailsTo(s, email.toUpperCase())).toHaveLength(1);
  });

  it('verifies with the token: 200 verified, /auth/me then shows email_verified', async () => {
    const { email, session } = await newUser(s);
    const before = await s.call('GET', '/v1/auth/me', { token: session.access_token });
    expect(before.body.user.email_verified).toBe(false);

    const token = await verificationToken(s, email);
    const r = await verify(token); // no credential needed
    expect(r.status, r.text).toBe(200);
    expect(r.headers.get('service-version')).toBe('2026-08-01');
    expect(r.body.verified).toBe(true);
    expect(r.body.email).toBe(email);
    expect(r.body.note).toBeTypeOf('string');

    const me = await s.call('GET', '/v1/auth/me', { token: session.access_token });
    expect(me.status).toBe(200);
    expect(me.body.user.email_verified).toBe(true);

    // A new login shows it too.
    const li = await login(s, email, 'correct horse battery staple');
    expect(li.body.user.email_verified).toBe(true);
  });

  it('the same token again, within its validity: 200 verified true with a note', async () => {
    const { email } = await newUser(s);
    const token = await verificationToken(s, email);
    const first = await verify(token);
    expect(first.status).toBe(200);
    const again = await verify(token);
    expect(again.status, again.text).toBe(200);
    expect(again.body.verified).toBe(true);
    expect(again.body.email).toBe(email);
    expect(again.body.note).toBeTypeOf('string');
    expect(again.body.note.length).toBeGreaterThan(0);
    expect(again.body.note).not.toBe(first.body.note);
  });

  it('an unknown token is 422 verification_token_invalid', async () => {
    expectProblem(await verify('vt_this-token-was-never-issued-by-the-server'), 422, 'verification_token_invalid');
    expectProblem(await verify('x'), 422, 'verification_token_invalid');
  });

  it('a token from one user does not verify another', async () => {
    const a = await newUser(s);
    const b = await newUser(s);
    const token = await verificationToken(s, a.email);
    const r = await verify(token);
    expect(r.body.email).toBe(a.email);
    const meB = await s.call('GET', '/v1/auth/me', { token: b.session.access_token });
    expect(meB.body.user.email_verified).toBe(false);
  });

  it('400 invalid_request without a token field', async () => {
    const r = await s.call('POST', '/v1/auth/verify-email', { body: {} });
    expectProblem(r, 400, 'invalid_request');
    expect(r.body.errors.map((e: { path: string }) => e.path)).toContain('token');
    expectProblem(await s.call('POST', '/v1/auth/verify-email', { body: { token: 42 } }), 400, 'invalid_request');
  });

  // Moves the clock a day: kept last in this block.
  it('a token is valid 24 hours on the service clock: at 24 h it is 422, also once used', async () => {
    const a = await newUser(s);
    const b = await newUser(s);
    const ta = await verificationToken(s, a.email);
    const tb = await verificationToken(s, b.email);

    await s.advance(24 * 3600 - 1);
    const ok = await verify(ta);
    expect(ok.status, ok.text).toBe(200);
    expect(ok.body.verified).toBe(true);

    await s.advance(1);
    const late = await verify(tb);
    expectProblem(late, 422, 'verification_token_invalid');
    // b is still unverified.
    const li = await login(s, b.email, b.password);
    expect(li.body.user.email_verified).toBe(false);
    // a's token, used within its validity, is expired too now.
    expectProblem(await verify(ta), 422, 'verification_token_invalid');
  });
});

describe('resend-verification', () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer({ openSignup: true, trustProxy: true });
  });
  afterAll(() => s.close());

  const resend = (token: string | null) => s.call('POST', '/v1/auth/resend-verification', { token });

  it('answers 202 {sent: true, note} and sends a new email with a fresh, working token', async () => {
    const { email, session } = await newUser(s);
    const firstToken = await verificationToken(s, email);

    // The email sent at signup does not count against the limit.
    const r = await resend(session.access_token);
    expect(r.status, r.text).toBe(202);
    expect(r.body.sent).toBe(true);
    expect(r.body.note).toBeTypeOf('string');

    const mails = await mailsTo(s, email);
    expect(mails).toHaveLength(2);
    const secondToken = await verificationToken(s, email);
    expect(secondToken).not.toBe(firstToken);
    const v = await s.call('POST', '/v1/auth/verify-email', { body: { token: secondToken } });
    expect(v.status, v.text).toBe(200);
    expect(v.body.verified).toBe(true);
  });

  it('for a verified address: the same 202 body, and no email is sent', async () => {
    const unverified = await newUser(s);
    const a = await resend(unverified.session.access_token);

    const seed = await login(s, s.seed!.email, s.seed!.password); // the seeded owner is confirmed
    expect(seed.body.user.email_verified).toBe(true);
    const before = (await mailsTo(s, s.seed!.email)).length;
    const b = await resend(seed.body.access_token);
    expect(b.status, b.text).toBe(202);
    expect(b.body).toEqual(a.body);
    expect(await mailsTo(s, s.seed!.email)).toHaveLength(before);

    // Also for a user who confirmed through the API.
    const u = await newUser(s);
    const token = await verificationToken(s, u.email);
    expect((await s.call('POST', '/v1/auth/verify-email', { body: { token } })).status).toBe(200);
    const c = await resend(u.session.access_token);
    expect(c.status).toBe(202);
    expect(c.body).toEqual(a.body);
    expect(await mailsTo(s, u.email)).toHaveLength(1);
  });

  it('a second resend within a minute is 429 with Retry-After; the limit is per user', async () => {
    const { email, session } = await newUser(s);
    expect((await resend(session.access_token)).status).toBe(202);
    const limited = await resend(session.access_token);
    const retryAfter = expectRateLimited(limited);
    expect(retryAfter).toBeLessThanOrEqual(60);
    expect(await mailsTo(s, email)).toHaveLength(2); // signup + one resend

    const other = await newUser(s);
    expect((await resend(other.session.access_token)).status).toBe(202);
  });

  it('at most 5 per hour, a minute apart; the clock frees it', async () => {
    const { email, session } = await newUser(s);
    for (let i = 0; i < 5; i++) {
      if (i > 0) await s.advance(61);
      const r = await resend(session.access_token);
      expect(r.status, `resend ${i + 1}: ${r.text}`).toBe(202);
    }
    await s.advance(61); // 305 s after the first
    const limited = await resend(session.access_token);
    const retryAfter = expectRateLimited(limited);
    expect(retryAfter).toBeGreaterThan(60); // the hourly window, not the minute one
    expect(retryAfter).toBeLessThanOrEqual(3600 - 305);
    expect(await mailsTo(s, email)).toHaveLength(6); // signup + 5

    // An hour after the first one, it leaves the window (the refused attempt did not count).
    await s.advance(3600 - 305);
    const li = await login(s, email, 'correct horse battery staple'); // the first access token has expired
    const ok = await resend(li.body.access_token);
    expect(ok.status, ok.text).toBe(202);
  });

  it('needs a session: 401 without one, 403 session_required with an API key', async () => {
    expectProblem(await resend(null), 401, 'missing_credentials');
    expectProblem(await resend(s.seed!.api_key_test), 403, 'session_required');
  });
});
