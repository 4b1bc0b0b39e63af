// The built `svc` binary as people and CI jobs run it: separate processes (execa), a real terminal (node-pty), the
// credential file on disk, two processes refreshing one session at once, an interactive login.
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pty from '@lydell/node-pty';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MeResponse } from '../../src/contract/auth.js';
import { Problem } from '../../src/contract/common.js';
import { ANSI, BIN, ensureBuilt, ROOT } from '../helpers/binary.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { newTenant } from '../helpers/tenants.js';

const strip = (s: string) => s.replace(ANSI, '');

describe('the svc binary', () => {
  let s: TestServer;
  const dirs: string[] = [];
  const tmp = () => {
    const d = mkdtempSync(join(tmpdir(), 'svc-e2e-cli-'));
    dirs.push(d);
    return d;
  };

  beforeAll(async () => {
    ensureBuilt();
    s = await startTestServer();
  }, 120_000);
  afterAll(async () => {
    await s.close();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  /** The environment of a run: only what is given (no D-Bus, no SVC_* of the machine running the tests). */
  const envOf = (home: string, extra: Record<string, string> = {}) => ({
    PATH: process.env.PATH!,
    HOME: home,
    SVC_CONFIG_DIR: join(home, 'config'),
    SVC_DATA_DIR: join(home, 'data'),
    SVC_BASE_URL: s.api,
    SVC_CREDENTIAL_STORE: 'file',
    ...extra,
  });

  const svc = (home: string, args: string[], o: { input?: string; env?: Record<string, string> } = {}) =>
    execa(process.execPath, [BIN, ...args], {
      env: envOf(home, o.env),
      extendEnv: false,
      input: o.input ?? '',
      reject: false,
      cwd: ROOT,
    });

  const login = (home: string, extra: string[] = [], env?: Record<string, string>) =>
    svc(home, ['login', '--email', s.seed!.email, '--password-stdin', ...extra], { input: s.seed!.password, env });

  /** Runs svc in a pseudo-terminal; `steps` answer what it shows. Resolves with the exit code and the screen's text. */
  function inTerminal(
    home: string,
    args: string[],
    env: Record<string, string> = {},
    steps: ((screen: string) => string | undefined)[] = [],
  ) {
    const term = pty.spawn(process.execPath, [BIN, ...args], {
      name: 'xterm-256color',
      cols: 160,
      rows: 40,
      cwd: ROOT,
      env: envOf(home, env),
    });
    let screen = '';
    let step = 0;
    term.onData((d) => {
      screen += d;
      const answer = steps[step]?.(strip(screen));
      if (answer !== undefined) {
        step++;
        term.write(answer);
      }
    });
    return new Promise<{ code: number; screen: string; raw: string }>((resolve) =>
      term.onExit(({ exitCode }) => resolve({ code: exitCode, screen: strip(screen), raw: screen })),
    );
  }

  it('exits 0, 1, 2 and 4 as documented, with one line on stderr and the Problem on stdout with --json', async () => {
    const home = tmp();
    const version = await svc(home, ['--version']);
    expect([version.exitCode, version.stdout]).toEqual([
      0,
      JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).version,
    ]);

    const usage = await svc(home, ['emails', 'send', '--to', 'a@example.org']);
    expect(usage.exitCode).toBe(2);
    expect(usage.stderr).toContain("required option '--from <address>' not specified");

    const noKey = await svc(home, [
      'emails',
      'send',
      '--from',
      'orders@example.test',
      '--to',
      'a@example.org',
      '--text',
      'x',
    ]);
    expect(noKey.exitCode).toBe(4);
    expect(noKey.stdout).toBe('');
    expect(noKey.stderr.trim().split('\n')).toHaveLength(1);
    expect(noKey.stderr).toMatch(
      /^error: svc emails send: Missing credentials .*\[missing_credentials, req_\w{24}\]; hint: pass --api-key/,
    );

    const notFound = await svc(home, ['--json', 'emails', 'get', 'msg_000000000000000000000000'], {
      env: { SVC_API_KEY: s.seed!.api_key_test },
    });
    expect(notFound.exitCode).toBe(1);
    const { error } = JSON.parse(notFound.stdout);
    expect(Problem.parse(error)).toMatchObject({
      status: 404,
      code: 'not_found',
      request_id: expect.stringMatching(/^req_/),
    });

    const insecure = await svc(home, ['keys', 'list'], { env: { SVC_BASE_URL: 'http://api.example.com/v1' } });
    expect(insecure.exitCode).toBe(2);
    expect(insecure.stderr).toContain('use an https:// base URL');
  });

  it('stops quietly when the reader of its output goes away (`| head -1`)', async () => {
    const home = tmp();
    expect((await login(home)).exitCode).toBe(0);
    for (const args of ['--help', 'keys list']) {
      const r = await execa(
        'bash',
        ['-c', `node ${BIN} ${args} | head -c 1 >/dev/null; echo "exit \${PIPESTATUS[0]}" >&2`],
        {
          env: envOf(home),
          extendEnv: false,
          reject: false,
          cwd: ROOT,
        },
      );
      expect(r.stderr, args).toBe('exit 0');
    }
  });

  it('sends from CI with SVC_API_KEY alone: no config and no credential file are touched', async () => {
    const home = tmp();
    const r = await svc(
      home,
      [
        'emails',
        'send',
        '--from',
        'Shop <orders@example.test>',
        '--to',
        'ci@example.org',
        '--subject',
        'CI',
        '--text',
        'built',
      ],
      {
        env: { SVC_API_KEY: s.seed!.api_key_test },
      },
    );
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^msg_\w{24}\tqueued$/);
    expect(r.stderr).toBe('');
    expect(existsSync(join(home, 'config'))).toBe(false);
  });

  it('keeps secrets in a 0600 file in a 0700 directory without a keychain, and says so on the first run only', async () => {
    const home = tmp();
    const auto = { SVC_CREDENTIAL_STORE: '' };
    const first = await login(home, [], auto);
    expect(first.exitCode, first.stderr).toBe(0);
    const file = join(home, 'config', 'secrets', 'credentials.json');
    expect(first.stderr).toContain(`note: no usable OS keychain here (`);
    expect(first.stderr).toContain(`secrets are kept in ${file}, readable only by you`);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(statSync(join(home, 'config', 'secrets')).mode & 0o777).toBe(0o700);
    expect(Object.keys(JSON.parse(readFileSync(file, 'utf8')))).toEqual(['default/session']);

    const second = await login(home, [], auto);
    expect(second.exitCode).toBe(0);
    expect(second.stderr).not.toContain('note:');
    const who = await svc(home, ['whoami'], { env: auto });
    expect(who.exitCode).toBe(0);
    expect(who.stderr).toBe('');
  });

  it('lets two processes refresh one session at the same moment: both succeed and the session lives on', async () => {
    // Between the svc processes and the server, a proxy holds every refresh until both processes have had their old
    // access token refused: each has read the same refresh token, so without the lock both would send it.
    let refused = 0;
    let release!: () => void;
    const bothRefused = new Promise<void>((r) => (release = r));
    const proxy = createServer(async (req, res) => {
      const body = await new Promise<Buffer>((r) => {
        const chunks: Buffer[] = [];
        req.on('data', (c: Buffer) => chunks.push(c)).on('end', () => r(Buffer.concat(chunks)));
      });
      if (req.url === '/v1/auth/refresh') await bothRefused;
      const headers = Object.fromEntries(
        Object.entries(req.headers).filter(([k]) => k !== 'host' && k !== 'connection'),
      ) as Record<string, string>;
      const answer = await fetch(s.origin + req.url, {
        method: req.method,
        headers,
        body: body.length ? body.toString('utf8') : undefined,
      });
      if (req.url === '/v1/auth/me' && answer.status === 401 && ++refused === 2) release();
      res.writeHead(answer.status, { 'content-type': answer.headers.get('content-type') ?? 'application/json' });
      res.end(Buffer.from(await answer.arrayBuffer()));
    });
    await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r));
    const via = { SVC_BASE_URL: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}/v1` };
    try {
      const home = tmp();
      expect((await login(home, [], via)).exitCode).toBe(0);
      const file = join(home, 'config', 'secrets', 'credentials.json');
      const before = JSON.parse(JSON.parse(readFileSync(file, 'utf8'))['default/session']);
      await s.advance(16 * 60); // the access token has expired: both processes have to refresh

      const both = await Promise.all([
        svc(home, ['--json', 'whoami'], { env: via }),
        svc(home, ['--json', 'whoami'], { env: via }),
      ]);
      for (const r of both) {
        expect(r.exitCode, r.stderr).toBe(0);
        expect(MeResponse.parse(JSON.parse(r.stdout)).user.email).toBe(s.seed!.email);
      }
      expect(refused).toBe(2);
      const after = JSON.parse(JSON.parse(readFileSync(file, 'utf8'))['default/session']);
      expect(after.refresh_token).not.toBe(before.refresh_token);

      // The family survived: a later refresh still works.
      await s.advance(16 * 60);
      const later = await svc(home, ['whoami'], { env: via });
      expect(later.exitCode, later.stderr).toBe(0);
      expect(existsSync(join(home, 'config', 'secrets', 'default.refresh.lock'))).toBe(false);
    } finally {
      proxy.closeAllConnections();
      await new Promise((r) => proxy.close(r));
    }
  });

  it('prints a table with colour on a terminal, tab-separated plain lines when piped, and no colour with NO_COLOR', async () => {
    const home = tmp();
    expect((await login(home)).exitCode).toBe(0);
    const term = await inTerminal(home, ['keys', 'list']);
    expect(term.code).toBe(0);
    expect(term.screen).toMatch(/^ID {2,}NAME {2,}KEY {2,}MODE/m);
    expect(term.screen).toMatch(/^key_\w{24} {2,}Sandbox test key {2,}/m);
    expect(term.raw).toMatch(/\x1b\[1mID/);

    const plain = await inTerminal(home, ['keys', 'list'], { NO_COLOR: '1' });
    expect(plain.raw).not.toMatch(/\x1b\[1m/);
    expect(plain.screen).toMatch(/^ID {2,}NAME/m);

    const piped = await svc(home, ['keys', 'list']);
    expect(piped.exitCode).toBe(0);
    expect(piped.stdout).not.toMatch(/[│┌]|\x1b\[/);
    for (const line of piped.stdout.split('\n')) expect(line.split('\t')).toHaveLength(8);
  });

  it('logs in interactively: email and password typed, the workspace chosen from the list', async () => {
    const t = await newTenant(s, 'pty');
    expect(
      (await s.admin('POST', '/sandbox/workspaces', { email: t.email, name: 'Side Project', role: 'admin' })).status,
    ).toBe(201);
    const home = tmp();
    const choose = (screen: string) => {
      const menu = screen.slice(screen.lastIndexOf('Workspace'));
      if (!/❯/.test(menu)) return undefined;
      // Down until the pointer is on Side Project, then Enter.
      return /❯ Side Project/.test(menu.slice(menu.lastIndexOf('❯'))) ? '\r' : '\x1b[B';
    };
    const run = await inTerminal(home, ['login'], { NO_COLOR: '1' }, [
      (screen) => (/Email/.test(screen) ? `${t.email}\r` : undefined),
      (screen) => (/Password/.test(screen) ? `${t.password}\r` : undefined),
      ...Array.from({ length: 4 }, () => choose),
    ]);
    expect(run.code, run.screen).toBe(0);
    expect(run.screen).toContain(`Logged in to ${s.api} as ${t.email}, workspace Side Project (side-project, admin)`);
    expect(run.screen).not.toContain(t.password);

    const who = await svc(home, ['--json', 'whoami']);
    expect(MeResponse.parse(JSON.parse(who.stdout)).workspace).toMatchObject({ name: 'Side Project', role: 'admin' });
  });

  it("is a library too: `import { createClient, verifyWebhook } from 'svc-mail'` works from the built package, with types", async () => {
    const script = `
      import { createClient, verifyWebhook, signWebhook, WebhookVerificationError, ApiError } from 'svc-mail';
      const client = createClient({ baseUrl: process.env.SVC_BASE_URL, apiKey: process.env.SVC_API_KEY });
      const sent = await client.call('sendEmail', { body: { from: 'orders@example.test', to: 'lib@example.org', text: 'from the library' } });
      const body = JSON.stringify({ id: 'evt_1' });
      const header = signWebhook({ secret: 'whsec_test', body });
      verifyWebhook({ secret: 'whsec_test', header, body });
      let refused = '';
      try { verifyWebhook({ secret: 'whsec_other', header, body }); } catch (e) { refused = e instanceof WebhookVerificationError ? e.reason : 'other'; }
      const missing = await client.call('getEmail', { params: { id: 'msg_000000000000000000000000' } }).catch((e) => e instanceof ApiError && e.problem.code);
      console.log(JSON.stringify({ status: sent.body.status, refused, missing }));`;
    const r = await execa(process.execPath, ['--input-type=module', '-e', script], {
      cwd: ROOT,
      reject: false,
      env: { PATH: process.env.PATH!, SVC_BASE_URL: s.api, SVC_API_KEY: s.seed!.api_key_test },
      extendEnv: false,
    });
    expect(r.exitCode, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({ status: 'queued', refused: 'no_matching_signature', missing: 'not_found' });
    const types = readFileSync(join(ROOT, 'dist', 'index.d.ts'), 'utf8');
    expect(types).toMatch(/createClient/);
    expect(types).toMatch(/verifyWebhook/);
  });
});
