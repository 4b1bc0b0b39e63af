// Local servers wherever they run, through the built binary and real `svc serve` processes: a command given no base URL
// uses the one server running when nothing answers on the default port, and names them when several run; `svc
// servers` and `svc doctor` list them; a second `svc serve` on a taken port names the one holding it and leaves nothing
// behind; and `svc serve`'s log keeps its summary on screen.
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, connect, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import pty from '@lydell/node-pty';
import { execa } from 'execa';
import nodemailer from 'nodemailer';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
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

const dirs: string[] = [];
function tmp(): string {
  const d = mkdtempSync(join(tmpdir(), 'svc-servers-'));
  dirs.push(d);
  return d;
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

const svc = (m: Machine, args: string[], env: Record<string, string> = {}) =>
  execa(process.execPath, [BIN, ...args], { env: m.env(env), extendEnv: false, reject: false, cwd: ROOT });

/** svc in a 200-column pseudo-terminal; `until` says when to press Ctrl-C (for `svc serve`). */
function terminal(m: Machine, args: string[], o: { until?: (screen: string) => boolean } = {}) {
  const term = pty.spawn(process.execPath, [BIN, ...args], {
    name: 'xterm-256color',
    cols: 200,
    rows: 60,
    cwd: ROOT,
    env: m.env({ NO_COLOR: '1' }),
  });
  let raw = '';
  let stopped = false;
  const screenNow = () => raw.replace(ANSI, '');
  const exited = new Promise<{ code: number; screen: string }>((resolve) =>
    term.onExit(({ exitCode }) => resolve({ code: exitCode, screen: screenNow() })),
  );
  const waiters = new Set<() => void>();
  term.onData((d) => {
    raw += d;
    if (!stopped && o.until?.(screenNow())) {
      stopped = true;
      term.write('\x03');
    }
    for (const w of waiters) w();
  });
  return {
    exited,
    /** Resolves once the screen shows what `seen` looks for. */
    shows: (seen: (screen: string) => boolean) =>
      within(
        20_000,
        new Promise<void>((resolve) => {
          const check = () => {
            if (!seen(screenNow())) return;
            waiters.delete(check);
            resolve();
          };
          waiters.add(check);
          check();
        }),
        'the screen',
      ),
    interrupt: () => term.write('\x03'),
  };
}

/** Whether something accepts connections at 127.0.0.1:port. */
function answers(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

const registered = (m: Machine) => {
  try {
    return readdirSync(m.runtime).sort();
  } catch {
    return [];
  }
};

/** Mail handed to a server's SMTP sink, caught before sendMail resolves. */
async function mail(s: Served, subject: string) {
  const smtp = nodemailer.createTransport({ url: s.ready.smtp, ignoreTLS: true });
  await smtp.sendMail({ from: 'hello@example.test', to: 'ada@example.org', subject, text: 'hi' });
  smtp.close();
}

beforeAll(() => ensureBuilt(), 120_000);
afterAll(() => {
  killAll();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe('a command given no base URL', { timeout: 90_000 }, () => {
  const m = machine();
  let a: Served;
  let b: Served | undefined;

  beforeAll(async () => {
    // What these tests show needs the default port free: a server there would rightly be used instead.
    expect(await answers(4010), 'something listens on 127.0.0.1:4010 of this machine; these tests need it free').toBe(
      false,
    );
    a = await serve(['--data-dir', join(m.home, 'a')], m.env());
    await mail(a, 'Caught by A');
  }, 30_000);
  afterAll(async () => {
    for (const s of [a, b]) if (s && s.proc.exitCode === null) await stop(s);
  });

  it('uses the one svc serve running when nothing answers on the default port, ignoring and removing dead entries', async () => {
    const dead = spawnSync(process.execPath, ['-e', '0']).pid!;
    const stale = join(m.runtime, `serve-${dead}.json`);
    const entry = { pid: dead, api: 'http://127.0.0.1:1/v1', data_dir: null, admin_token: 'adm_gone', started_at: '' };
    writeFileSync(stale, JSON.stringify(entry));
    chmodSync(stale, 0o600);

    // No --base-url, SVC_BASE_URL, profile or admin token: piped, it says nothing about where it went.
    const inbox = await svc(m, ['inbox']);
    expect(inbox.exitCode, inbox.stderr).toBe(0);
    expect(inbox.stdout).toMatch(/\tCaught by A\t/);
    expect(inbox.stderr).toBe('');
    expect(registered(m)).toEqual([`serve-${a.proc.pid}.json`]);

    const doctor = await svc(m, ['doctor', '--json']);
    const checks = JSON.parse(doctor.stdout).checks as { name: string; status: string; detail: string }[];
    expect(checks.find((c) => c.name === 'base url')).toEqual({
      name: 'base url',
      status: 'ok',
      detail: expect.stringMatching(
        new RegExp(
          `^${a.ready.api.replace(/\./g, '\\.')} answered in \\d+ ms \\(from the one svc serve running, pid ${a.proc.pid}: nothing answers at the default address\\)$`,
        ),
      ),
    });
    expect(checks.filter((c) => c.name === 'local server')).toEqual([
      {
        name: 'local server',
        status: 'ok',
        detail: `${a.ready.api} (pid ${a.proc.pid}, data dir ${join(m.home, 'a')}), the base URL`,
      },
    ]);

    // On a terminal it says once which server it went to.
    const t = terminal(m, ['sandbox', 'clock']);
    const { code, screen } = await t.exited;
    expect(code, screen).toBe(0);
    expect(screen.match(/note: [^\r\n]*/g)).toEqual([
      `note: nothing answers at http://127.0.0.1:4010/v1; using the svc serve at ${a.ready.api} (pid ${a.proc.pid}, data dir ${join(m.home, 'a')})`,
    ]);
    expect(screen).toMatch(/now\s+\d{4}-/);
  });

  it('lists the running servers: svc servers (TSV piped, a table on a terminal, --json without the admin token)', async () => {
    const piped = await svc(m, ['servers']);
    expect(piped.exitCode, piped.stderr).toBe(0);
    expect(piped.stdout.split('\n').map((l) => l.split('\t'))).toEqual([
      [
        String(a.proc.pid),
        a.ready.api,
        a.ready.smtp,
        join(m.home, 'a'),
        expect.stringMatching(/^\d{4}-\d\d-\d\dT[\d:.]+Z$/),
      ],
    ]);

    const json = JSON.parse((await svc(m, ['servers', '--json'])).stdout);
    expect(json).toEqual({
      data: [
        {
          pid: a.proc.pid,
          api: a.ready.api,
          smtp: a.ready.smtp,
          data_dir: join(m.home, 'a'),
          started_at: expect.any(String),
        },
      ],
    });

    const t = terminal(m, ['servers']);
    const { screen } = await t.exited;
    expect(screen).toMatch(/^PID +API +SMTP +DATA DIR +STARTED/m);
    expect(screen).toContain(`${a.proc.pid}  ${a.ready.api}  ${a.ready.smtp}  ${join(m.home, 'a')}`);
  });

  it('names every server and how to pick one when several run, and doctor lists them', async () => {
    b = await serve(['--memory'], m.env());
    const inbox = await svc(m, ['inbox']);
    expect(inbox.exitCode).toBe(2);
    const named = (s: Served) =>
      `${s.ready.api} (pid ${s.proc.pid}, ${s === a ? `data dir ${join(m.home, 'a')}` : 'in memory'})`;
    // Oldest first.
    expect(inbox.stderr).toBe(
      `error: svc inbox: nothing answers at http://127.0.0.1:4010/v1, and 2 svc serve run on this machine: ${named(a)}, ${named(b)}; ` +
        'hint: pick one with --base-url URL or SVC_BASE_URL=URL (`svc servers` lists them)',
    );
    const listed = JSON.parse((await svc(m, ['servers', '--json'])).stdout).data.map((s: { pid: number }) => s.pid);
    expect(listed).toEqual([a.proc.pid, b.proc.pid]);

    const doctor = await svc(m, ['doctor', '--json']);
    expect(doctor.exitCode).toBe(1);
    const checks = JSON.parse(doctor.stdout).checks as { name: string; status: string; detail: string }[];
    expect(checks.find((c) => c.name === 'base url')?.status).toBe('fail');
    expect(checks.filter((c) => c.name === 'local server').map((c) => c.detail)).toEqual([named(a), named(b)]);

    // Picking one works.
    const picked = await svc(m, ['inbox'], { SVC_BASE_URL: a.ready.api });
    expect(picked.exitCode, picked.stderr).toBe(0);
    expect(picked.stdout).toMatch(/\tCaught by A\t/);

    await stop(b);
    expect((await svc(m, ['inbox'])).exitCode).toBe(0);
  });
});

describe('a second svc serve on a taken port', { timeout: 60_000 }, () => {
  const m = machine();
  let a: Served;
  let other: Server;

  beforeAll(async () => {
    a = await serve(['--data-dir', join(m.home, 'a')], m.env());
    other = createServer();
    await new Promise<void>((r) => other.listen(0, '127.0.0.1', r));
  }, 30_000);
  afterAll(async () => {
    other.close();
    if (a.proc.exitCode === null) await stop(a);
  });

  const start = async (args: string[]) => {
    const l = launch(args, m.env());
    const exit = await within(15_000, l.exited, `exit of svc serve ${args.join(' ')}`);
    return { code: exit.code, stderr: l.stderr() };
  };
  const portOf = (url: string) => new URL(url.replace(/^smtp:/, 'http:')).port;

  it('names the svc serve holding it, and leaves no data directory or file behind', async () => {
    const fresh = join(m.home, 'fresh');
    const before = registered(m);
    const api = await start(['--port', portOf(a.ready.api), '--smtp-port', '0', '--data-dir', fresh]);
    expect(api).toEqual({
      code: 1,
      stderr:
        `error: svc serve: svc serve (pid ${a.proc.pid}, data dir ${join(m.home, 'a')}) already listens on 127.0.0.1:${portOf(a.ready.api)}; ` +
        `hint: stop it (Ctrl-C where it runs, or kill ${a.proc.pid}), or pass --port 0 (a free one)\n`,
    });
    const smtp = await start(['--port', '0', '--smtp-port', portOf(a.ready.smtp), '--data-dir', fresh]);
    expect(smtp.code).toBe(1);
    expect(smtp.stderr).toBe(
      `error: svc serve: svc serve (pid ${a.proc.pid}, data dir ${join(m.home, 'a')}) already listens on 127.0.0.1:${portOf(a.ready.smtp)} (its SMTP sink); ` +
        `hint: stop it (Ctrl-C where it runs, or kill ${a.proc.pid}), or pass --smtp-port 0 (a free one)\n`,
    );
    expect(existsSync(fresh)).toBe(false);
    expect(registered(m)).toEqual(before);

    // On its own data directory too: the port is named, with what to change.
    const same = await start(['--port', portOf(a.ready.api), '--data-dir', join(m.home, 'a')]);
    expect(same.stderr).toBe(
      `error: svc serve: svc serve (pid ${a.proc.pid}) already runs on the data directory ${join(m.home, 'a')} and listens on 127.0.0.1:${portOf(a.ready.api)}; ` +
        'hint: stop it (Ctrl-C where it runs), or give this one another --data-dir and --port 0\n',
    );
    // The running server was not disturbed.
    expect((await svc(m, ['sandbox', 'clock'], { SVC_BASE_URL: a.ready.api })).exitCode).toBe(0);
  });

  it('names the program holding the port when it is not svc: its pid and name', async () => {
    const port = String((other.address() as { port: number }).port);
    const fresh = join(m.home, 'fresh-2');
    const r = await start(['--port', port, '--data-dir', fresh]);
    expect(r).toEqual({
      code: 1,
      // This test's process holds it: its pid and name.
      stderr: `error: svc serve: 127.0.0.1:${port} is taken by another program (pid ${process.pid}, ${basename(process.execPath)}); hint: stop it, or pass --port 0 (a free one)\n`,
    });
    expect(existsSync(fresh)).toBe(false);
  });
});

describe("svc serve's log", { timeout: 60_000 }, () => {
  const m = machine();

  it('on a terminal, keeps request lines out of the way (debug) and the summary on screen; --log-level debug shows them', async () => {
    for (const [args, shown] of [
      [[], false],
      [['--quiet'], false],
      [['--log-level', 'debug'], true],
    ] as const) {
      const t = terminal(m, ['serve', ...ANY_PORTS, '--memory', ...args]);
      let api = '';
      await t.shows((s) => {
        // The summary in place of the ready line.
        api = /^ +API +(http:\/\/127\.0\.0\.1:\d+\/v1)\r?$/m.exec(s)?.[1] ?? '';
        return api !== '' && /Ctrl-C stops it\./.test(s);
      });
      expect((await fetch(`${api}/openapi.json`)).status).toBe(200);
      t.interrupt();
      const { code, screen } = await t.exited;
      expect(code, screen).toBe(0);
      expect(screen, args.join(' ')).toMatch(/^ +Inbox +http:\/\/127\.0\.0\.1:\d+\/\?token=adm_\w+\r?$/m);
      expect(screen, args.join(' ')).toMatch(/^ +Login +owner@example\.test +password sandbox-\w+\r?$/m);
      expect(screen, args.join(' ')).toMatch(/^ +Test key +svc_test_\w{32}\r?$/m);
      const requestLine = /^debug request .*method=GET path=\/v1\/openapi\.json status=200/m;
      if (shown) expect(screen).toMatch(requestLine);
      else expect(screen, args.join(' ')).not.toMatch(/ request /);
    }
  });

  it('piped, writes request lines at info (--quiet: none), and as JSON lines with --json', async () => {
    for (const [args, expected] of [
      [[], /^info {2}request .*path=\/v1\/openapi\.json status=200/m],
      [['--quiet'], null],
    ] as const) {
      const s = await serve(['--memory', ...args], m.env());
      expect((await fetch(`${s.ready.api}/openapi.json`)).status).toBe(200);
      await stop(s);
      if (expected) expect(s.stderr()).toMatch(expected);
      else expect(s.stderr()).not.toMatch(/^(info|debug) /m);
    }
    const t = terminal(m, ['serve', ...ANY_PORTS, '--memory', '--json']);
    let api = '';
    await t.shows((s) => {
      api = /"api":"(http:\/\/127\.0\.0\.1:\d+\/v1)"/.exec(s)?.[1] ?? '';
      return api !== '' && /Ctrl-C stops it\./.test(s);
    });
    expect((await fetch(`${api}/openapi.json`)).status).toBe(200);
    await t.shows((s) => /"level":"info","msg":"request"/.test(s));
    t.interrupt();
    expect((await t.exited).code).toBe(0);
  });
});
