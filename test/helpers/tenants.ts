// Accounts, sessions and API keys for the integration suites: the seeded tenant, further tenants signed up
// through an invite, fresh access tokens, and keys created through a session.
import { randomBytes } from 'node:crypto';
import { expect } from 'vitest';
import type { Reply, TestServer } from './server.js';

/** The credentials that sign a user into one workspace. */
export interface Tenant {
  email: string;
  password: string;
  workspace_id: string;
}

/** The seeded owner and its workspace. */
export function seedTenant(s: TestServer): Tenant {
  return { email: s.seed!.email, password: s.seed!.password, workspace_id: s.seed!.workspace_id };
}

/**
 * A fresh access token for the tenant's workspace (the seeded tenant unless another is given); tokens live
 * 15 minutes and many suites move the clock, so tests sign in again rather than keep one.
 */
export async function sessionOf(s: TestServer, t: Tenant = seedTenant(s)): Promise<string> {
  const r = await s.call('POST', '/v1/auth/login', {
    body: { email: t.email, password: t.password, workspace_id: t.workspace_id },
  });
  expect(r.status, r.text).toBe(200);
  return r.body.access_token;
}

/**
 * A further account (owner email NOT confirmed) with its own workspace, signed up through an invite
 * (POST /sandbox/invites, then POST /v1/auth/signup); also returns the signup's access token.
 */
export async function newTenant(s: TestServer, label: string): Promise<Tenant & { token: string }> {
  const invite = await s.admin('POST', '/sandbox/invites', {});
  expect(invite.status, invite.text).toBe(201);
  const email = `${label}-${randomBytes(4).toString('hex')}@example.org`;
  const password = `pw-${randomBytes(12).toString('hex')}`;
  const r = await s.call('POST', '/v1/auth/signup', {
    body: { email, password, workspace_name: `${label} workspace`, invite_code: invite.body.code },
  });
  expect(r.status, r.text).toBe(201);
  return { email, password, workspace_id: r.body.workspace.id, token: r.body.access_token };
}

/** POST /v1/api-keys with exactly `body`, whatever the answer. */
export function postApiKey(s: TestServer, token: string, body: unknown): Promise<Reply> {
  return s.call('POST', '/v1/api-keys', { token, body });
}

export type CreatedApiKey = { id: string; key: string; mode: string; scopes: string[] } & Record<string, any>;

/**
 * Creates an API key (expecting 201) through a session: an access token, or a tenant to sign in as. The name
 * defaults to "test key". Returns the CreatedApiKey.
 */
export async function createKey(
  s: TestServer,
  as: string | Tenant,
  body: Record<string, unknown>,
): Promise<CreatedApiKey> {
  const token = typeof as === 'string' ? as : await sessionOf(s, as);
  const r = await postApiKey(s, token, { name: 'test key', ...body });
  expect(r.status, r.text).toBe(201);
  return r.body;
}
