// Unit tests of API-key core (docs/api.md#api-keys) against a real `:memory:` store: creation, the keyed hash at
// rest, authentication (unknown, revoked, expired), last_used_at throttling, listing order, and the IP allowlist
// through `ipAllowed`/`parseCidr` and `access.authorize`.
import { randomBytes } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { API_KEY_PATTERN } from '../../contract/keys.js';
import { manualClock, type ManualClock } from '../../lib/clock.js';
import { newId } from '../../lib/ids.js';
import { silentLogger } from '../../lib/log.js';
import { createAccountStore, createRateStore } from '../store/accounts.js';
import { openDb, type Db } from '../store/db.js';
import { createKeyStore } from '../store/keys.js';
import { createAccess, type Access } from './access.js';
import type { Deps } from './deps.js';
import { ServiceError } from './errors.js';
import { createKeys, ipAllowed, parseCidr, type Keys } from './keys.js';
import { createRateLimits } from './rate-limits.js';

const LOOPBACK = '127.0.0.1';

let db: Db;
let clock: ManualClock;
let keys: Keys;
let access: Access;
let accounts: ReturnType<typeof createAccountStore>;
let ws: string;

function addWorkspace(): string {
  const id = newId('ws');
  accounts.insertWorkspace({
    id,
    name: id,
    slug: id.toLowerCase(),
    status: 'active',
    pinned_version: '2026-08-01',
    created_at: clock.now(),
  } as never);
  return id;
}

beforeEach(() => {
  db = openDb({ memory: true }).db;
  clock = manualClock(Date.UTC(2026, 7, 1, 12, 0, 0));
  const deps = {
    db,
    clock,
    log: silentLogger,
    secrets: { jwtKey: new Uint8Array(randomBytes(32)), hashKey: randomBytes(32) },
    config: {},
    jobs: { enqueue() {} },
  } as unknown as Deps;
  accounts = createAccountStore(db);
  keys = createKeys({ ...deps, store: createKeyStore(db) });
  access = createAccess({ ...deps, accounts, keys, rateLimits: createRateLimits(createRateStore(db), clock) });
  ws = addWorkspace();
});
afterEach(() => db.close());

function codeOf(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (err) {
    if (err instanceof ServiceError) return err.code;
    throw err;
  }
  return undefined;
}

async function asyncCodeOf(p: Promise<unknown>): Promise<string | undefined> {
  try {
    await p;
  } catch (err) {
    if (err instanceof ServiceError) return err.code;
    throw err;
  }
  return undefined;
}

describe('keys.create', () => {
  it('makes keys in the decided format and stores only a keyed hash and the display prefix', () => {
    const k = keys.create(ws, null, {
      name: 'k',
      scopes: ['emails:send', 'emails:send', 'domains:read'],
      mode: 'live',
    });
    expect(k.key).toMatch(API_KEY_PATTERN);
    expect(k.key.startsWith('svc_live_')).toBe(true);
    expect(k.prefix).toBe(k.key.slice(0, 13));
    expect(k.reveal).toBe(`${k.key.slice(0, 13)}…${k.key.slice(-4)}`);
    expect(k.scopes).toEqual(['emails:send', 'domains:read']);
    expect(keys.create(ws, null, { name: 'd', scopes: ['emails:send'] }).mode).toBe('test');

    const row = db.prepare('SELECT * FROM api_keys WHERE id = ?').get(k.id) as Record<string, unknown>;
    const stored = JSON.stringify(row);
    expect(stored).not.toContain(k.key);
    expect(stored).not.toContain(k.key.slice(13));
    expect(row.key_hash).toMatch(/^[0-9a-f]{64}$/);
  });

  it('refuses invalid allowlist entries, naming each, a past expiry and a foreign domain', () => {
    const err = (() => {
      try {
        keys.create(ws, null, {
          name: 'k',
          scopes: ['emails:send'],
          ip_allowlist: ['10.0.0.0/8', 'nope', '1.2.3.4/40'],
          expires_at: new Date(clock.now()).toISOString(),
          domain_id: 'dom_x',
        });
      } catch (e) {
        return e as ServiceError;
      }
      throw new Error('expected a refusal');
    })();
    expect(err.code).toBe('validation_failed');
    expect(err.extra.errors!.map((e) => e.path).sort()).toEqual([
      'domain_id',
      'expires_at',
      'ip_allowlist.1',
      'ip_allowlist.2',
    ]);
    expect(db.prepare('SELECT COUNT(*) AS n FROM api_keys').get()).toEqual({ n: 0 });
  });
});

