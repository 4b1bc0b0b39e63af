// Secrets at rest (docs/api.md: how keys, passwords and refresh tokens are stored;
// docs/local-server.md: the admin token, 0600): with a real data directory, no full API key, refresh token or
// password is written to any file but the seed's own (docs/local-server.md: the seeded login and keys are kept beside the admin
// token, so every start can report them), and the secret files are private.
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.js';

/** Every regular file under `dir`, recursively, with its bytes. */
function filesUnder(dir: string): { path: string; bytes: Buffer }[] {
  const out: { path: string; bytes: Buffer }[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...filesUnder(p));
    else if (entry.isFile()) out.push({ path: p, bytes: readFileSync(p) });
  }
  return out;
}

/** The needles that must not appear, in the encodings a careless store might use. */
function encodings(secret: string): Buffer[] {
  return [
    Buffer.from(secret, 'utf8'),
    Buffer.from(secret, 'utf16le'),
    Buffer.from(Buffer.from(secret).toString('base64')),
  ];
}

describe('secrets at rest', () => {
  let root: string;
  let dataDir: string;
  let s: TestServer;
  const secrets: Record<string, string> = {};
  let whileRunning: { path: string; bytes: Buffer }[] = [];
  let afterClose: { path: string; bytes: Buffer }[] = [];
  let modesWhileRunning: Record<string, string> = {};

  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), 'svc-at-rest-'));
    dataDir = join(root, 'data'); // created by the server
    s = await startTestServer({ dataDir, openSignup: true });

    // The seeded owner and keys (printed once at start) are secrets too.
    secrets.seedPassword = s.seed!.password;
    secrets.seedTestKey = s.seed!.api_key_test;
    secrets.seedLiveKey = s.seed!.api_key_live;

    secrets.password = 'an entirely private passphrase 7291';
    const signup = await s.call('POST', '/v1/auth/signup', {
      body: { email: 'at-rest@example.org', password: secrets.password, workspace_name: 'At rest' },
    });
    expect(signup.status, signup.text).toBe(201);
    secrets.signupRefresh = signup.body.refresh_token;

    const login = await s.call('POST', '/v1/auth/login', {
      body: { email: 'at-rest@example.org', password: secrets.password },
    });
    expect(login.status, login.text).toBe(200);
    secrets.loginRefresh = login.body.refresh_token;
    secrets.accessToken = login.body.access_token;

    const refreshed = await s.call('POST', '/v1/auth/refresh', { body: { refresh_token: login.body.refresh_token } });
    expect(refreshed.status, refreshed.text).toBe(200);
    secrets.rotatedRefresh = refreshed.body.refresh_token;
    expect(secrets.rotatedRefresh).not.toBe(secrets.loginRefresh);

    const key = await s.call('POST', '/v1/api-keys', {
      token: refreshed.body.access_token,
      body: { name: 'at rest', scopes: ['domains:read'], mode: 'live' },
    });
    expect(key.status, key.text).toBe(201);
    secrets.apiKey = key.body.key;
    // The key works (so it is really stored, as a hash).
    expect((await s.call('GET', '/v1/domains', { token: secrets.apiKey })).status).toBe(200);
    // The seed owner signs in too (password checked against its stored hash).
    expect(
      (await s.call('POST', '/v1/auth/login', { body: { email: s.seed!.email, password: s.seed!.password } })).status,
    ).toBe(200);

    whileRunning = filesUnder(dataDir);
    modesWhileRunning = Object.fromEntries(
      readdirSync(dataDir).map((name) => [name, (statSync(join(dataDir, name)).mode & 0o777).toString(8)]),
    );
    await s.close();
    afterClose = filesUnder(dataDir);
  });

  afterAll(async () => {
    await s?.close();
    rmSync(root, { recursive: true, force: true });
  });

  it('keeps its data in the data directory', () => {
    const names = afterClose.map((f) => f.path.slice(dataDir.length + 1));
    expect(names).toEqual(expect.arrayContaining(['svc.sqlite', 'secrets.json', 'admin-token', 'seed.json']));
    expect(whileRunning.some((f) => f.path.endsWith('svc.sqlite-wal'))).toBe(true);
    const db = afterClose.find((f) => f.path.endsWith('svc.sqlite'))!;
    expect(db.bytes.length).toBeGreaterThan(0);
    // Sanity: the scan sees what is stored in clear (the new user's address), so absence below means something.
    const all = Buffer.concat([...whileRunning, ...afterClose].map((f) => f.bytes));
    expect(all.includes(Buffer.from('at-rest@example.org'))).toBe(true);
  });

  it("writes no full API key, refresh token or password to any file (database, WAL, shm, secrets) but the seed's", () => {
    expect(Object.keys(secrets).length).toBe(9);
    const seedOnly = new Set(['seedPassword', 'seedTestKey', 'seedLiveKey']);
    const seedFile = join(dataDir, 'seed.json');
    for (const [phase, files] of [
      ['while running', whileRunning],
      ['after close', afterClose],
    ] as const) {
      for (const f of files) {
        for (const [name, secret] of Object.entries(secrets)) {
          if (f.path === seedFile && seedOnly.has(name)) {
            expect(f.bytes.includes(Buffer.from(secret)), `${name} kept in ${f.path}`).toBe(true);
            continue;
          }
          for (const needle of encodings(secret)) {
            expect(f.bytes.includes(needle), `${name} found in ${f.path} (${phase})`).toBe(false);
          }
        }
        // Nor the random part of any key on its own.
        for (const name of ['apiKey', 'seedTestKey', 'seedLiveKey']) {
          if (f.path === seedFile && seedOnly.has(name)) continue;
          expect(f.bytes.includes(Buffer.from(secrets[name]!.slice(13))), `${name} body in ${f.path} (${phase})`).toBe(
            false,
          );
        }
      }
    }
  });

  it('keeps the admin token and the server secrets in 0600 files, in a private directory', () => {
    for (const name of ['admin-token', 'secrets.json', 'seed.json']) {
      expect((statSync(join(dataDir, name)).mode & 0o777).toString(8), name).toBe('600');
    }
    expect(readFileSync(join(dataDir, 'admin-token'), 'utf8').trim()).toBe(s.adminToken);
    expect((statSync(dataDir).mode & 0o077).toString(8)).toBe('0');
  });

  it('makes every file of its data directory 0600 while it runs: the database, its log, the lock and its journal', () => {
    expect(Object.keys(modesWhileRunning)).toEqual(
      expect.arrayContaining(['svc.sqlite', 'svc.sqlite-wal', 'serve.lock', 'serve.lock-journal', 'serve.json']),
    );
    for (const [name, mode] of Object.entries(modesWhileRunning)) expect(mode, name).toBe('600');
  });

  it('still recognises the stored keys and passwords after a restart from the same directory', async () => {
    const again = await startTestServer({ dataDir });
    try {
      expect(again.seed).toBeNull();
      expect(again.adminToken).toBe(s.adminToken);
      expect((await again.call('GET', '/v1/domains', { token: secrets.apiKey! })).status).toBe(200);
      expect((await again.call('GET', '/v1/domains', { token: secrets.seedTestKey! })).status).toBe(200);
      const login = await again.call('POST', '/v1/auth/login', {
        body: { email: 'at-rest@example.org', password: secrets.password },
      });
      expect(login.status).toBe(200);
      // The rotated refresh token is still valid; the one it replaced is not.
      expect(
        (await again.call('POST', '/v1/auth/refresh', { body: { refresh_token: secrets.rotatedRefresh } })).status,
      ).toBe(200);
      expect(
        (await again.call('POST', '/v1/auth/refresh', { body: { refresh_token: secrets.loginRefresh } })).status,
      ).toBe(401);
    } finally {
      await again.close();
    }
  });
});
