// The built binary against `svc serve` run as a process of its own, the way a person meets them on the first day:
// the client finds a local server on any port and data directory, and follows it through a reset.
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pty from '@lydell/node-pty';
import { execa } from 'execa';
import nodemailer from 'nodemailer';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, ensureBuilt, killAll, ROOT, serve, stop, type Served } from '../helpers/binary.js';

const ANSI = /\x1b\[[0-9;?]*[A-Za-z]/g;

const dirs: string[] = [];
function tmp(): string {
  const d = mkdtempSync(join(tmpdir(), 'svc-local-'));
  dirs.push(d);
  return d;
}

/** A port nothing listens on now. */
async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const { port } = s.address() as { port: number };
  await new Promise((r) => s.close(r));
  return port;
}

/** A machine of its own: home, config, an empty default data directory, and the registry of running servers. */
function machine() {
  const home = tmp();
  return {
    home,
    runtime: join(home, 'run'),
    env: (extra: Record<string, string> = {}): Record<string, string> => ({
      PATH: process.env.PATH!,
      HOME: home,
      SVC_CONFIG_DIR: join(home, 'config'),
      SVC_DATA_DIR: join(home, 'default-data'),
      SVC_RUNTIME_DIR: join(home, 'run'),
      SVC_CREDENTIAL_STORE: 'file',
      ...extra,
    }),
  };
}

type Machine = ReturnType<typeof machine>;

const svc = (m: Machine, args: string[], env: Record<string, string> = {}, input = '') =>
  execa(process.execPath, [BIN, ...args], { env: m.env(env), extendEnv: false, input, reject: false, cwd: ROOT });

const registered = (m: Machine) => {
  try {
    return readdirSync(m.runtime).filter((n) => n.startsWith('serve-'));
  } catch {
    return [];
  }
};

