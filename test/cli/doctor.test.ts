// svc doctor against the real server (and against nothing at all), and the completion scripts run by a real bash.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loginRun } from '../../src/cli/commands/auth/login.js';
import { completionRun, type CommandSpec } from '../../src/cli/commands/completion.js';
import { doctorRun } from '../../src/cli/commands/doctor.js';
import { keysCreateRun } from '../../src/cli/commands/keys/create.js';
import { BIN, ROOT, clientEnv, ensureBuilt, killAll, libfaketime, serve, stop } from '../helpers/binary.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { createContext } from '../../src/cli/context.js';
import { cli, fakeClock, parse, tempDirs, testIO } from './helpers.js';

describe('svc doctor', () => {
  let s: TestServer;
  const dirs = tempDirs();
  beforeAll(async () => {
    s = await startTestServer();
  });
  afterAll(async () => {
    await s.close();
    dirs.cleanup();
  });

  it('passes when the service answers, the session and the saved key work and the clocks agree; a key short of a scope is a warning', async () => {
    const configDir = dirs.make();
    const login = await cli(s, { configDir, stdin: s.seed!.password });
    expect(await login.run(loginRun, { email: s.seed!.email, passwordStdin: true })).toBe(0);
    const key = await cli(s, { configDir });
    expect(await key.run(keysCreateRun, { name: 'doctor', scopes: ['emails:send'], save: true })).toBe(0);

    const c = await cli(s, { configDir });
    expect(await c.run(doctorRun, {})).toBe(0);
    const checks = Object.fromEntries(
      c
        .stdout()
        .trimEnd()
        .split('\n')
        .map((l) => l.split('\t'))
        .map(([name, status, detail]) => [name, [status, detail]]),
    );
    expect(Object.keys(checks)).toEqual([
      'base url',
      'server health',
      'service version',
      'clock skew',
      'local servers',
      'credential store',
      'session',
      'api key',
    ]);
    // This server runs in the test's process, unregistered: none is listed (test/cli/local-servers.test.ts lists some).
    expect(checks['local servers']).toEqual(['skip', 'no svc serve is running on this machine']);
    // A local server: its /readyz is asked too.
    expect(checks['server health']).toEqual(['ok', `ready (${s.origin}/readyz)`]);
    expect(checks['base url']).toEqual([
      'ok',
      expect.stringMatching(new RegExp(`^${s.api} answered in \\d+ ms \\(from SVC_BASE_URL\\)$`)),
    ]);
    expect(checks['service version']).toEqual(['ok', '2026-08-01']);
    expect(checks['clock skew']![0]).toBe('ok');
    expect(checks['credential store']).toEqual([
      'ok',
      expect.stringMatching(/^file .*secrets\/credentials\.json \(chosen with SVC_CREDENTIAL_STORE=file\)$/),
    ]);
    expect(checks.session).toEqual(['ok', `signed in as ${s.seed!.email}, workspace Sandbox (owner)`]);
    // The key lacks domains:read: the service still knows it, so it is valid, but only in part: a warning, not a pass.
    expect(checks['api key']).toEqual([
      'warn',
      expect.stringMatching(
        /^svc_test_\w{4}… \(saved in profile default\) is valid, but was refused reading domains: /,
      ),
    ]);
  });

  it("fails, exit 1, without any credential; and says how far this machine's clock is off", async () => {
    const c = await cli(s, { configDir: dirs.make(), clock: fakeClock(), globals: { json: true } });
    expect(await c.run(doctorRun, {}, 'svc doctor')).toBe(1);
    const report = JSON.parse(c.stdout());
    expect(report.ok).toBe(false);
    const by = Object.fromEntries(report.checks.map((x: { name: string }) => [x.name, x]));
    expect(by.session).toMatchObject({ status: 'fail', detail: expect.stringContaining('`svc login`') });
    expect(by['api key']).toMatchObject({ status: 'skip' });
    expect(by['clock skew']).toMatchObject({
      status: 'fail',
      detail: expect.stringMatching(/^this machine is \d+ s behind the service; sync its clock \(NTP\)$/),
    });
    expect(c.stderr()).toBe('error: svc doctor: 2 checks failed: clock skew, session\n');
  });

  it('fails on a base URL where nothing answers, and skips what needs the service', async () => {
    const port = await freePort();
    const c = await cli(s, {
      configDir: dirs.make(),
      env: { SVC_BASE_URL: `http://127.0.0.1:${port}/v1`, NO_COLOR: '1' },
      tty: true,
    });
    expect(await c.run(doctorRun, {})).toBe(1);
    expect(c.stdout()).toMatch(
      new RegExp(`^✗ base url +could not reach http://127\\.0\\.0\\.1:${port}/v1 \\(ECONNREFUSED\\)`, 'm'),
    );
    expect(c.stdout()).toMatch(/^- session +the service is not reachable$/m);
  });
});

