// Shared helpers of the auth-*.test.ts integration suites (not a test file itself).
import { expect } from 'vitest';
import { decodeJwt, decodeProtectedHeader } from 'jose';
import { expectProblem } from '../helpers/problems.js';
import type { Reply, TestServer } from '../helpers/server.js';

export { serviceNow } from '../helpers/clock.js';
export { expectProblem } from '../helpers/problems.js';

export const GOOD_PASSWORD = 'correct horse battery staple';

let counter = 0;
/** A fresh, unique email address. */
export function uniqueEmail(tag = 'user'): string {
  counter += 1;
  return `${tag}-${Date.now().toString(36)}-${counter}@example.com`;
}

let ipCounter = 0;
/** A fresh client address (used as X-Forwarded-For on servers started with `trustProxy: true`). */
export function uniqueIp(): string {
  ipCounter += 1;
  return `10.${(ipCounter >> 16) & 255}.${(ipCounter >> 8) & 255}.${ipCounter & 255}`;
}

/** Asserts a 429 `rate_limited` with an integer Retry-After header and returns its value. */
export function expectRateLimited(r: Reply): number {
  expectProblem(r, 429, 'rate_limited');
  const ra = r.headers.get('retry-after');
  expect(ra, 'Retry-After header').toMatch(/^\d+$/);
  const n = Number(ra);
  expect(n).toBeGreaterThan(0);
  return n;
}

/** Headers that are expected to differ between two otherwise identical responses. */
const VOLATILE_HEADERS = new Set(['date', 'x-request-id']);

export function stableHeaders(h: Headers): Record<string, string> {
  const out: Record<string, string> = {};
  h.forEach((value, name) => {
    if (!VOLATILE_HEADERS.has(name.toLowerCase())) out[name.toLowerCase()] = value;
  });
  return out;
}

export function bodyWithoutRequestId(body: Record<string, unknown>): Record<string, unknown> {
  const { request_id: _drop, ...rest } = body;
  return rest;
}

/** Asserts that two responses are the same apart from Date, X-Request-Id and the body's request_id. */
export function expectIdenticalResponses(a: Reply, b: Reply): void {
  expect(b.status).toBe(a.status);
  expect(stableHeaders(b.headers)).toEqual(stableHeaders(a.headers));
  expect(bodyWithoutRequestId(b.body)).toEqual(bodyWithoutRequestId(a.body));
}

export interface Claims {
  sub: string;
  sid: string;
  ws?: string;
  iat: number;
  exp: number;
  jti: string;
}

export function claimsOf(token: string): Claims {
  return decodeJwt(token) as unknown as Claims;
}

export function headerOf(token: string) {
  return decodeProtectedHeader(token);
}

export interface SignupOpts {
  email?: string;
  password?: string;
  workspace_name?: string;
  invite_code?: string;
  name?: string;
  /** X-Forwarded-For to send (only meaningful with `trustProxy`); a fresh address by default. */
  ip?: string | null;
}

/** POST /v1/auth/signup with sensible defaults. */
export function signup(s: TestServer, o: SignupOpts = {}): Promise<Reply> {
  const body: Record<string, unknown> = {
    email: o.email ?? uniqueEmail(),
    password: o.password ?? GOOD_PASSWORD,
    workspace_name: o.workspace_name ?? 'Acme',
  };
  if (o.invite_code !== undefined) body.invite_code = o.invite_code;
  if (o.name !== undefined) body.name = o.name;
  const ip = o.ip === undefined ? uniqueIp() : o.ip;
  return s.call('POST', '/v1/auth/signup', { body, headers: ip ? { 'x-forwarded-for': ip } : {} });
}

/** Signs up a user (expecting 201) and returns its session plus the credentials used. */
export async function newUser(s: TestServer, o: SignupOpts = {}) {
  const email = o.email ?? uniqueEmail();
  const password = o.password ?? GOOD_PASSWORD;
  const r = await signup(s, { ...o, email, password });
  expect(r.status, r.text).toBe(201);
  return { email, password, session: r.body, user: r.body.user, workspace: r.body.workspace };
}

/** POST /v1/auth/login. */
export function login(
  s: TestServer,
  email: string,
  password: string,
  o: { workspace_id?: string; ip?: string } = {},
): Promise<Reply> {
  const body: Record<string, unknown> = { email, password };
  if (o.workspace_id !== undefined) body.workspace_id = o.workspace_id;
  return s.call('POST', '/v1/auth/login', { body, headers: o.ip ? { 'x-forwarded-for': o.ip } : {} });
}

/** POST /v1/auth/refresh. */
export function refresh(s: TestServer, refreshToken: string, workspaceId?: string): Promise<Reply> {
  return s.call('POST', '/v1/auth/refresh', {
    body:
      workspaceId === undefined
        ? { refresh_token: refreshToken }
        : { refresh_token: refreshToken, workspace_id: workspaceId },
  });
}

/** The caught mails addressed to `email`, newest first (after running due jobs). */
export async function mailsTo(s: TestServer, email: string): Promise<any[]> {
  await s.settle();
  const r = await s.admin('GET', `/sandbox/messages?to=${encodeURIComponent(email)}`);
  expect(r.status, r.text).toBe(200);
  return r.body.data;
}

/** The verification token of the newest verification email sent to `email`. */
export async function verificationToken(s: TestServer, email: string): Promise<string> {
  const mails = await mailsTo(s, email);
  expect(mails.length).toBeGreaterThan(0);
  const m = await s.admin('GET', `/sandbox/messages/${mails[0].id}`);
  expect(m.status).toBe(200);
  const text: string = m.body.text ?? '';
  // The email carries a link with the token, and the token on its own for the API / CLI.
  const link = /(https?:\/\/\S+[?&]token=([^\s&]+))/.exec(text);
  expect(link, `no link with a token in: ${text}`).not.toBeNull();
  const token = decodeURIComponent(link![2]!);
  expect(token.length).toBeGreaterThanOrEqual(20);
  expect(text.split(/\s+/)).toContain(token);
  return token;
}
