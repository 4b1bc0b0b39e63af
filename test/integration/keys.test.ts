// API keys (docs/api.md#api-keys, docs/api.md#pagination) and
// authentication with a key: formats, create rules, listing, revocation, expiry, credential kinds, IP allowlist,
// last_used_at.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { endpoints, fillPath, type Endpoint } from '../../src/contract/endpoints.js';
import { SCOPES } from '../../src/contract/keys.js';
import { ISO_MS_Z } from '../helpers/clock.js';
import { errorPaths, expectProblem } from '../helpers/problems.js';
import { startTestServer, type Reply, type TestServer } from '../helpers/server.js';
import { createKey, newTenant, postApiKey, sessionOf } from '../helpers/tenants.js';

const KEY_ID = /^key_[0-9A-Za-z]{24}$/;

let s: TestServer;

beforeAll(async () => {
  s = await startTestServer();
});
afterAll(() => s.close());

async function listAll(token: string): Promise<any[]> {
  const r = await s.call('GET', '/v1/api-keys?limit=100', { token });
  expect(r.status, r.text).toBe(200);
  return r.body.data;
}

/** Uses a key on an operation that takes an API key (GET /domains takes either credential, scope domains:read). */
function useKey(key: string, headers?: Record<string, string>): Promise<Reply> {
  return s.call('GET', '/v1/domains', { token: key, headers });
}