beforeAll(() => ensureBuilt(), 120_000);
afterAll(() => {
  killAll();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe('a local server found by itself', () => {
  const m = machine();
  let s: Served;

  beforeAll(async () => {
    s = await serve(['--data-dir', join(m.home, 'somewhere-else')], m.env());
  }, 30_000);
  afterAll(async () => {
    if (s.proc.exitCode === null) await stop(s);
  });

  it('gives svc inbox and svc sandbox clock the admin token of the server on a custom port and data directory', async () => {
    const api = s.ready.api;
    expect(api).not.toBe('http://127.0.0.1:4010/v1');
    // Handed to the sink by SMTP: caught before sendMail resolves.
    const smtp = nodemailer.createTransport({ url: s.ready.smtp, ignoreTLS: true });
    await smtp.sendMail({ from: 'hello@example.test', to: 'ada@example.org', subject: 'Found by itself', text: 'hi' });
    smtp.close();

    // No SVC_ADMIN_TOKEN, no --admin-token, and nothing in the default data directory.
    const inbox = await svc(m, ['inbox'], { SVC_BASE_URL: api });
    expect(inbox.exitCode, inbox.stderr).toBe(0);
    expect(inbox.stdout).toMatch(/\tFound by itself\t/);
    const clock = await svc(m, ['sandbox', 'clock'], { SVC_BASE_URL: api.replace('127.0.0.1', 'localhost') });
    expect(clock.exitCode, clock.stderr).toBe(0);
    expect(clock.stdout).toMatch(/^now\t\d{4}-\d\d-\d\dT.*Z\nmode\treal$/);

    // The registry holds the admin token: readable by the user alone.
    const [entry] = registered(m);
    expect(statSync(m.runtime).mode & 0o777).toBe(0o700);
    expect(statSync(join(m.runtime, entry!)).mode & 0o777).toBe(0o600);
    expect(JSON.parse(readFileSync(join(m.runtime, entry!), 'utf8'))).toMatchObject({
      pid: s.proc.pid, api, data_dir: join(m.home, 'somewhere-else'), admin_token: s.ready.admin_token,
    });
  });

  it('says which to set when no server is registered at the address, and drops an entry whose process is gone', async () => {
    const port = await freePort();
    const dead = spawnSync(process.execPath, ['-e', '0']).pid;
    const stale = join(m.runtime, `serve-${dead}.json`);
    writeFileSync(stale, JSON.stringify({ pid: dead, api: `http://127.0.0.1:${port}/v1`, data_dir: null, admin_token: 'adm_gone', started_at: new Date().toISOString() }));
    chmodSync(stale, 0o600);

    const r = await svc(m, ['inbox'], { SVC_BASE_URL: `http://127.0.0.1:${port}/v1` });
    expect(r.exitCode).toBe(4);
    expect(r.stderr).toBe(
      `error: svc inbox: no admin token for http://127.0.0.1:${port}/v1: no svc serve on this machine is registered at that address, ` +
        `and ${join(m.home, 'default-data', 'admin-token')} does not exist; hint: start one with \`svc serve\`, or set SVC_ADMIN_TOKEN ` +
        '(or pass --admin-token) to the admin_token of the ready line `svc serve` printed',
    );
    expect(registered(m)).toEqual([`serve-${s.proc.pid}.json`]);
  });

  it('leaves the registry when it stops', async () => {
    expect(await stop(s)).toEqual({ code: 0, signal: null });
    expect(registered(m)).toEqual([]);
    const r = await svc(m, ['sandbox', 'clock'], { SVC_BASE_URL: s.ready.api });
    expect(r.exitCode).toBe(4);
    expect(r.stderr).toContain('set SVC_ADMIN_TOKEN (or pass --admin-token)');
  });
});

describe("svc serve's summary on a terminal", { timeout: 60_000 }, () => {
  it('ends with commands that work as printed, from another terminal, on any port and data directory', async () => {
    const m = machine();
    // `svc` on the PATH, as after npm link.
    const bin = join(m.home, 'bin');
    mkdirSync(bin);
    writeFileSync(join(bin, 'svc'), `#!/bin/sh\nexec "${process.execPath}" "${BIN}" "$@"\n`, { mode: 0o755 });
    const term = pty.spawn(process.execPath, [BIN, 'serve', '--port', '0', '--smtp-port', '0', '--data-dir', join(m.home, 'data')], {
      name: 'xterm-256color', cols: 400, rows: 50, cwd: ROOT, env: m.env({ NO_COLOR: '1' }),
    });
    let screen = '';
    const exited = new Promise<number>((r) => term.onExit(({ exitCode }) => r(exitCode)));
    const next = await new Promise<{ send: string; inbox: string }>((resolve, reject) => {
      term.onData((d) => {
        screen += d;
        const text = screen.replace(ANSI, '');
        const send = /^Try: +(.+?)\r?$/m.exec(text)?.[1];
        const inbox = /^Then: +(.+?)\r?$/m.exec(text)?.[1];
        if (send && inbox) resolve({ send, inbox });
      });
      void exited.then(() => reject(new Error(`svc serve exited:\n${screen}`)));
    });
    try {
      expect(next.send).toMatch(/^SVC_BASE_URL=http:\/\/127\.0\.0\.1:\d+\/v1 SVC_API_KEY=svc_test_\w+ svc emails send --from hello@example\.test /);
      expect(next.inbox).toMatch(/^SVC_BASE_URL=http:\/\/127\.0\.0\.1:\d+\/v1 svc inbox$/);
      const sh = (line: string) => execa('bash', ['-c', line], { env: m.env({ PATH: `${bin}:${process.env.PATH}` }), extendEnv: false, reject: false, cwd: m.home });
      const base = { SVC_BASE_URL: /^SVC_BASE_URL=(\S+) /.exec(next.send)![1]! };
      const since = JSON.parse((await svc(m, ['sandbox', 'clock', '--json'], base)).stdout).now as string;
      const sent = await sh(next.send);
      expect(sent.exitCode, sent.stderr).toBe(0);
      expect(sent.stdout).toMatch(/^msg_\w{24}\tqueued$/);
      // Delivered by the server's worker a moment later: waited for, then listed as printed.
      expect((await svc(m, ['inbox', 'wait', '--to', 'you@example.org', '--since', since], base)).exitCode).toBe(0);
      const inbox = await sh(next.inbox);
      expect(inbox.exitCode, inbox.stderr).toBe(0);
      expect(inbox.stdout).toMatch(/\tHello\t/);
    } finally {
      term.kill('SIGTERM');
      expect(await exited).toBe(0);
    }
  });
});
