// The real `svc serve` binary, as a person or a CI job runs it: a child process, its ready line, its files,
// its signals. Kept small: every start costs a process.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const BIN = join(ROOT, 'bin', 'svc.js');
const PASSWORD = 'plum-quartz-harbor-1987';

interface Ready {
  ready: true;
  api: string;
  smtp: string;
  inbox: string;
  admin_token: string;
  seed: null | { email: string; password: string; user_id: string; workspace_id: string; api_key_test: string; api_key_live: string };
}

interface Served {
  proc: ChildProcess;
  ready: Ready;
  origin: string;
  stderr(): string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

const running = new Set<ChildProcess>();

function launch(args: string[], env: Record<string, string> = {}) {
  const proc = spawn(process.execPath, [BIN, 'serve', ...args], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  running.add(proc);
  let stderr = '';
  proc.stderr!.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((res) =>
    proc.once('exit', (code, signal) => {
      running.delete(proc);
      res({ code, signal });
    }),
  );
  return { proc, exited, stderr: () => stderr };
}

/** Starts `svc serve` and resolves with its parsed first stdout line. */
async function serve(args: string[], env?: Record<string, string>): Promise<Served> {
  const l = launch(['--port', '0', '--smtp-port', '0', ...args], env);
  const lines = createInterface({ input: l.proc.stdout! });
  const first = await new Promise<string>((res, rej) => {
    const timer = setTimeout(() => rej(new Error(`no ready line within 20 s; stderr:\n${l.stderr()}`)), 20_000);
    lines.once('line', (line) => {
      clearTimeout(timer);
      res(line);
    });
    l.exited.then(({ code }) => rej(new Error(`svc serve exited with ${code} before its ready line; stderr:\n${l.stderr()}`)));
  });
  expect(first.startsWith('{'), first).toBe(true);
  const ready = JSON.parse(first) as Ready;
  return { ...l, ready, origin: ready.api.replace(/\/v1$/, '') };
}

async function within<T>(ms: number, p: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, rej) => (timer = setTimeout(() => rej(new Error(`${what}: not within ${ms} ms`)), ms)));
  try {
    return await Promise.race([p, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

async function http(s: Served, method: string, path: string, opts: { body?: unknown; token?: string } = {}) {
  const headers: Record<string, string> = {};
  if (opts.token) headers.authorization = `Bearer ${opts.token}`;
  if (opts.body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(s.origin + path, { method, headers, body: opts.body === undefined ? undefined : JSON.stringify(opts.body) });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined, text };
}

async function inboxOf(s: Served, email: string): Promise<{ id: string; subject: string }[]> {
  const r = await http(s, 'GET', `/sandbox/messages?to=${encodeURIComponent(email)}`, { token: s.ready.admin_token });
  expect(r.status).toBe(200);
  return r.body.data;
}

/** Polls the sink (bounded) until `email` has at least one message. */
async function waitForMail(s: Served, email: string) {
  for (let i = 0; i < 200; i++) {
    const got = await inboxOf(s, email);
    if (got.length) return got;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`no mail for ${email} within 10 s`);
}

async function loginWorks(s: Served, email: string, password: string) {
  const login = await http(s, 'POST', '/v1/auth/login', { body: { email, password } });
  expect(login.status, login.text).toBe(200);
  const keys = await http(s, 'GET', '/v1/api-keys', { token: login.body.access_token });
  expect(keys.status, keys.text).toBe(200);
  return keys.body.data as { mode: string; prefix: string }[];
}

async function signup(s: Served, email: string) {
  const r = await http(s, 'POST', '/v1/auth/signup', { body: { email, password: PASSWORD, workspace_name: 'E2E' } });
  expect(r.status, r.text).toBe(201);
}

async function stop(s: Served) {
  s.proc.kill('SIGTERM');
  return within(5_000, s.exited, 'exit after SIGTERM');
}

describe('svc serve (the real binary)', () => {
  const dirs: string[] = [];
  const tmp = (prefix: string) => {
    const d = mkdtempSync(join(tmpdir(), prefix));
    dirs.push(d);
    return d;
  };

  beforeAll(() => {
    // The binary runs dist/; build it when missing or older than the sources.
    const built = join(ROOT, 'dist', 'main.js');
    const newest = (dir: string): number =>
      Math.max(
        0,
        ...readdirSync(dir, { withFileTypes: true }).map((e) =>
          e.isDirectory() ? newest(join(dir, e.name)) : e.name.endsWith('.ts') && !e.name.endsWith('.test.ts') ? statSync(join(dir, e.name)).mtimeMs : 0,
        ),
      );
    if (!existsSync(built) || statSync(built).mtimeMs < newest(join(ROOT, 'src'))) {
      execFileSync(process.execPath, [join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.build.json'], {
        cwd: ROOT,
        stdio: 'inherit',
      });
    }
  }, 120_000);

  afterAll(() => {
    for (const p of running) p.kill('SIGKILL');
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  it('starts, prints a ready line with working seed credentials, stops cleanly on SIGTERM and restarts from its data', async () => {
    const dataDir = join(tmp('svc-e2e-'), 'data');
    const first = await serve(['--data-dir', dataDir, '--open-signup']);
    const { ready } = first;

    expect(ready).toMatchObject({ ready: true });
    expect(Object.keys(ready).sort()).toEqual(['admin_token', 'api', 'inbox', 'ready', 'seed', 'smtp']);
    expect(ready.api).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/v1$/);
    expect(ready.smtp).toMatch(/^smtp:\/\/127\.0\.0\.1:\d+$/);
    expect(ready.inbox).toBe(`${first.origin}/?token=${ready.admin_token}`);
    expect(ready.seed).toMatchObject({
      email: expect.any(String),
      password: expect.any(String),
      user_id: expect.stringMatching(/^usr_/),
      workspace_id: expect.stringMatching(/^ws_/),
      domain: 'example.test',
      domain_id: expect.stringMatching(/^dom_/),
      api_key_test: expect.stringMatching(/^svc_test_[A-Za-z0-9]{32}$/),
      api_key_live: expect.stringMatching(/^svc_live_[A-Za-z0-9]{32}$/),
    });
    const seed = ready.seed!;
    const keys = await loginWorks(first, seed.email, seed.password);
    expect(keys.map((k) => k.mode).sort()).toEqual(['live', 'test']);
    expect(keys.map((k) => k.prefix).sort()).toEqual([seed.api_key_live.slice(0, 13), seed.api_key_test.slice(0, 13)]);

    // The admin token is on disk, readable by the owner only.
    const tokenFile = join(dataDir, 'admin-token');
    expect(statSync(tokenFile).mode & 0o777).toBe(0o600);
    expect(readFileSync(tokenFile, 'utf8').trim()).toBe(ready.admin_token);
    expect((await http(first, 'GET', '/sandbox/clock', { token: ready.admin_token })).body.mode).toBe('real');

    // A signup's verification email reaches the sink through the running process.
    await signup(first, 'before-stop@example.test');
    expect(await waitForMail(first, 'before-stop@example.test')).toHaveLength(1);

    const exit = await stop(first);
    expect(exit).toEqual({ code: 0, signal: null });
    // Closed cleanly: the write-ahead log was checkpointed and removed.
    expect(existsSync(join(dataDir, 'svc.sqlite-wal'))).toBe(false);

    const second = await serve(['--data-dir', dataDir, '--open-signup']);
    expect(second.ready.seed).toBeNull();
    expect(second.ready.admin_token).toBe(ready.admin_token);
    expect(await loginWorks(second, seed.email, seed.password)).toHaveLength(2);
    expect(await inboxOf(second, 'before-stop@example.test')).toHaveLength(1);
    expect(await stop(second)).toEqual({ code: 0, signal: null });
  }, 60_000);

  it('after kill -9 and a restart, the verification email of an accepted signup is in the sink exactly once', async () => {
    const dataDir = join(tmp('svc-e2e-'), 'data');
    const first = await serve(['--data-dir', dataDir, '--open-signup', '--no-seed']);
    expect(first.ready.seed).toBeNull();
    const emails = ['crash-1@example.test', 'crash-2@example.test', 'crash-3@example.test'];
    for (const e of emails) await signup(first, e);
    first.proc.kill('SIGKILL');
    expect(await within(5_000, first.exited, 'exit after SIGKILL')).toMatchObject({ signal: 'SIGKILL' });

    // The restart uses a manual clock, so POST /sandbox/clock {advance_seconds: 0} runs every job due now and
    // waits for it: afterwards a redelivery would already show.
    const second = await serve(['--data-dir', dataDir, '--open-signup', '--no-seed', '--clock', 'manual']);
    const moved = await http(second, 'POST', '/sandbox/clock', { token: second.ready.admin_token, body: { advance_seconds: 0 } });
    expect(moved.status, moved.text).toBe(200);
    for (const e of emails) {
      const got = await inboxOf(second, e);
      expect(got, e).toHaveLength(1);
      expect(got[0]!.subject).toBe('Confirm your email address');
    }
    expect(await stop(second)).toEqual({ code: 0, signal: null });
  }, 60_000);

  it('refuses plain HTTP on a non-loopback host with exit code 2 and says how to fix it', async () => {
    const dataDir = join(tmp('svc-e2e-'), 'data');
    const l = launch(['--host', '0.0.0.0', '--port', '0', '--smtp-port', '0', '--data-dir', dataDir]);
    let stdout = '';
    l.proc.stdout!.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    const exit = await within(10_000, l.exited, 'exit of a refused start');
    expect(exit.code).toBe(2);
    expect(l.stderr()).toContain('--tls-cert');
    expect(l.stderr()).toContain('--allow-insecure-http');
    expect(stdout).not.toContain('"ready"');
  });

  it('--memory prints a seed that works and writes nothing to the data directory', async () => {
    const home = tmp('svc-e2e-home-');
    const s = await serve(['--memory'], { SVC_DATA_DIR: join(home, 'svc-data'), XDG_DATA_HOME: join(home, 'xdg') });
    expect(s.ready.seed).not.toBeNull();
    expect(await loginWorks(s, s.ready.seed!.email, s.ready.seed!.password)).toHaveLength(2);
    expect(await stop(s)).toEqual({ code: 0, signal: null });
    expect(readdirSync(home)).toEqual([]);
  }, 30_000);
});