describe('POST /v1/api-keys', () => {
  it('creates a test key by default, in the decided formats, scopes deduplicated', async () => {
    const token = await sessionOf(s);
    const r = await postApiKey(s, token, {
      name: 'ci',
      scopes: ['emails:send', 'domains:read', 'emails:send', 'domains:read'],
    });
    expect(r.status, r.text).toBe(201);
    expect(r.headers.get('content-type')).toMatch(/^application\/json/);
    const k = r.body;
    expect(k.key).toMatch(/^svc_test_[0-9A-Za-z]{32}$/);
    expect(k.id).toMatch(KEY_ID);
    expect(k.name).toBe('ci');
    expect(k.mode).toBe('test');
    expect(k.prefix).toBe(k.key.slice(0, 13));
    expect(k.prefix).toMatch(/^svc_test_[0-9A-Za-z]{4}$/);
    expect(k.reveal).toBe(`${k.prefix}…${k.key.slice(-4)}`);
    expect(k.scopes).toHaveLength(2);
    expect([...k.scopes].sort()).toEqual(['domains:read', 'emails:send']);
    expect(k.revoked).toBe(false);
    expect(k.revoked_at).toBeNull();
    expect(k.last_used_at).toBeNull();
    expect(k.expires_at).toBeNull();
    expect(k.domain_id ?? null).toBeNull();
    expect(k.ip_allowlist ?? []).toEqual([]);
    expect(k.created_at).toMatch(ISO_MS_Z);
    expect(k.created_at).toBe(new Date(s.clock.now()).toISOString());
  });

  it('creates a live key when asked', async () => {
    const k = await createKey(s, await sessionOf(s), { name: 'prod', scopes: ['emails:send'], mode: 'live' });
    expect(k.key).toMatch(/^svc_live_[0-9A-Za-z]{32}$/);
    expect(k.mode).toBe('live');
    expect(k.prefix).toBe(k.key.slice(0, 13));
    expect(k.reveal).toBe(`${k.key.slice(0, 13)}…${k.key.slice(-4)}`);
  });

  it('gives different keys every time', async () => {
    const token = await sessionOf(s);
    const a = await createKey(s, token, { name: 'a', scopes: ['emails:send'] });
    const b = await createKey(s, token, { name: 'a', scopes: ['emails:send'] });
    expect(a.key).not.toBe(b.key);
    expect(a.id).not.toBe(b.id);
  });

  it('returns the full key in the 201 only, never in the list', async () => {
    const token = await sessionOf(s);
    const k = await createKey(s, token, { name: 'shown once', scopes: ['emails:read'] });
    const list = await s.call('GET', '/v1/api-keys?limit=100', { token });
    expect(list.status).toBe(200);
    const listed = list.body.data.find((x: { id: string }) => x.id === k.id);
    expect(listed).toBeDefined();
    expect(listed).not.toHaveProperty('key');
    expect(listed.prefix).toBe(k.prefix);
    expect(listed.reveal).toBe(k.reveal);
    expect(list.text).not.toContain(k.key);
    expect(list.text).not.toContain(k.key.slice(13));
    for (const item of list.body.data) expect(item).not.toHaveProperty('key');
  });

  it('accepts a name of 1 and of 128 characters and refuses 0 and 129 with 422 validation_failed', async () => {
    const token = await sessionOf(s);
    expect((await postApiKey(s, token, { name: 'x', scopes: ['emails:send'] })).status).toBe(201);
    const long = await postApiKey(s, token, { name: 'n'.repeat(128), scopes: ['emails:send'] });
    expect(long.status, long.text).toBe(201);
    expect(long.body.name).toBe('n'.repeat(128));
    for (const name of ['', 'n'.repeat(129)]) {
      const r = await postApiKey(s, token, { name, scopes: ['emails:send'] });
      expectProblem(r, 422, 'validation_failed');
      expect(errorPaths(r)).toContain('name');
    }
  });

  it('refuses an empty scope list and an unknown scope with 422 naming the field', async () => {
    const token = await sessionOf(s);
    const empty = await postApiKey(s, token, { name: 'k', scopes: [] });
    expectProblem(empty, 422, 'validation_failed');
    expect(errorPaths(empty)).toContain('scopes');
    const unknown = await postApiKey(s, token, { name: 'k', scopes: ['emails:send', 'emails:delete'] });
    expectProblem(unknown, 422, 'validation_failed');
    expect(errorPaths(unknown)).toContain('scopes.1');
  });

  it('accepts every documented scope', async () => {
    const k = await createKey(s, await sessionOf(s), { name: 'all', scopes: [...SCOPES] });
    expect([...k.scopes].sort()).toEqual([...SCOPES].sort());
  });

  it('refuses a missing required field, an unknown field and a wrong JSON type with 400 invalid_request', async () => {
    const token = await sessionOf(s);
    const missing = await postApiKey(s, token, { name: 'k' });
    expectProblem(missing, 400, 'invalid_request');
    expect(errorPaths(missing)).toContain('scopes');

    const unknown = await postApiKey(s, token, { name: 'k', scopes: ['emails:send'], scope: ['emails:read'] });
    expectProblem(unknown, 400, 'invalid_request');
    expect(errorPaths(unknown)).toContain('scope');

    for (const body of [
      { name: 5, scopes: ['emails:send'] },
      { name: 'k', scopes: 'emails:send' },
      { name: 'k', scopes: ['emails:send'], ip_allowlist: '10.0.0.0/8' },
      { name: 'k', scopes: ['emails:send'], expires_at: 1_900_000_000 },
      { name: null, scopes: ['emails:send'] },
    ]) {
      const r = await postApiKey(s, token, body);
      expectProblem(r, 400, 'invalid_request');
      expect(r.body.errors.length).toBeGreaterThan(0);
    }
  });

  it('refuses an unknown mode with 422', async () => {
    const r = await postApiKey(s, await sessionOf(s), { name: 'k', scopes: ['emails:send'], mode: 'production' });
    expectProblem(r, 422, 'validation_failed');
    expect(errorPaths(r)).toContain('mode');
  });

  it('accepts IPv4/IPv6 addresses and CIDRs in ip_allowlist and names each invalid entry', async () => {
    const token = await sessionOf(s);
    const good = ['10.0.0.0/8', '192.0.2.7', '2001:db8::/32', '::1'];
    const k = await createKey(s, token, { name: 'ips', scopes: ['emails:send'], ip_allowlist: good });
    expect(k.ip_allowlist).toEqual(good);

    const r = await postApiKey(s, token, {
      name: 'ips',
      scopes: ['emails:send'],
      ip_allowlist: ['10.0.0.0/8', 'not-an-ip', '2001:db8::/129', '10.0.0.0/33', '300.1.1.1', '010.0.0.0/8'],
    });
    expectProblem(r, 422, 'validation_failed');
    const paths = errorPaths(r);
    // `010.0.0.0/8` is not read as octal (8.0.0.0/8): legacy IPv4 forms are refused.
    expect(paths).toEqual(
      expect.arrayContaining([
        'ip_allowlist.1',
        'ip_allowlist.2',
        'ip_allowlist.3',
        'ip_allowlist.4',
        'ip_allowlist.5',
      ]),
    );
    expect(paths).not.toContain('ip_allowlist.0');
  });

  it('accepts 100 allowlist entries and refuses 101 with 422', async () => {
    const token = await sessionOf(s);
    const entries = (n: number) => Array.from({ length: n }, (_, i) => `10.0.${Math.floor(i / 256)}.${i % 256}`);
    const ok = await postApiKey(s, token, { name: 'many', scopes: ['emails:send'], ip_allowlist: entries(100) });
    expect(ok.status, ok.text).toBe(201);
    expect(ok.body.ip_allowlist).toHaveLength(100);
    const tooMany = await postApiKey(s, token, { name: 'many', scopes: ['emails:send'], ip_allowlist: entries(101) });
    expectProblem(tooMany, 422, 'validation_failed');
    expect(errorPaths(tooMany)).toContain('ip_allowlist');
  });

  it('refuses expires_at in the past or now with 422 and keeps one in the future', async () => {
    const token = await sessionOf(s);
    const now = s.clock.now();
    for (const at of [new Date(now - 1000).toISOString(), new Date(now).toISOString(), '2001-01-01T00:00:00.000Z']) {
      const r = await postApiKey(s, token, { name: 'exp', scopes: ['emails:send'], expires_at: at });
      expectProblem(r, 422, 'validation_failed');
      expect(errorPaths(r)).toContain('expires_at');
    }
    const future = new Date(now + 86_400_000).toISOString();
    const k = await createKey(s, token, { name: 'exp', scopes: ['emails:send'], expires_at: future });
    expect(k.expires_at).toBe(future);
  });

  it('refuses a malformed expires_at', async () => {
    const r = await postApiKey(s, await sessionOf(s), { name: 'exp', scopes: ['emails:send'], expires_at: 'tomorrow' });
    expect([400, 422]).toContain(r.status);
    expect(errorPaths(r)).toContain('expires_at');
  });

  it('accepts a domain_id of the workspace and refuses an unknown one or another workspace’s with 422', async () => {
    const token = await sessionOf(s);
    const k = await createKey(s, token, { name: 'dom', scopes: ['emails:send'], domain_id: s.seed!.domain_id });
    expect(k.domain_id).toBe(s.seed!.domain_id);

    const unknown = await postApiKey(s, token, {
      name: 'dom',
      scopes: ['emails:send'],
      domain_id: 'dom_000000000000000000000000',
    });
    expectProblem(unknown, 422, 'validation_failed');
    expect(errorPaths(unknown)).toContain('domain_id');

    // Another tenant may not restrict its key to the seed workspace's domain.
    const other = await newTenant(s, 'domainless');
    const r = await postApiKey(s, await sessionOf(s, other), {
      name: 'dom',
      scopes: ['emails:send'],
      domain_id: s.seed!.domain_id,
    });
    expectProblem(r, 422, 'validation_failed');
    expect(errorPaths(r)).toContain('domain_id');
  });

  it('creates nothing when a request is refused', async () => {
    const t = await newTenant(s, 'refused');
    const token = await sessionOf(s, t);
    await postApiKey(s, token, { name: '', scopes: ['emails:send'] });
    await postApiKey(s, token, { name: 'k', scopes: ['emails:send'], ip_allowlist: ['bad'] });
    await postApiKey(s, token, { name: 'k', scopes: ['emails:send'], extra: true });
    expect(await listAll(token)).toEqual([]);
  });
});

