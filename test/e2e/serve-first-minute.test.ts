// `svc serve`'s first minute with the real binary: the seed kept in the data directory and reported on every start
// (a revoked key as null), the summary a person sees on a terminal (a real pseudo-terminal), and `--reset`, which
// asks first on a terminal, wants --yes in a script, and removes only what svc keeps there.
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pty from '@lydell/node-pty';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ReadyLine, Seed } from '../../src/contract/seed.js';
import {
  ANSI,
  ANY_PORTS,
  BIN,
  ensureBuilt,
  killAll,
  launch,
  ROOT,
  serve,
  type Served,
  stop,
  within,
} from '../helpers/binary.js';

const SVC_FILES = ['admin-token', 'secrets.json', 'seed.json', 'svc.sqlite'];

async function http(s: Served, method: string, path: string, token?: string, body?: unknown) {
  const headers: Record<string, string> = token ? { authorization: `Bearer ${token}` } : {};
  if (body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(s.origin + path, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
}

describe('svc serve, the first minute', () => {
  const dirs: string[] = [];
  const tmp = () => {
    const d = mkdtempSync(join(tmpdir(), 'svc-e2e-first-'));
    dirs.push(d);
    return d;
  };
  beforeAll(() => ensureBuilt(), 120_000);
  afterAll(() => {
    killAll();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  /** `svc serve` in a pseudo-terminal; `steps` answer what the screen shows, in order. */
  function inTerminal(args: string[], env: Record<string, string>, steps: ((screen: string) => string | undefined)[]) {
    const term = pty.spawn(process.execPath, [BIN, 'serve', ...ANY_PORTS, ...args], {
      name: 'xterm-256color',
      cols: 220,
      rows: 50,
      cwd: ROOT,
      env: { PATH: process.env.PATH!, HOME: tmp(), ...env },
    });
    let raw = '';
    let step = 0;
    term.onData((d) => {
      raw += d;
      const answer = steps[step]?.(raw.replace(ANSI, ''));
      if (answer !== undefined) {
        step++;
        term.write(answer);
      }
    });
    const exited = new Promise<{ code: number; screen: string; raw: string }>((resolve) =>
      term.onExit(({ exitCode }) => resolve({ code: exitCode, screen: raw.replace(ANSI, ''), raw })),
    );
    return within(20_000, exited, `svc serve ${args.join(' ')} in a terminal`);
  }

  it('keeps the seed in a 0600 file and reports it on every start; a revoked key is null; --no-seed reports none', async () => {
    const dataDir = join(tmp(), 'data');
    const first = await serve(['--data-dir', dataDir]);
    const seed = Seed.parse(ReadyLine.parse(first.ready).seed);
    expect(statSync(join(dataDir, 'seed.json')).mode & 0o777).toBe(0o600);
    expect(statSync(dataDir).mode & 0o777).toBe(0o700);
    expect(JSON.parse(readFileSync(join(dataDir, 'seed.json'), 'utf8'))).toEqual(seed);
    // Not on a terminal: stderr has no summary.
    expect(first.stderr()).not.toContain('Try:');
    expect(await stop(first)).toEqual({ code: 0, signal: null });

    const second = await serve(['--data-dir', dataDir]);
    expect(second.ready.seed).toEqual(seed);
    // The kept login and key work.
    const login = await http(second, 'POST', '/v1/auth/login', undefined, {
      email: seed.email,
      password: seed.password,
    });
    expect(login.status).toBe(200);
    const keys = (await http(second, 'GET', '/v1/api-keys', login.body.access_token)).body.data as {
      id: string;
      mode: string;
    }[];
    const testKey = keys.find((k) => k.mode === 'test')!;
    expect((await http(second, 'DELETE', `/v1/api-keys/${testKey.id}`, login.body.access_token)).status).toBe(204);
    expect(await stop(second)).toEqual({ code: 0, signal: null });

    const third = await serve(['--data-dir', dataDir]);
    expect(third.ready.seed).toEqual({ ...seed, api_key_test: null });
    expect((await http(third, 'GET', '/v1/domains', seed.api_key_live)).status).toBe(200);
    expect((await http(third, 'GET', '/v1/domains', seed.api_key_test)).status).toBe(401);
    expect(await stop(third)).toEqual({ code: 0, signal: null });

    const noSeed = await serve(['--data-dir', dataDir, '--no-seed']);
    expect(noSeed.ready.seed).toBeNull();
    expect(await stop(noSeed)).toEqual({ code: 0, signal: null });
  }, 60_000);

  it('seeds on every start with --memory', async () => {
    const seeds: Seed[] = [];
    for (let i = 0; i < 2; i++) {
      const s = await serve(['--memory']);
      seeds.push(Seed.parse(s.ready.seed));
      expect(await stop(s)).toEqual({ code: 0, signal: null });
    }
    expect(seeds[0]!.api_key_test).not.toBe(seeds[1]!.api_key_test);
  }, 30_000);

  it('prints a summary on a terminal whose command to try works as printed', async () => {
    const home = tmp();
    const dataDir = join(home, 'data');
    const run = await inTerminal(['--data-dir', dataDir], { NO_COLOR: '1' }, [
      (screen) => (screen.includes('Ctrl-C stops it.') ? '\x03' : undefined),
    ]);
    expect(run.code, run.screen).toBe(0);
    const lines = run.screen.split(/\r?\n/);
    // On a terminal the summary takes the ready line's place (a script reads that line from a pipe), and says each thing
    // once.
    expect(
      lines.filter((l) => l.startsWith('{')),
      run.screen,
    ).toEqual([]);
    const said = lines.map((l) => l.trim()).filter(Boolean);
    expect(
      said.filter((l, i) => said.indexOf(l) !== i),
      run.screen,
    ).toEqual([]);
    const row = (label: string) => new RegExp(`^ {2}${label} +(\\S+)`, 'm').exec(run.screen)?.[1];
    const api = row('API')!;
    expect(api).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/v1$/);
    expect(row('Inbox')).toMatch(new RegExp(`^${escapeRegExp(api.replace(/v1$/, ''))}\\?token=adm_\\w+$`));
    expect(row('SMTP')).toMatch(/^smtp:\/\/127\.0\.0\.1:\d+$/);
    const password = /^ {2}Login +owner@example\.test {2}password (sandbox-\w+)\r?$/m.exec(run.screen)?.[1];
    expect(password, run.screen).toBeDefined();
    const testKey = row('Test key')!;
    expect(testKey).toMatch(/^svc_test_\w{32}$/);
    expect(run.screen).toContain(`svc serve is running, its data in ${dataDir}.`);
    // The sink takes mail from a client given its host and port alone, as mail catchers do.
    expect(run.screen).toMatch(/^ {2}SMTP +smtp:\S+ +the sink: catches any mail, no TLS or login needed\r?$/m);
    expect(run.screen).not.toContain('STARTTLS:');
    expect(run.screen).toContain('Keeps     the newest 10,000 caught messages; /v1 messages and events until a reset');
    expect(run.screen).toContain('SIGINT: draining and closing…');
    expect(run.raw).not.toMatch(/\x1b\[1m/);
    const tryLine = lines
      .find((l) => l.startsWith('Try: '))!
      .slice(4)
      .trim();
    expect(tryLine).toBe(
      `SVC_BASE_URL=${api} SVC_API_KEY=${testKey} svc emails send --from hello@example.test --to you@example.org --subject Hello --text 'Your code is 482913'`,
    );

    // As a person would: the same data directory, started again (piped now), and the command pasted into a shell.
    const again = await serve(['--data-dir', dataDir, '--port', new URL(api).port]);
    // Piped, the ready line is the first line of stdout, and reports the same seed.
    expect(again.ready.seed).toMatchObject({ email: 'owner@example.test', password, api_key_test: testKey });
    const bin = join(home, 'bin');
    mkdirSync(bin);
    writeFileSync(join(bin, 'svc'), `#!/bin/sh\nexec "${process.execPath}" "${BIN}" "$@"\n`);
    chmodSync(join(bin, 'svc'), 0o755);
    const sent = await execa('bash', ['-c', tryLine], {
      env: { PATH: `${bin}:${process.env.PATH}`, HOME: home },
      extendEnv: false,
      reject: false,
    });
    expect(sent.exitCode, sent.stderr).toBe(0);
    expect(sent.stdout).toMatch(/^msg_\w{24}\tqueued$/);
    expect(await stop(again)).toEqual({ code: 0, signal: null });

    // In colour without NO_COLOR; with --memory it says nothing is kept; what it keeps follows the flags, and so does
    // what it says of the sink's STARTTLS.
    const coloured = await inTerminal(['--memory', '--max-messages', 'off', '--max-age', '7d', '--smtp-starttls'], {}, [
      (screen) => (screen.includes('Ctrl-C stops it.') ? '\x03' : undefined),
    ]);
    expect(coloured.code).toBe(0);
    expect(coloured.raw).toMatch(/\x1b\[1mInbox/);
    expect(coloured.screen).toContain('svc serve is running, in memory (nothing is kept).');
    expect(coloured.screen).toContain(
      'every caught message, none older than 7 days; /v1 messages and events for 7 days',
    );
    expect(coloured.screen).toContain('the sink: catches any mail; offers STARTTLS (--smtp-starttls)');
    expect(coloured.screen).toContain(
      'STARTTLS: clients that upgrade whenever it is offered (nodemailer, Go and PHP mailers) must trust the TLS cert',
    );
  }, 60_000);

  it('--reset asks on a terminal: "No" keeps everything (exit 1), "Yes" removes only what svc keeps and starts fresh', async () => {
    const dataDir = join(tmp(), 'data');
    const first = await serve(['--data-dir', dataDir]);
    expect(await stop(first)).toEqual({ code: 0, signal: null });
    writeFileSync(join(dataDir, 'notes.txt'), 'mine');
    const before = readdirSync(dataDir).sort();
    expect(before).toEqual(expect.arrayContaining([...SVC_FILES, 'notes.txt']));

    const prompt = (screen: string) => /Empty .*\?/.test(screen) && screen.includes('No, keep everything');
    const declined = await inTerminal(['--data-dir', dataDir, '--reset'], { NO_COLOR: '1' }, [
      (screen) => (prompt(screen) ? '\r' : undefined),
    ]);
    expect(declined.code, declined.screen).toBe(1);
    expect(declined.screen).toContain(
      `Empty ${dataDir}? Its database (accounts, keys, sent and caught mail), secrets, admin token and seed go for good.`,
    );
    expect(declined.screen).toContain('error: svc serve: reset declined; nothing was removed');
    expect(readdirSync(dataDir).sort()).toEqual(before);

    const accepted = await inTerminal(['--data-dir', dataDir, '--reset'], { NO_COLOR: '1' }, [
      (screen) => (prompt(screen) ? '\x1b[B' : undefined),
      (screen) => (/❯ Yes, remove them/.test(screen) ? '\r' : undefined),
      (screen) => (screen.includes('Ctrl-C stops it.') ? '\x03' : undefined),
    ]);
    expect(accepted.code, accepted.screen).toBe(0);
    expect(accepted.screen).toMatch(
      new RegExp(
        `Removed svc\\.sqlite, (svc\\.sqlite-\\w+, )*secrets\\.json, admin-token, seed\\.json, smtp-tls\\.crt, smtp-tls\\.key from ${escapeRegExp(dataDir)}\\.`,
      ),
    );
    // A new admin token (the inbox address carries it) and a new seed.
    expect(accepted.screen).toMatch(/^ {2}Inbox +\S+\?token=adm_\w+\r?$/m);
    expect(accepted.screen).not.toContain(first.ready.admin_token);
    expect(accepted.screen).not.toContain(first.ready.seed!.password);
    expect(readFileSync(join(dataDir, 'notes.txt'), 'utf8')).toBe('mine');
  }, 60_000);

  it('--reset in a script: without --yes a usage error naming it (exit 2); with --yes it resets; never under a running server', async () => {
    const dataDir = join(tmp(), 'data');
    const first = await serve(['--data-dir', dataDir]);
    expect(await stop(first)).toEqual({ code: 0, signal: null });
    const before = readdirSync(dataDir).sort();

    const unasked = launch([...ANY_PORTS, '--data-dir', dataDir, '--reset']);
    expect((await within(10_000, unasked.exited, 'exit of --reset without --yes')).code).toBe(2);
    expect(unasked.stderr()).toBe(
      `error: svc serve: --reset asks before it empties ${dataDir}, and there is no terminal to ask on; hint: add --yes to reset without asking\n`,
    );
    expect(readdirSync(dataDir).sort()).toEqual(before);

    const running = await serve(['--data-dir', dataDir]);
    const underIt = launch([...ANY_PORTS, '--data-dir', dataDir, '--reset', '--yes']);
    expect((await within(10_000, underIt.exited, 'exit of --reset under a running server')).code).toBe(1);
    // It names the running server: its pid and API address.
    expect(underIt.stderr()).toContain(
      `another svc serve (pid ${running.proc.pid}, ${running.ready.api}) is running on the data directory ${dataDir}; nothing was removed; hint: stop that server first`,
    );
    expect((await http(running, 'GET', '/sandbox/clock', running.ready.admin_token)).status).toBe(200);
    expect(await stop(running)).toEqual({ code: 0, signal: null });
    expect(existsSync(join(dataDir, 'seed.json'))).toBe(true);

    const reset = await serve(['--data-dir', dataDir, '--reset', '--yes']);
    expect(reset.stderr()).toMatch(/^Removed svc\.sqlite, .*seed\.json, smtp-tls\.crt, smtp-tls\.key from /);
    expect(reset.ready.seed!.user_id).not.toBe(first.ready.seed!.user_id);
    expect(await stop(reset)).toEqual({ code: 0, signal: null });

    // A database SQLite cannot read is reset too, rather than kept for fear it is in use.
    const broken = join(tmp(), 'broken');
    mkdirSync(broken);
    writeFileSync(join(broken, 'svc.sqlite'), 'not a database, whatever it was');
    const fixed = await serve(['--data-dir', broken, '--reset', '--yes']);
    expect(fixed.stderr()).toContain(`Removed svc.sqlite from ${broken}.`);
    expect(fixed.ready.seed).not.toBeNull();
    expect(await stop(fixed)).toEqual({ code: 0, signal: null });

    const empty = await serve(['--data-dir', join(tmp(), 'never-used'), '--reset', '--yes']);
    expect(empty.stderr()).toMatch(/^Nothing to reset: .*never-used holds no svc data\.\n/);
    expect(await stop(empty)).toEqual({ code: 0, signal: null });
  }, 60_000);
});

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
