// The real `svc serve` binary, as a person or a CI job runs it: a child process, its ready line, its files,
// its signals. Kept small: every start costs a process.
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { createServer as createNetServer } from 'node:net';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ANY_PORTS,
  ensureBuilt,
  killAll,
  launch,
  portsWith,
  serve,
  stop,
  within,
  type Served,
} from '../helpers/binary.js';
import { inboxSession } from '../helpers/inbox-session.js';

const PASSWORD = 'plum-quartz-harbor-1987';

async function http(s: Served, method: string, path: string, opts: { body?: unknown; token?: string } = {}) {
  const headers: Record<string, string> = {};
  if (opts.token) headers.authorization = `Bearer ${opts.token}`;
  if (opts.body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(s.origin + path, {
    method,
    headers,
    body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
  });
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

describe('svc serve (the real binary)', () => {
  const dirs: string[] = [];
  const tmp = (prefix: string) => {
    const d = mkdtempSync(join(tmpdir(), prefix));
    dirs.push(d);
    return d;
  };

  // The binary runs dist/: build it when missing or older than the sources.
  beforeAll(() => ensureBuilt(), 120_000);

  afterAll(() => {
    killAll();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  it('starts, prints a ready line with working seed credentials, stops cleanly on SIGTERM and restarts from its data', async () => {
    const dataDir = join(tmp('svc-e2e-'), 'data');
    const first = await serve(['--data-dir', dataDir, '--open-signup']);
    const { ready } = first;

    expect(ready).toMatchObject({ ready: true });
    expect(Object.keys(ready).sort()).toEqual([
      'admin_token',
      'api',
      'imap',
      'inbox',
      'pop3',
      'ready',
      'retention',
      'seed',
      'smtp',
      'smtp_tls',
      'submission',
      'submissions',
    ]);
    expect(ready.submission).toMatch(/^smtp:\/\/127\.0\.0\.1:\d+$/);
    expect(ready.submissions).toMatch(/^smtps:\/\/127\.0\.0\.1:\d+$/);
    expect(ready.pop3).toMatch(/^pop3:\/\/127\.0\.0\.1:\d+$/);
    expect(ready.imap).toMatch(/^imap:\/\/127\.0\.0\.1:\d+$/);
    expect(ready.smtp_tls).toEqual({
      cert: join(dataDir, 'smtp-tls.crt'),
      fingerprint_sha256: expect.stringMatching(/^([0-9A-F]{2}:){31}[0-9A-F]{2}$/),
    });
    // What it keeps unless told: the newest 10,000 caught messages, whatever their age.
    expect(ready.retention).toEqual({ max_messages: 10_000, max_age_seconds: null });
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
    expect(keys.map((k) => k.prefix).sort()).toEqual([
      seed.api_key_live!.slice(0, 13),
      seed.api_key_test!.slice(0, 13),
    ]);

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
    // The seed is kept in the data directory and reported again, so a restart never strands anyone.
    expect(second.ready.seed).toEqual(ready.seed);
    expect(second.ready.admin_token).toBe(ready.admin_token);
    // So is the SMTP certificate: a client that trusted it still does.
    expect(second.ready.smtp_tls).toEqual(ready.smtp_tls);
    expect(await loginWorks(second, seed.email, seed.password)).toHaveLength(2);
    expect(await inboxOf(second, 'before-stop@example.test')).toHaveLength(1);
    expect(await stop(second)).toEqual({ code: 0, signal: null });
  }, 60_000);

  it('--rotate-admin-token makes a new admin token: every inbox session of the last one ends, the file says the new one', async () => {
    const dataDir = join(tmp('svc-e2e-'), 'data');
    const first = await serve(['--data-dir', dataDir, ...ANY_PORTS]);
    const old = first.ready.admin_token;
    const session = await inboxSession(first.origin, old);
    const messages = (origin: string, token: string) =>
      fetch(`${origin}/sandbox/messages`, { headers: { authorization: `Bearer ${token}` } });
    expect((await messages(first.origin, session)).status).toBe(200);
    expect(await stop(first)).toEqual({ code: 0, signal: null });

    // A plain restart keeps the token and so the session.
    const again = await serve(['--data-dir', dataDir, ...ANY_PORTS]);
    expect(again.ready.admin_token).toBe(old);
    expect((await messages(again.origin, session)).status).toBe(200);
    expect(await stop(again)).toEqual({ code: 0, signal: null });

    const rotated = await serve(['--data-dir', dataDir, '--rotate-admin-token', ...ANY_PORTS]);
    const fresh = rotated.ready.admin_token;
    expect(fresh).toMatch(/^adm_/);
    expect(fresh).not.toBe(old);
    expect(readFileSync(join(dataDir, 'admin-token'), 'utf8').trim()).toBe(fresh);
    expect(statSync(join(dataDir, 'admin-token')).mode & 0o777).toBe(0o600);
    expect(rotated.ready.inbox).toBe(`${rotated.origin}/?token=${fresh}`);
    for (const token of [old, session]) expect((await messages(rotated.origin, token)).status).toBe(401);
    expect((await messages(rotated.origin, fresh)).status).toBe(200);
    expect((await messages(rotated.origin, await inboxSession(rotated.origin, fresh))).status).toBe(200);
    // The seed, keys and mail are kept: only the admin token changed.
    expect(rotated.ready.seed).toMatchObject({ api_key_test: expect.stringMatching(/^svc_test_/) });
    expect(rotated.stderr()).toContain('every inbox session made with the last one ended');
    expect(await stop(rotated)).toEqual({ code: 0, signal: null });

    const memory = launch(['--memory', '--rotate-admin-token', ...ANY_PORTS]);
    expect((await memory.exited).code).toBe(2);
    expect(memory.stderr()).toContain('with --memory every start makes a new one');
  });

  it('writes what a client sent into its log escaped: a request path can neither forge a line nor reach the terminal', async () => {
    const s = await serve(['--memory', '--log-level', 'debug', ...ANY_PORTS]);
    const res = await fetch(`${s.origin}/x%0Awarn  FORGED%1B%5B2J%C2%9B31m%E2%80%A8tail`);
    expect(res.status).toBe(404);
    await within(
      5000,
      (async () => {
        while (!s.stderr().includes('FORGED')) await new Promise((r) => setTimeout(r, 20));
      })(),
      'the request line',
    );
    const log = s.stderr();
    expect(log.split('\n').filter((l) => l.includes('FORGED'))).toEqual([
      expect.stringMatching(/^info {2}request .*path="\/x\\nwarn {2}FORGED\\u001b\[2J\\u009b31m\\u2028tail" /),
    ]);
    expect(log).not.toMatch(/[\u001b\u009b\u2028]/);
    expect(await stop(s)).toEqual({ code: 0, signal: null });
  });

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
    const moved = await http(second, 'POST', '/sandbox/clock', {
      token: second.ready.admin_token,
      body: { advance_seconds: 0 },
    });
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
    const l = launch(['--host', '0.0.0.0', ...ANY_PORTS, '--data-dir', dataDir]);
    let stdout = '';
    l.proc.stdout!.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    const exit = await within(10_000, l.exited, 'exit of a refused start');
    expect(exit.code).toBe(2);
    expect(l.stderr()).toContain('--tls-cert');
    expect(l.stderr()).toContain('--allow-insecure-http');
    expect(stdout).not.toContain('"ready"');
  });

  it('exits 1 with a message naming the server and the flag when the HTTP, SMTP, submission or IMAP port given is taken, instead of hanging', async () => {
    const first = await serve(['--memory', '--no-seed']);
    const portOf = (url: string) => new URL(url.replace(/^smtp:/, 'http:')).port;
    const httpPort = portOf(first.origin);
    const smtpPort = portOf(first.ready.smtp);
    const submissionPort = portOf(first.ready.submission!);
    const imapPort = portOf(first.ready.imap!.replace(/^imap:/, 'http:'));
    for (const [args, port, flag, what] of [
      [portsWith({ '--port': httpPort }), httpPort, '--port', ''],
      [['--port', '0', '--smtp-port', smtpPort], smtpPort, '--smtp-port', ' (its SMTP sink)'],
      [
        portsWith({ '--submission-port': submissionPort }),
        submissionPort,
        '--submission-port',
        ' (its SMTP submission)',
      ],
      [portsWith({ '--imap-port': imapPort }), imapPort, '--imap-port', ' (its IMAP)'],
    ] as const) {
      const l = launch([...args, '--memory', '--no-seed']);
      const exit = await within(10_000, l.exited, `exit when ${args.join(' ')} is taken`);
      expect(exit.code, l.stderr()).toBe(1);
      expect(l.stderr()).toContain(
        `svc serve (pid ${first.proc.pid}, in memory) already listens on 127.0.0.1:${port}${what}`,
      );
      expect(l.stderr()).toContain(`pass ${flag} 0`);
    }
    // The running server was not disturbed.
    expect((await http(first, 'GET', '/sandbox/clock', { token: first.ready.admin_token })).status).toBe(200);
    expect(await stop(first)).toEqual({ code: 0, signal: null });
  }, 30_000);

  it('--memory prints a seed that works and writes nothing to the data directory', async () => {
    const home = tmp('svc-e2e-home-');
    const s = await serve(['--memory', '--max-messages', '500', '--max-age', '12h'], {
      SVC_DATA_DIR: join(home, 'svc-data'),
      XDG_DATA_HOME: join(home, 'xdg'),
    });
    expect(s.ready.seed).not.toBeNull();
    expect(s.ready.retention).toEqual({ max_messages: 500, max_age_seconds: 43_200 });
    expect(await loginWorks(s, s.ready.seed!.email, s.ready.seed!.password)).toHaveLength(2);
    expect(await stop(s)).toEqual({ code: 0, signal: null });
    expect(readdirSync(home)).toEqual([]);
  }, 30_000);
});

describe("svc serve's default SMTP submission ports, taken", () => {
  const home = mkdtempSync(join(tmpdir(), 'svc-e2e-taken-'));
  // A registry of its own: the only svc serve it knows of are the ones started here.
  const env = { SVC_RUNTIME_DIR: join(home, 'run') };
  /** Every port but submission's any free one: 2587 and 2465 as a person gets them. */
  const defaults = ['--port', '0', '--smtp-port', '0', '--pop3-port', '0', '--imap-port', '0', '--memory', '--no-seed'];
  afterAll(() => {
    killAll();
    rmSync(home, { recursive: true, force: true });
  });

  async function refused(): Promise<string> {
    const l = launch(defaults, env);
    const exit = await within(15_000, l.exited, 'exit of a start on taken ports');
    expect(exit.code, l.stderr()).toBe(1);
    return l.stderr();
  }

  it('fail the start, naming the program that holds them (its pid) and the flag that picks another; never moved', async () => {
    // A plain TCP listener, as another mail server is to svc.
    const holder = createNetServer();
    const held = await new Promise<boolean>((resolve) => {
      holder.once('error', () => resolve(false));
      holder.listen(2587, '127.0.0.1', () => resolve(true));
    });
    try {
      const stderr = await refused();
      // Held here (it may be held by some other program of this machine already: either way it is taken).
      if (held) {
        expect(stderr).toBe(
          `error: svc serve: 127.0.0.1:2587 is taken by another program (pid ${process.pid}, ${basename(process.execPath)}); ` +
            'hint: stop it, or pass --submission-port 0 (a free one)\n',
        );
      } else {
        expect(stderr).toMatch(/^error: svc serve: 127\.0\.0\.1:2587 is taken by .*--submission-port 0/);
      }
    } finally {
      holder.close();
    }
  });

  it('by another svc serve: names it, and both flags', async () => {
    // serve() gives every port as 0 unless told: these are the defaults, named.
    const first = await serve([...defaults, '--submission-port', '2587', '--submissions-port', '2465'], env).catch(
      (err: Error) => err,
    );
    // Nothing else of this machine may hold them for this case (the one above released 2587).
    expect(first).not.toBeInstanceOf(Error);
    const a = first as Served;
    try {
      expect(a.ready).toMatchObject({ submission: 'smtp://127.0.0.1:2587', submissions: 'smtps://127.0.0.1:2465' });
      expect(await refused()).toBe(
        `error: svc serve: svc serve (pid ${a.proc.pid}, in memory) already listens on 127.0.0.1:2587 (its SMTP submission); ` +
          `hint: stop it (Ctrl-C where it runs, or kill ${a.proc.pid}), or pass --submission-port 0 and --submissions-port 0 (free ones)\n`,
      );
    } finally {
      await stop(a);
    }
  });
});