describe('GET /v1/api-keys', () => {
  it('lists newest first, revoked keys included with revoked: true and revoked_at', async () => {
    const t = await newTenant(s, 'lister');
    let token = await sessionOf(s, t);
    const a = await createKey(s, token, { name: 'a', scopes: ['emails:send'] });
    await s.advance(1);
    const b = await createKey(s, token, { name: 'b', scopes: ['emails:send'] });
    await s.advance(1);
    const c = await createKey(s, token, { name: 'c', scopes: ['emails:send'] });
    await s.advance(1);
    token = await sessionOf(s, t);
    const revokedAt = new Date(s.clock.now()).toISOString();
    expect((await s.call('DELETE', `/v1/api-keys/${b.id}`, { token })).status).toBe(204);

    const list = await s.call('GET', '/v1/api-keys', { token });
    expect(list.status).toBe(200);
    expect(list.body.has_more).toBe(false);
    expect(list.body.data.map((k: { id: string }) => k.id)).toEqual([c.id, b.id, a.id]);
    const [lc, lb, la] = list.body.data;
    expect(lb.revoked).toBe(true);
    expect(lb.revoked_at).toBe(revokedAt);
    for (const k of [la, lc]) {
      expect(k.revoked).toBe(false);
      expect(k.revoked_at).toBeNull();
    }
    // Every listed key carries the ApiKey fields.
    for (const k of list.body.data) {
      for (const f of ['id', 'name', 'prefix', 'reveal', 'mode', 'scopes', 'created_at', 'revoked'])
        expect(k).toHaveProperty(f);
      expect(k.created_at).toMatch(ISO_MS_Z);
    }
  });

  it('lists keys created in the same instant newest first too', async () => {
    const t = await newTenant(s, 'sameinstant');
    const token = await sessionOf(s, t);
    const ids: string[] = [];
    for (let i = 0; i < 6; i++) ids.push((await createKey(s, token, { name: `k${i}`, scopes: ['emails:send'] })).id);
    const listed = (await listAll(token)).map((k) => k.id);
    expect(listed).toEqual([...ids].reverse());
  });

  it('pages with limit, after and has_more; default page size 20', async () => {
    const t = await newTenant(s, 'pager');
    const token = await sessionOf(s, t);
    const ids: string[] = [];
    for (let i = 0; i < 23; i++) {
      ids.push((await createKey(s, token, { name: `k${i}`, scopes: ['emails:send'] })).id);
      if (i % 3 === 0) await s.advance(1);
    }
    const newestFirst = [...ids].reverse();
    const fresh = await sessionOf(s, t);

    const first = await s.call('GET', '/v1/api-keys', { token: fresh });
    expect(first.body.data).toHaveLength(20);
    expect(first.body.has_more).toBe(true);

    const seen: string[] = [];
    let after: string | undefined;
    for (let page = 0; page < 10; page++) {
      const r = await s.call('GET', `/v1/api-keys?limit=5${after ? `&after=${after}` : ''}`, { token: fresh });
      expect(r.status, r.text).toBe(200);
      seen.push(...r.body.data.map((k: { id: string }) => k.id));
      if (!r.body.has_more) break;
      expect(r.body.data).toHaveLength(5);
      after = r.body.data[r.body.data.length - 1].id;
    }
    expect(seen).toEqual(newestFirst);

    const exact = await s.call('GET', `/v1/api-keys?limit=3&after=${newestFirst[19]}`, { token: fresh });
    expect(exact.body.data.map((k: { id: string }) => k.id)).toEqual(newestFirst.slice(20));
    expect(exact.body.has_more).toBe(false);
    const max = await s.call('GET', '/v1/api-keys?limit=100', { token: fresh });
    expect(max.status).toBe(200);
    expect(max.body.data).toHaveLength(23);
    expect(max.body.has_more).toBe(false);
  });

  it('refuses bad pagination values with 400 invalid_request', async () => {
    const token = await sessionOf(s);
    for (const q of [
      'limit=0',
      'limit=101',
      'limit=abc',
      'limit=-1',
      'limit=1.5',
      'limit=',
      'after=',
      'limit=1&limit=2',
      'bogus=1',
    ]) {
      const r = await s.call('GET', `/v1/api-keys?${q}`, { token });
      expectProblem(r, 400, 'invalid_request');
    }
  });

  it("lists only the caller's workspace", async () => {
    const t = await newTenant(s, 'isolated');
    const token = await sessionOf(s, t);
    const mine = await createKey(s, token, { name: 'mine', scopes: ['emails:send'] });
    expect((await listAll(token)).map((k) => k.id)).toEqual([mine.id]);
    const seedIds = (await listAll(await sessionOf(s))).map((k) => k.id);
    expect(seedIds).not.toContain(mine.id);
    // Another workspace's id, or no key's id, as the cursor: 400 naming `after`, never a silently empty page.
    for (const after of [mine.id, 'key_000000000000000000000000']) {
      const r = await s.call('GET', `/v1/api-keys?after=${after}`, { token: await sessionOf(s) });
      expectProblem(r, 400, 'invalid_request');
      expect(r.body.errors).toEqual([expect.objectContaining({ path: 'after', code: 'not_found' })]);
    }
  });
});