describe('svc doctor against svc serve on the same machine (the built binary)', () => {
  const home = mkdtempSync(join(tmpdir(), 'svc-doctor-'));
  beforeAll(() => ensureBuilt(), 120_000);
  afterAll(() => {
    killAll();
    rmSync(home, { recursive: true, force: true });
  });

  it('calls the clocks in step, however far into its second the clock is when the service stamps its Date', async () => {
    // One clock for both, stopped 900 ms into a second: the server's Date header says the whole second, which is 0.9 s
    // behind this reading, but not behind the clock.
    const clock = {
      LD_PRELOAD: libfaketime(),
      FAKETIME: '2026-08-01 12:00:00.900',
      FAKETIME_DONT_FAKE_MONOTONIC: '1',
      TZ: 'UTC',
    };
    const s = await serve(['--memory', '--clock', 'manual'], clock);
    try {
      const r = await execa(process.execPath, [BIN, 'doctor', '--json'], {
        env: clientEnv(home, s, clock),
        extendEnv: false,
        reject: false,
        cwd: ROOT,
      });
      const checks = JSON.parse(r.stdout).checks as { name: string; status: string; detail: string }[];
      expect(checks.find((c) => c.name === 'clock skew')).toEqual({
        name: 'clock skew',
        status: 'ok',
        detail: expect.stringMatching(/^in step with the service \(/),
      });
      expect(r.exitCode, r.stdout).toBe(0);
    } finally {
      await stop(s);
    }
  }, 60_000);
});

/** A port nothing listens on: one the system just handed out and took back. */
function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const probe = createServer().listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
}

describe('svc completion', () => {
  const tree = async () => ((await parse('completion', 'bash')).opts as { tree: CommandSpec[] }).tree;
  const script = async (shell: 'bash' | 'zsh' | 'fish') => {
    const t = await testIO();
    await completionRun(createContext({ io: t.io, globals: {} }), { shell, tree: await tree() });
    return t.stdout();
  };
  /** What bash offers after typing `line` and pressing tab. */
  const complete = (bash: string, line: string) =>
    execFileSync(
      'bash',
      [
        '-c',
        `${bash}\nCOMP_WORDS=(${line}); COMP_CWORD=$(( \${#COMP_WORDS[@]} - 1 )); _svc; printf '%s\\n' "\${COMPREPLY[@]}"`,
      ],
      {
        encoding: 'utf8',
      },
    )
      .trim()
      .split('\n');

  it('completes commands, subcommands and flags in bash, skipping flag values and arguments', async () => {
    const bash = await script('bash');
    expect(complete(bash, 'svc ""')).toEqual(
      expect.arrayContaining(['signup', 'login', 'keys', 'domains', 'emails', 'doctor', 'serve', '--json']),
    );
    expect(complete(bash, 'svc k')).toEqual(['keys']);
    expect(complete(bash, 'svc keys ""')).toEqual(expect.arrayContaining(['create', 'list', 'revoke']));
    expect(complete(bash, 'svc --profile staging keys cr')).toEqual(['create']);
    expect(complete(bash, 'svc emails send --html')).toEqual(['--html', '--html-file']);
    expect(complete(bash, 'svc domains verify dom_1 --w')).toEqual(['--wait', '--wide']);
  });

  it('names every command in the zsh and fish scripts', async () => {
    const zsh = await script('zsh');
    const fish = await script('fish');
    expect(zsh.startsWith('#compdef svc\n')).toBe(true);
    for (const spec of await tree()) {
      if (!spec.path) continue;
      expect(zsh, spec.path).toContain(`'${spec.path}') cmds=(`);
      const last = spec.path.split(' ').at(-1)!;
      expect(fish, spec.path).toMatch(new RegExp(`-a ${last} -d `));
    }
    expect(fish).toContain(
      "complete -c svc -n '__fish_seen_subcommand_from emails; and __fish_seen_subcommand_from send' -l html-file -r -F",
    );
  });
});
