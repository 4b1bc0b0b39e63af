// The built binary against `svc serve` run as a process of its own, the way a person meets them on the first day:
// the client finds a local server on any port and data directory, and follows it through a reset.
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer as createHttpServer } from 'node:http';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pty from '@lydell/node-pty';
import { execa } from 'execa';
import nodemailer from 'nodemailer';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ANSI, ANY_PORTS, BIN, ensureBuilt, killAll, ROOT, serve, type Served, stop } from '../helpers/binary.js';

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

describe('a local server found by itself', { timeout: 60_000 }, () => {
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
      pid: s.proc.pid,
      api,
      data_dir: join(m.home, 'somewhere-else'),
      admin_token: s.ready.admin_token,
    });
  });

  it('says which to set when no server is registered at the address, and drops an entry whose process is gone', async () => {
    const port = await freePort();
    const dead = spawnSync(process.execPath, ['-e', '0']).pid;
    const stale = join(m.runtime, `serve-${dead}.json`);
    writeFileSync(
      stale,
      JSON.stringify({
        pid: dead,
        api: `http://127.0.0.1:${port}/v1`,
        data_dir: null,
        admin_token: 'adm_gone',
        started_at: new Date().toISOString(),
      }),
    );
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
    const term = pty.spawn(process.execPath, [BIN, 'serve', ...ANY_PORTS, '--data-dir', join(m.home, 'data')], {
      name: 'xterm-256color',
      cols: 400,
      rows: 50,
      cwd: ROOT,
      env: m.env({ NO_COLOR: '1' }),
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
      expect(next.send).toMatch(
        /^SVC_BASE_URL=http:\/\/127\.0\.0\.1:\d+\/v1 SVC_API_KEY=svc_test_\w+ svc emails send --from hello@example\.test /,
      );
      expect(next.inbox).toMatch(/^SVC_BASE_URL=http:\/\/127\.0\.0\.1:\d+\/v1 svc inbox$/);
      const sh = (line: string) =>
        execa('bash', ['-c', line], {
          env: m.env({ PATH: `${bin}:${process.env.PATH}` }),
          extendEnv: false,
          reject: false,
          cwd: m.home,
        });
      const base = { SVC_BASE_URL: /^SVC_BASE_URL=(\S+) /.exec(next.send)![1]! };
      const since = JSON.parse((await svc(m, ['sandbox', 'clock', '--json'], base)).stdout).now as string;
      const sent = await sh(next.send);
      expect(sent.exitCode, sent.stderr).toBe(0);
      expect(sent.stdout).toMatch(/^msg_\w{24}\tqueued$/);
      // Delivered by the server's worker a moment later: waited for, then listed as printed.
      const waited = await svc(m, ['inbox', 'wait', '--to', 'you@example.org', '--since', since], base);
      expect(waited.exitCode, waited.stderr).toBe(0);
      const inbox = await sh(next.inbox);
      expect(inbox.exitCode, inbox.stderr).toBe(0);
      expect(inbox.stdout).toMatch(/\tHello\t/);
    } finally {
      term.kill('SIGTERM');
      expect(await exited).toBe(0);
    }
  });
});