describe('DELETE /v1/api-keys/{id}', () => {
  it('revokes with 204, again with 204, and the key stops working at once', async () => {
    const token = await sessionOf(s);
    const k = await createKey(s, token, { name: 'doomed', scopes: ['domains:read'] });
    expect((await useKey(k.key)).status).toBe(200);

    const first = await s.call('DELETE', `/v1/api-keys/${k.id}`, { token });
    expect(first.status).toBe(204);
    expect(first.text).toBe('');
    const after = await useKey(k.key);
    expectProblem(after, 401, 'invalid_api_key');
    expect(after.headers.get('www-authenticate')).toMatch(/^Bearer/);

    const again = await s.call('DELETE', `/v1/api-keys/${k.id}`, { token });
    expect(again.status).toBe(204);
    // The first revocation time is kept.
    const listed = (await listAll(token)).find((x) => x.id === k.id);
    expect(listed.revoked).toBe(true);
    expect(listed.revoked_at).toBe(new Date(s.clock.now()).toISOString());
  });

  it("answers 404 not_found for another tenant's key and leaves it working", async () => {
    const other = await newTenant(s, 'victim');
    const otherToken = await sessionOf(s, other);
    const theirs = await createKey(s, otherToken, { name: 'theirs', scopes: ['domains:read'] });
    const r = await s.call('DELETE', `/v1/api-keys/${theirs.id}`, { token: await sessionOf(s) });
    expectProblem(r, 404, 'not_found');
    expect((await useKey(theirs.key)).status).toBe(200);
    expect((await listAll(otherToken)).find((x) => x.id === theirs.id).revoked).toBe(false);
  });

  it('answers 404 for an unknown id', async () => {
    const r = await s.call('DELETE', '/v1/api-keys/key_000000000000000000000000', { token: await sessionOf(s) });
    expectProblem(r, 404, 'not_found');
  });
});