describe('keys.authenticate', () => {
  it('authenticates a key to its workspace, mode, scopes and allowlist', () => {
    const k = keys.create(ws, null, { name: 'k', scopes: ['domains:read'], ip_allowlist: ['10.0.0.0/8'] });
    const p = keys.authenticate(k.key);
    expect(p).toMatchObject({
      kind: 'key',
      keyId: k.id,
      workspaceId: ws,
      mode: 'test',
      scopes: ['domains:read'],
      ipAllowlist: ['10.0.0.0/8'],
    });
  });

  it('refuses unknown, altered and malformed keys with invalid_api_key', () => {
    const k = keys.create(ws, null, { name: 'k', scopes: ['domains:read'] });
    const altered = k.key.slice(0, -1) + (k.key.endsWith('a') ? 'b' : 'a');
    for (const presented of [altered, 'svc_test_short', '', k.prefix, `${k.key} `]) {
      expect(codeOf(() => keys.authenticate(presented))).toBe('invalid_api_key');
    }
  });

  it('refuses a revoked key at once; revoking twice is fine; another workspace cannot revoke it', () => {
    const k = keys.create(ws, null, { name: 'k', scopes: ['domains:read'] });
    const other = addWorkspace();
    expect(codeOf(() => keys.revoke(other, k.id))).toBe('not_found');
    expect(codeOf(() => keys.authenticate(k.key))).toBeUndefined();
    keys.revoke(ws, k.id);
    expect(codeOf(() => keys.authenticate(k.key))).toBe('invalid_api_key');
    const revokedAt = keys.list(ws).data[0]!.revoked_at;
    clock.advance(5000);
    keys.revoke(ws, k.id);
    expect(keys.list(ws).data[0]!.revoked_at).toBe(revokedAt);
  });

  it('refuses a key from the instant it expires', () => {
    const k = keys.create(ws, null, {
      name: 'k',
      scopes: ['domains:read'],
      expires_at: new Date(clock.now() + 3600_000).toISOString(),
    });
    clock.advance(3600_000 - 1);
    expect(codeOf(() => keys.authenticate(k.key))).toBeUndefined();
    clock.advance(1);
    expect(codeOf(() => keys.authenticate(k.key))).toBe('invalid_api_key');
  });

  it('sets last_used_at on use and moves it at most once a minute', () => {
    const k = keys.create(ws, null, { name: 'k', scopes: ['domains:read'] });
    const lastUsed = () => keys.list(ws).data.find((x) => x.id === k.id)!.last_used_at;
    expect(lastUsed()).toBeNull();
    const t0 = clock.now();
    keys.authenticate(k.key);
    expect(lastUsed()).toBe(new Date(t0).toISOString());
    clock.advance(59_999);
    keys.authenticate(k.key);
    expect(lastUsed()).toBe(new Date(t0).toISOString());
    clock.advance(1);
    keys.authenticate(k.key);
    expect(lastUsed()).toBe(new Date(t0 + 60_000).toISOString());
  });
});

describe('keys.list', () => {
  it('is newest first, ties in insertion order, and pages with after', () => {
    const ids: string[] = [];
    for (let i = 0; i < 7; i++) {
      ids.push(keys.create(ws, null, { name: `k${i}`, scopes: ['emails:send'] }).id);
      if (i === 3) clock.advance(1000);
    }
    const newest = [...ids].reverse();
    expect(keys.list(ws, 100).data.map((k) => k.id)).toEqual(newest);
    const page1 = keys.list(ws, 3);
    expect(page1.has_more).toBe(true);
    const page2 = keys.list(ws, 3, page1.data[2]!.id);
    const page3 = keys.list(ws, 3, page2.data[2]!.id);
    expect(page3.has_more).toBe(false);
    expect([...page1.data, ...page2.data, ...page3.data].map((k) => k.id)).toEqual(newest);
    expect(keys.list(addWorkspace()).data).toEqual([]);
  });
});

describe('parseCidr', () => {
  it.each([
    ['10.0.0.0/8', 'ipv4', 8],
    ['192.0.2.7', 'ipv4', 32],
    ['0.0.0.0/0', 'ipv4', 0],
    ['2001:db8::/32', 'ipv6', 32],
    ['::1', 'ipv6', 128],
    ['::ffff:127.0.0.0/104', 'ipv6', 104],
  ])('parses %s', (entry, kind, bits) => {
    const r = parseCidr(entry);
    expect(r).not.toBeNull();
    expect(r![0].kind()).toBe(kind);
    expect(r![1]).toBe(bits);
  });

  it.each([
    '',
    'nope',
    '10.0.0.0/33',
    '2001:db8::/129',
    '300.1.1.1',
    '10.0.0.0/',
    '/8',
    '10.0.0.0/8/8',
    'example.test',
    '1.2.3.4 ',
    // Legacy IPv4 forms ipaddr.js would read as other addresses (octal, short, integer): refused, not reinterpreted.
    '010.0.0.0/8',
    '010.0.0.1',
    '127.1',
    '0x7f.0.0.1',
    '2130706433',
    '1.2.3.04',
  ])('refuses %j', (entry) => {
    expect(parseCidr(entry)).toBeNull();
  });
});