/** A proxy on loopback in front of `origin` that drops the header a local server sends: the service as seen from afar. */
async function withoutSandboxHeader(origin: string): Promise<{ api: string; close(): Promise<void> }> {
  const proxy = createHttpServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const headers = Object.fromEntries(
      Object.entries(req.headers).filter(([k]) => k !== 'host' && k !== 'connection'),
    ) as Record<string, string>;
    const answer = await fetch(origin + req.url, {
      method: req.method,
      headers,
      body: chunks.length ? Buffer.concat(chunks) : undefined,
    });
    const out = Object.fromEntries(
      [...answer.headers].filter(([k]) => !/^svc-sandbox|^content-(length|encoding)$|^transfer-encoding$/.test(k)),
    );
    res.writeHead(answer.status, out);
    res.end(Buffer.from(await answer.arrayBuffer()));
  });
  await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r));
  return {
    api: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}/v1`,
    close: () =>
      new Promise((r) => {
        proxy.closeAllConnections();
        proxy.close(() => r());
      }),
  };
}

describe('a sandbox says so, and the client says how to publish there', { timeout: 60_000 }, () => {
  const m = machine();
  let s: Served;
  let env: Record<string, string>;

  beforeAll(async () => {
    s = await serve(['--data-dir', join(m.home, 'data')], m.env());
    env = { SVC_BASE_URL: s.ready.api, SVC_API_KEY: s.ready.seed!.api_key_test! };
  }, 30_000);
  afterAll(async () => {
    if (s.proc.exitCode === null) await stop(s);
  });

  it('sends Svc-Sandbox: 1 on every answer, refusals and unknown paths too', async () => {
    for (const path of ['/v1/openapi.json', '/v1/emails', '/nowhere', '/sandbox/clock']) {
      expect((await fetch(s.origin + path)).headers.get('svc-sandbox'), path).toBe('1');
    }
  });

  it('names svc sandbox dns publish after domains add, on a send from the unverified domain, and at verify', async () => {
    const add = await svc(m, ['domains', 'add', 'shop.example.com'], env);
    expect(add.exitCode, add.stderr).toBe(0);
    const id = /\((dom_\w{24})\)/.exec(add.stderr)![1]!;
    expect(add.stderr).toContain(`Then: svc sandbox dns publish ${id} && svc domains verify ${id}`);
    expect(add.stderr).not.toContain('at your DNS host');

    const send = await svc(
      m,
      ['emails', 'send', '--from', 'orders@shop.example.com', '--to', 'ada@example.org', '--text', 'hi'],
      env,
    );
    expect(send.exitCode).toBe(1);
    expect(send.stderr).toMatch(
      new RegExp(
        `\\[domain_not_verified, req_\\w+\\]; hint: this is a local sandbox: publish its records in the sandbox zone with \`svc sandbox dns publish ${id}\``,
      ),
    );

    const verify = await svc(m, ['domains', 'verify', id], env);
    expect(verify.exitCode).toBe(1);
    expect(verify.stderr).toContain(`nothing is in its DNS zone until you run \`svc sandbox dns publish ${id}\``);

    // --wait says so at its first check, instead of waiting out its ten minutes silently.
    const waiting = execa(process.execPath, [BIN, 'domains', 'verify', id, '--wait'], {
      env: m.env(env),
      extendEnv: false,
      reject: false,
      cwd: ROOT,
    });
    let said = '';
    await new Promise<void>((resolve) => {
      waiting.stderr!.on('data', (d: Buffer) => {
        said += d.toString();
        if (said.includes('\n')) resolve();
      });
    });
    waiting.kill('SIGINT');
    await waiting;
    expect(said).toMatch(
      new RegExp(
        `^note: this is a local sandbox: nothing is in its DNS zone until you run \`svc sandbox dns publish ${id}\`; still waiting`,
      ),
    );

    const publish = await svc(m, ['domains', 'verify', id, '--publish'], env);
    expect(publish.exitCode, publish.stderr).toBe(0);
    expect(publish.stderr).toMatch(/^Published \d+ records of shop\.example\.com in the sandbox zone\.\n/);
    expect(publish.stderr).toContain('shop.example.com is verified.');
    const sent = await svc(
      m,
      ['emails', 'send', '--from', 'orders@shop.example.com', '--to', 'ada@example.org', '--text', 'hi'],
      env,
    );
    expect(sent.exitCode, sent.stderr).toBe(0);
  });

  it('gives no sandbox hint where the answers do not say so, even on a loopback address, and refuses --publish there', async () => {
    const far = await withoutSandboxHeader(s.origin);
    try {
      const remote = { ...env, SVC_BASE_URL: far.api };
      const add = await svc(m, ['domains', 'add', 'far.example.com'], remote);
      expect(add.exitCode, add.stderr).toBe(0);
      const id = /\((dom_\w{24})\)/.exec(add.stderr)![1]!;
      expect(add.stderr).toContain('Publish these records at your DNS host:');
      expect(add.stderr).toContain(`Then: svc domains verify ${id} --wait`);
      expect(add.stderr).not.toContain('sandbox');

      const publish = await svc(m, ['domains', 'verify', id, '--publish'], remote);
      expect(publish.exitCode).toBe(2);
      expect(publish.stderr).toBe(
        `error: svc domains verify: --publish writes the records into the DNS zone of a local svc serve, and ${far.api} is not one; ` +
          `hint: publish the records of \`svc domains dns ${id}\` at your DNS host, then \`svc domains verify ${id} --wait\``,
      );
      const send = await svc(
        m,
        ['emails', 'send', '--from', 'orders@far.example.com', '--to', 'ada@example.org', '--text', 'hi'],
        remote,
      );
      expect(send.stderr).toMatch(
        /hint: publish its records \(`svc domains dns ID`\), then `svc domains verify ID --wait`$/,
      );
    } finally {
      await far.close();
    }
  });
});

describe('a profile saved against a local server that was reset since', { timeout: 90_000 }, () => {
  it('says the server was reset and to log in again, for the saved session and for the saved key; a restart changes nothing', async () => {
    const m = machine();
    const port = String(await freePort());
    const data = join(m.home, 'data');
    let s = await serve(['--port', port, '--data-dir', data], m.env());
    const env = { SVC_BASE_URL: s.ready.api };
    const login = await svc(
      m,
      ['login', '--email', s.ready.seed!.email, '--password-stdin'],
      env,
      s.ready.seed!.password,
    );
    expect(login.exitCode, login.stderr).toBe(0);
    expect(
      (await svc(m, ['keys', 'create', '--name', 'laptop', '--scope', 'emails:send', '--save'], env)).exitCode,
    ).toBe(0);
    const send = ['emails', 'send', '--from', 'hello@example.test', '--to', 'ada@example.org', '--text', 'hi'];

    // Restarted on the same data directory: the same server as far as credentials go.
    await stop(s);
    s = await serve(['--port', port, '--data-dir', data], m.env());
    expect((await svc(m, ['whoami'], env)).exitCode).toBe(0);
    expect((await svc(m, send, env)).exitCode).toBe(0);

    await stop(s);
    s = await serve(['--port', port, '--data-dir', data, '--reset', '--yes'], m.env());
    try {
      const who = await svc(m, ['whoami'], env);
      expect(who.exitCode).toBe(4);
      expect(who.stderr).toBe(
        `error: svc whoami: the local server at ${s.ready.api} was reset since you logged in; hint: run \`svc login\``,
      );
      const sent = await svc(m, send, env);
      expect(sent.exitCode).toBe(4);
      expect(sent.stderr).toBe(
        `error: svc emails send: the local server at ${s.ready.api} was reset since this profile's key was saved; ` +
          'hint: its keys are gone with it: run `svc login`, then `svc keys create --name NAME --scope emails:send --save`',
      );
      const again = await svc(
        m,
        ['login', '--email', s.ready.seed!.email, '--password-stdin'],
        env,
        s.ready.seed!.password,
      );
      expect(again.exitCode, again.stderr).toBe(0);
      expect((await svc(m, ['whoami'], env)).exitCode).toBe(0);
    } finally {
      await stop(s);
    }
  });
});