describe('roles and workspaces', () => {
  it('lets a member list keys but not create or revoke them (403 forbidden)', async () => {
    const t = await newTenant(s, 'member');
    const ws = await s.admin('POST', '/sandbox/workspaces', { email: t.email, name: 'Shared', role: 'member' });
    expect(ws.status, ws.text).toBe(201);
    const member = { ...t, workspace_id: ws.body.id };
    const token = await sessionOf(s, member);
    expect((await s.call('GET', '/v1/api-keys', { token })).status).toBe(200);
    expectProblem(await postApiKey(s, token, { name: 'k', scopes: ['emails:send'] }), 403, 'forbidden');
    expectProblem(await s.call('DELETE', '/v1/api-keys/key_000000000000000000000000', { token }), 403, 'forbidden');

    // Without a workspace selected (member of two, none named at login) → 403 workspace_required.
    const login = await s.call('POST', '/v1/auth/login', { body: { email: t.email, password: t.password } });
    expect(login.status).toBe(200);
    expect(login.body.workspace).toBeUndefined();
    expectProblem(await s.call('GET', '/v1/api-keys', { token: login.body.access_token }), 403, 'workspace_required');
  });

  it('refuses key management in a suspended workspace (403 workspace_suspended), and the keys too', async () => {
    const t = await newTenant(s, 'suspended');
    const token = await sessionOf(s, t);
    const k = await createKey(s, token, { name: 'k', scopes: ['domains:read'] });
    expect((await s.admin('POST', `/sandbox/workspaces/${t.workspace_id}/suspend`)).status).toBe(200);
    try {
      expectProblem(await s.call('GET', '/v1/api-keys', { token }), 403, 'workspace_suspended');
      expectProblem(await useKey(k.key), 403, 'workspace_suspended');
    } finally {
      expect((await s.admin('POST', `/sandbox/workspaces/${t.workspace_id}/activate`)).status).toBe(200);
    }
    expect((await useKey(k.key)).status).toBe(200);
  });
});

