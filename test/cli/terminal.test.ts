// The built binary as a person sees it in a terminal of 80 columns (a real pseudo-terminal) and as a script sees it
// piped: tables that fit, whole values on request, messages that say what happened, and nothing written to disk by a
// run that only uses the environment.
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pty from '@lydell/node-pty';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ANSI, BIN, ensureBuilt, ROOT } from '../helpers/binary.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

describe('svc in a terminal and in a pipe', { timeout: 120_000 }, () => {
  let s: TestServer;
  const dirs: string[] = [];
  const tmp = () => {
    const d = mkdtempSync(join(tmpdir(), 'svc-term-'));
    dirs.push(d);
    return d;
  };
  let home: string;
  let domainId: string;

  beforeAll(async () => {
    ensureBuilt();
    s = await startTestServer();
    home = tmp();
    const login = await svc(home, ['login', '--email', s.seed!.email, '--password-stdin'], { input: s.seed!.password });
    expect(login.exitCode, login.stderr).toBe(0);
    const add = await svc(home, ['--json', 'domains', 'add', 'a-rather-long-subdomain.narrow.example.com']);
    domainId = JSON.parse(add.stdout).id;
    const sent = await s.call('POST', '/v1/emails', {
      token: s.seed!.api_key_test,
      body: {
        from: 'Shop Orders <orders@example.test>',
        to: 'ada.lovelace@example.org',
        cc: 'charles.babbage@example.org',
        subject: 'Your order #1042 has shipped and will arrive on Thursday, track it with the link inside',
        text: 'x',
      },
    });
    expect(sent.status).toBe(202);
    await s.settle();
  }, 120_000);
  afterAll(async () => {
    await s.close();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  /** The environment of a run: only what is given. */
  const envOf = (dir: string, extra: Record<string, string> = {}) => ({
    PATH: process.env.PATH!,
    HOME: dir,
    SVC_CONFIG_DIR: join(dir, 'config'),
    SVC_DATA_DIR: join(dir, 'data'),
    SVC_BASE_URL: s.api,
    SVC_ADMIN_TOKEN: s.adminToken,
    SVC_CREDENTIAL_STORE: 'file',
    ...extra,
  });

  const svc = (dir: string, args: string[], o: { input?: string; env?: Record<string, string> } = {}) =>
    execa(process.execPath, [BIN, ...args], {
      env: envOf(dir, o.env),
      extendEnv: false,
      input: o.input ?? '',
      reject: false,
      cwd: ROOT,
    });

  /**
   * svc in a pseudo-terminal `cols` wide. `steps` answer what it shows, one after the other; `until` says when to press
   * Ctrl-C (for the commands that keep running).
   */
  function terminal(
    args: string[],
    o: {
      cols?: number;
      env?: Record<string, string>;
      until?: (screen: string) => boolean;
      steps?: ((screen: string) => string | undefined)[];
      /** `args` are those of sh. */
      shell?: boolean;
    } = {},
  ) {
    const [file, argv] = o.shell ? ['/bin/sh', args] : [process.execPath, [BIN, ...args]];
    const term = pty.spawn(file, argv, {
      name: 'xterm-256color',
      cols: o.cols ?? 80,
      rows: 60,
      cwd: ROOT,
      env: envOf(home, o.env),
    });
    let raw = '';
    let stopped = false;
    let step = 0;
    term.onData((d) => {
      raw += d;
      const screen = raw.replace(ANSI, '');
      if (!stopped && o.until?.(screen)) {
        stopped = true;
        term.write('\x03');
      }
      const answer = o.steps?.[step]?.(screen);
      if (answer !== undefined) {
        step++;
        term.write(answer);
      }
    });
    return new Promise<{ code: number; screen: string; lines: string[] }>((resolve) =>
      term.onExit(({ exitCode }) => {
        const screen = raw.replace(ANSI, '');
        resolve({ code: exitCode, screen, lines: screen.split(/\r?\n/) });
      }),
    );
  }

  const longest = (lines: string[]) => Math.max(...lines.map((l) => [...l].length));

  /**
   * A command whose stdout is the terminal and whose stderr goes to a file: its tables alone on the screen (stderr's
   * prose wraps as the terminal likes), what it said there in `errors`.
   */
  async function table(args: string[], o: { cols?: number } = {}) {
    const err = join(tmp(), 'stderr');
    const quoted = args.map((a) => `'${a}'`).join(' ');
    const run = await terminal(['-c', `exec "${process.execPath}" "${BIN}" ${quoted} 2>"${err}"`], {
      cols: o.cols,
      shell: true,
    });
    return { ...run, errors: readFileSync(err, 'utf8') };
  }

  it('fits tables to an 80-column terminal, ids whole, cut values ending in … and said so; --wide prints them whole', async () => {
    const keys = (
      await s.call('GET', '/v1/api-keys', {
        token: (
          await s.call('POST', '/v1/auth/login', { body: { email: s.seed!.email, password: s.seed!.password } })
        ).body.access_token,
      })
    ).body.data as { id: string }[];
    const caught = (await s.admin('GET', '/sandbox/messages')).body.data as { id: string }[];
    const dkim = (
      (await s.call('GET', `/v1/domains/${domainId}`, { token: s.seed!.api_key_test })).body.records as {
        kind: string;
        value: string;
      }[]
    ).find((r) => r.kind === 'dkim')!.value;

    for (const [args, ids] of [
      [['keys', 'list'], keys.map((k) => k.id)],
      [['domains', 'list'], [domainId]],
      [['domains', 'dns', domainId], []],
      [['domains', 'add', 'another-long-subdomain.narrow.example.com'], []],
      [['inbox'], caught.map((m) => m.id)],
    ] as const) {
      const run = await table([...args]);
      expect(run.code, run.errors).toBe(0);
      expect(longest(run.lines), `${args.join(' ')}:\n${run.screen}`).toBeLessThanOrEqual(80);
      for (const id of ids) expect(run.screen).toContain(id);
      expect(run.screen).toContain('…');
      expect(run.errors).toContain('… marks values cut to fit the terminal; --wide or --json shows them whole.');
    }

    const wide = await table(['--wide', 'domains', 'dns', domainId]);
    expect(wide.code).toBe(0);
    expect(longest(wide.lines)).toBeGreaterThan(80);
    expect(wide.screen).toContain(dkim);
    expect(wide.errors).not.toContain('cut to fit');

    const wider = await table(['keys', 'list'], { cols: 400 });
    expect(wider.screen).toContain('emails:send,emails:read,domains:read,domains:write,');
    expect(wider.errors).not.toContain('cut to fit');
  });

  it('prints whole values piped: tab-separated, never cut', async () => {
    const r = await svc(home, ['domains', 'dns', domainId], { env: { COLUMNS: '80' } });
    expect(r.exitCode).toBe(0);
    const dkim = r.stdout
      .split('\n')
      .map((l) => l.split('\t'))
      .find((f) => f[0] === 'dkim')!;
    expect(dkim[3]).toMatch(/^v=DKIM1; k=rsa; p=[A-Za-z0-9+/=]{300,}$/);
    expect(r.stdout).not.toContain('…');
    expect(r.stderr).not.toContain('cut to fit');
  });

  it('follows the inbox in 80 columns, one line per message, and Ctrl-C ends it with exit 0', async () => {
    const run = await terminal(['inbox', '--follow'], { until: (screen) => screen.includes('Waiting for mail') });
    expect(run.code, run.screen).toBe(0);
    const line = run.lines.find((l) => l.includes('eml_'))!;
    expect([...line].length).toBeLessThanOrEqual(80);
    expect(line).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\dZ {2}eml_\w{24} {2}"Shop Or.*… {2}Your ord.*… {2}delivered$/);
  });

  it('ends webhooks listen with exit 0 on SIGINT and on SIGTERM, with a profile read after the signal handler is set', async () => {
    for (const signal of ['SIGINT', 'SIGTERM'] as const) {
      const listen = execa(process.execPath, [BIN, 'webhooks', 'listen'], {
        env: envOf(home),
        extendEnv: false,
        reject: false,
        cwd: ROOT,
      });
      await new Promise<void>((resolve) => {
        let err = '';
        listen.stderr!.on('data', (d: Buffer) => {
          err += d.toString();
          if (err.includes('Ready!')) resolve();
        });
      });
      listen.kill(signal);
      const r = await listen;
      expect([r.exitCode, r.signal], `${signal}: ${r.stderr}`).toEqual([0, undefined]);
    }
  });

  it('asks for the password without echoing anything for its characters', async () => {
    const run = await terminal(['login', '--email', s.seed!.email], {
      env: { SVC_CONFIG_DIR: join(tmp(), 'config') },
      steps: [(screen) => (/Password/.test(screen) ? `${s.seed!.password}\r` : undefined)],
    });
    expect(run.code, run.screen).toBe(0);
    expect(run.screen).toContain(`Logged in to ${s.api} as ${s.seed!.email}`);
    const asked = run.screen.slice(run.screen.indexOf('Password'));
    expect(asked).not.toContain('*');
    expect(asked).not.toContain(s.seed!.password);
  });

  it("lists a refused request's field errors once each, by the flag that gave each, without a hint pointing at them", async () => {
    const r = await svc(
      home,
      ['emails', 'send', '--from', 'hello@example.test', '--to', 'not-an-address', '--cc', 'nor-this', '--text', 'x'],
      {
        env: { SVC_API_KEY: s.seed!.api_key_test },
      },
    );
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toMatch(
      /^error: svc emails send: Validation failed — --to: "not-an-address" is not a valid email address; --cc: "nor-this" is not a valid email address \[validation_failed, req_\w{24}\]$/,
    );
  });

  it('marks with ! a check of doctor that passes only in part', async () => {
    const dir = tmp();
    expect(
      (await svc(dir, ['login', '--email', s.seed!.email, '--password-stdin'], { input: s.seed!.password })).exitCode,
    ).toBe(0);
    expect(
      (await svc(dir, ['keys', 'create', '--name', 'send only', '--scope', 'emails:send', '--save'])).exitCode,
    ).toBe(0);
    const env = { SVC_CONFIG_DIR: join(dir, 'config'), NO_COLOR: '1' };
    const run = await terminal(['doctor'], { env });
    expect(run.code, run.screen).toBe(0);
    expect(run.screen).toMatch(
      /^! api key +svc_test_\w{4}… \(saved in profile default\) is valid, but was refused reading domains: /m,
    );
    expect(run.screen).toMatch(/^✓ session +signed in as /m);
    expect(run.screen).not.toMatch(/^✓ api key/m);
  });

  it('names the command as it was typed', async () => {
    const r = await svc(home, ['inbox'], { env: { SVC_BASE_URL: 'http://127.0.0.1:9/v1', SVC_ADMIN_TOKEN: 'adm_x' } });
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toMatch(/^error: svc inbox: could not reach http:\/\/127\.0\.0\.1:9\/v1 /);
    const listed = await svc(home, ['inbox', 'list'], {
      env: { SVC_BASE_URL: 'http://127.0.0.1:9/v1', SVC_ADMIN_TOKEN: 'adm_x' },
    });
    expect(listed.stderr).toMatch(/^error: svc inbox list: could not reach/);
  });

  it('writes nothing when a run takes everything from the environment, not even in an empty config directory', async () => {
    const dir = tmp();
    const config = join(dir, 'config');
    mkdirSync(config);
    const send = ['emails', 'send', '--from', 'hello@example.test', '--to', 'ci@example.org', '--text', 'from CI'];
    const r = await svc(dir, send, { env: { SVC_API_KEY: s.seed!.api_key_test } });
    expect(r.exitCode, r.stderr).toBe(0);
    expect(readdirSync(config)).toEqual([]);
    // Without SVC_BASE_URL the profile is looked at for one, and only looked at: whatever answers at the default address.
    const defaulted = envOf(dir, { SVC_API_KEY: s.seed!.api_key_test });
    delete (defaulted as Record<string, string | undefined>).SVC_BASE_URL;
    await execa(process.execPath, [BIN, ...send], { env: defaulted, extendEnv: false, reject: false, cwd: ROOT });
    expect(readdirSync(config)).toEqual([]);
    expect(readdirSync(dir)).toEqual(['config']);
  });
});