describe('ipAllowed', () => {
  it.each([
    ['127.0.0.1', [], true],
    ['127.0.0.1', ['127.0.0.0/8'], true],
    ['::ffff:127.0.0.1', ['127.0.0.0/8'], true],
    ['127.0.0.1', ['127.0.0.1'], true],
    ['::ffff:127.0.0.1', ['127.0.0.1'], true],
    ['127.0.0.1', ['::ffff:127.0.0.0/104'], true],
    ['127.0.0.1', ['10.0.0.0/8'], false],
    ['::ffff:127.0.0.1', ['10.0.0.0/8'], false],
    ['127.0.0.1', ['::1/128'], false],
    ['127.0.0.1', ['::1'], false],
    ['::1', ['::1/128'], true],
    ['::1', ['127.0.0.0/8'], false],
    ['127.0.0.1', ['2001:db8::/32', '127.0.0.1'], true],
    ['2001:db8::5', ['2001:db8::/32', '127.0.0.1'], true],
    ['2001:db9::5', ['2001:db8::/32', '127.0.0.1'], false],
    ['10.255.255.255', ['10.0.0.0/8'], true],
    ['11.0.0.0', ['10.0.0.0/8'], false],
    ['127.0.0.1', ['garbage', '127.0.0.1'], true],
    ['127.0.0.1', ['garbage'], false],
    ['not-an-ip', ['0.0.0.0/0'], false],
    ['', ['0.0.0.0/0'], false],
  ] as [string, string[], boolean][])('%s against %j → %s', (ip, list, expected) => {
    expect(ipAllowed(ip, list)).toBe(expected);
  });
});

describe('access.authorize with an API key', () => {
  const keyOp = { auth: 'key', workspace: true, scope: 'emails:send' } as const;
  const eitherOp = { auth: 'either', workspace: true, scope: 'domains:read' } as const;
  const sessionOp = { auth: 'session', workspace: true } as const;

  it('lets an allowed address through and refuses others with ip_not_allowed', async () => {
    const k = keys.create(ws, null, {
      name: 'k',
      scopes: ['emails:send', 'domains:read'],
      ip_allowlist: ['127.0.0.0/8', '2001:db8::/32'],
    });
    const caller = await access.authorize(keyOp, k.key, LOOPBACK);
    expect(caller.principal).toMatchObject({ kind: 'key', keyId: k.id });
    expect(caller.principal).not.toHaveProperty('ipAllowlist');
    expect(caller.workspace.id).toBe(ws);
    expect((await access.authorize(eitherOp, k.key, '::ffff:127.0.0.1')).workspace.id).toBe(ws);
    expect((await access.authorize(eitherOp, k.key, '2001:db8::1')).workspace.id).toBe(ws);
    expect(await asyncCodeOf(access.authorize(keyOp, k.key, '10.0.0.1'))).toBe('ip_not_allowed');
    expect(await asyncCodeOf(access.authorize(eitherOp, k.key, '::1'))).toBe('ip_not_allowed');
  });

  it('orders the checks: bad key 401, then kind, then IP, then suspension, then scope', async () => {
    const k = keys.create(ws, null, { name: 'k', scopes: ['domains:read'], ip_allowlist: ['10.0.0.0/8'] });
    expect(await asyncCodeOf(access.authorize(keyOp, null, LOOPBACK))).toBe('missing_credentials');
    expect(await asyncCodeOf(access.authorize(keyOp, 'svc_test_short', LOOPBACK))).toBe('invalid_api_key');
    expect(await asyncCodeOf(access.authorize(sessionOp, k.key, LOOPBACK))).toBe('session_required');
    expect(await asyncCodeOf(access.authorize(keyOp, k.key, LOOPBACK))).toBe('ip_not_allowed');
    accounts.setWorkspaceStatus(ws, 'suspended');
    expect(await asyncCodeOf(access.authorize(keyOp, k.key, '10.1.1.1'))).toBe('workspace_suspended');
    accounts.setWorkspaceStatus(ws, 'active');
    expect(await asyncCodeOf(access.authorize(keyOp, k.key, '10.1.1.1'))).toBe('insufficient_scope');
    expect(await asyncCodeOf(access.authorize(eitherOp, k.key, '10.1.1.1'))).toBeUndefined();
    keys.revoke(ws, k.id);
    expect(await asyncCodeOf(access.authorize(eitherOp, k.key, '10.1.1.1'))).toBe('invalid_api_key');
  });
});