describe('authenticating with an API key', () => {
  it('accepts the seeded test and live keys on an operation that takes a key', async () => {
    for (const key of [s.seed!.api_key_test, s.seed!.api_key_live]) {
      const r = await useKey(key);
      expect(r.status, r.text).toBe(200);
    }
  });

  it('refuses an API key with 403 session_required on every session-only operation', async () => {
    const sessionOnly = (Object.entries(endpoints) as [string, Endpoint][]).filter(([, e]) => e.auth === 'session');
    const paths = sessionOnly.map(([, e]) => `${e.method} ${e.path}`);
    for (const must of [
      'GET /auth/me',
      'POST /auth/sessions/revoke-all',
      'POST /auth/resend-verification',
      'GET /api-keys',
      'POST /api-keys',
      'DELETE /api-keys/:id',
    ]) {
      expect(paths).toContain(must);
    }
    for (const [name, e] of sessionOnly) {
      const path = `/v1${fillPath(e.path, { id: 'key_000000000000000000000000' })}`;
      for (const key of [s.seed!.api_key_test, s.seed!.api_key_live]) {
        const body = name === 'createApiKey' ? { name: 'made-with-a-key', scopes: ['emails:send'] } : undefined;
        const r = await s.call(e.method, path, { token: key, body });
        expect(`${name}: ${r.status} ${r.body?.code}`).toBe(`${name}: 403 session_required`);
      }
    }
    // Nothing was done on the key's behalf.
    const token = await sessionOf(s);
    expect((await listAll(token)).some((k) => k.name === 'made-with-a-key')).toBe(false);
  });

  it('refuses malformed and unknown keys with 401 invalid_api_key', async () => {
    const real = s.seed!.api_key_test;
    const flipped = real.slice(0, -1) + (real.endsWith('A') ? 'B' : 'A');
    for (const key of [
      'svc_test_short',
      'svc_live_',
      `svc_test_${'!'.repeat(32)}`,
      `svc_prod_${'a'.repeat(32)}`,
      `svc_test_${'a'.repeat(32)}`,
      flipped,
      `${real}x`,
    ]) {
      const r = await useKey(key);
      expectProblem(r, 401, 'invalid_api_key');
      expect(r.headers.get('www-authenticate')).toMatch(/^Bearer/);
    }
    // Also on a session-only operation: a bad key is 401, not 403.
    expectProblem(await s.call('GET', '/v1/auth/me', { token: 'svc_test_short' }), 401, 'invalid_api_key');
  });

  it('answers 401 missing_credentials without a credential', async () => {
    expectProblem(await s.call('GET', '/v1/domains'), 401, 'missing_credentials');
    expectProblem(await s.call('GET', '/v1/api-keys'), 401, 'missing_credentials');
  });

  it('refuses a key lacking the operation’s scope with 403 insufficient_scope', async () => {
    const k = await createKey(s, await sessionOf(s), { name: 'narrow', scopes: ['emails:send'] });
    expectProblem(await useKey(k.key), 403, 'insufficient_scope');
  });

  it('refuses a key once it has expired (401 invalid_api_key)', async () => {
    const token = await sessionOf(s);
    const expiresAt = new Date(s.clock.now() + 3600_000).toISOString();
    const k = await createKey(s, token, { name: 'short-lived', scopes: ['domains:read'], expires_at: expiresAt });
    expect((await useKey(k.key)).status).toBe(200);
    await s.advance(3599);
    expect((await useKey(k.key)).status).toBe(200);
    await s.advance(2);
    expectProblem(await useKey(k.key), 401, 'invalid_api_key');
    // Expired keys stay listed with their expiry; they are not "revoked".
    const listed = (await listAll(await sessionOf(s))).find((x) => x.id === k.id);
    expect(listed.expires_at).toBe(expiresAt);
    expect(listed.revoked).toBe(false);
  });
});

describe('IP allowlist', () => {
  async function keyAllowing(allow: string[]) {
    return (
      await createKey(s, await sessionOf(s), {
        name: `ip ${allow.join(',')}`,
        scopes: ['domains:read'],
        ip_allowlist: allow,
      })
    ).key;
  }

  it('refuses a key used from outside its allowlist with 403 ip_not_allowed', async () => {
    expectProblem(await useKey(await keyAllowing(['10.0.0.0/8'])), 403, 'ip_not_allowed');
    expectProblem(await useKey(await keyAllowing(['192.0.2.1'])), 403, 'ip_not_allowed');
  });

  it('accepts a key whose allowlist holds the loopback client', async () => {
    expect((await useKey(await keyAllowing(['127.0.0.0/8']))).status).toBe(200);
    expect((await useKey(await keyAllowing(['127.0.0.1']))).status).toBe(200);
    expect((await useKey(await keyAllowing(['::ffff:127.0.0.0/104']))).status).toBe(200);
  });

  it('does not let ::1 stand for 127.0.0.1', async () => {
    expectProblem(await useKey(await keyAllowing(['::1/128'])), 403, 'ip_not_allowed');
    expectProblem(await useKey(await keyAllowing(['::1'])), 403, 'ip_not_allowed');
  });

  it('accepts a mixed list with an IPv6 CIDR and 127.0.0.1', async () => {
    expect((await useKey(await keyAllowing(['2001:db8::/32', '10.0.0.0/8', '127.0.0.1']))).status).toBe(200);
  });

  it('ignores X-Forwarded-For unless the server trusts a proxy', async () => {
    const key = await keyAllowing(['10.0.0.0/8']);
    expectProblem(await useKey(key, { 'x-forwarded-for': '10.1.2.3' }), 403, 'ip_not_allowed');
    const local = await keyAllowing(['127.0.0.1']);
    expect((await useKey(local, { 'x-forwarded-for': '10.1.2.3' })).status).toBe(200);
  });

  it('checks the first X-Forwarded-For address with --trust-proxy', async () => {
    const p = await startTestServer({ trustProxy: true });
    try {
      const login = await p.call('POST', '/v1/auth/login', {
        body: { email: p.seed!.email, password: p.seed!.password },
      });
      const key = (
        await p.call('POST', '/v1/api-keys', {
          token: login.body.access_token,
          body: { name: 'proxied', scopes: ['domains:read'], ip_allowlist: ['10.0.0.0/8'] },
        })
      ).body.key;
      expect(
        (await p.call('GET', '/v1/domains', { token: key, headers: { 'x-forwarded-for': '10.1.2.3, 127.0.0.1' } }))
          .status,
      ).toBe(200);
      const refused = await p.call('GET', '/v1/domains', { token: key, headers: { 'x-forwarded-for': '192.0.2.9' } });
      expect(refused.status).toBe(403);
      expect(refused.body.code).toBe('ip_not_allowed');
    } finally {
      await p.close();
    }
  });

  it('authenticates before the IP check, and refuses the credential kind before the IP check', async () => {
    const token = await sessionOf(s);
    const k = await createKey(s, token, { name: 'ip-order', scopes: ['domains:read'], ip_allowlist: ['10.0.0.0/8'] });
    // access.ts: a valid key on a session-only operation is refused for its kind first.
    expectProblem(await s.call('GET', '/v1/auth/me', { token: k.key }), 403, 'session_required');
    // A revoked key is 401 whatever the caller's address.
    expect((await s.call('DELETE', `/v1/api-keys/${k.id}`, { token })).status).toBe(204);
    expectProblem(await useKey(k.key), 401, 'invalid_api_key');
  });
});

describe('last_used_at', () => {
  it('is null until first use, set on use, and updated at most once a minute', async () => {
    const token = await sessionOf(s);
    const k = await createKey(s, token, { name: 'usage', scopes: ['domains:read'] });
    const lastUsed = async () => (await listAll(await sessionOf(s))).find((x) => x.id === k.id).last_used_at;
    expect(await lastUsed()).toBeNull();

    // A refused key (unknown) is no use of this key.
    await useKey(k.key.slice(0, -1) + (k.key.endsWith('z') ? 'y' : 'z'));
    expect(await lastUsed()).toBeNull();

    await s.advance(5);
    const t0 = new Date(s.clock.now()).toISOString();
    expect((await useKey(k.key)).status).toBe(200);
    expect(await lastUsed()).toBe(t0);

    await s.advance(30);
    expect((await useKey(k.key)).status).toBe(200);
    expect(await lastUsed()).toBe(t0);

    await s.advance(31);
    const t2 = new Date(s.clock.now()).toISOString();
    expect((await useKey(k.key)).status).toBe(200);
    expect(await lastUsed()).toBe(t2);
  });
});
