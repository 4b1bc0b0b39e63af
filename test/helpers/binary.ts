// The real `svc serve` binary as a child process, for the e2e tests: build dist/ when stale, spawn, wait for the
// ready line, stop. Every start costs a process, so tests keep their starts few.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, rmSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { expect } from 'vitest';
import type { ReadyLine } from '../../src/contract/seed.js';

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
export const BIN = join(ROOT, 'bin', 'svc.js');

/** The ready line `svc serve` prints (the contract's schema). */
export type Ready = ReadyLine;

export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface Launched {
  proc: ChildProcess;
  stderr(): string;
  exited: Promise<Exit>;
}

export interface Served extends Launched {
  ready: Ready;
  /** `http://127.0.0.1:PORT`, the API without `/v1`. */
  origin: string;
}

/**
 * The whole environment of a built `svc` run against `server`, nothing of the machine's (no D-Bus, no SVC_* of the
 * user): its own home, profile and runtime directories (so no registry of the user's local servers), credentials in
 * a file, and the server's API, seed test key and admin token.
 */
export function clientEnv(home: string, server: Served, extra: Record<string, string> = {}): Record<string, string> {
  return {
    PATH: process.env.PATH!,
    HOME: home,
    SVC_CONFIG_DIR: join(home, 'config'),
    SVC_RUNTIME_DIR: join(home, 'run'),
    SVC_CREDENTIAL_STORE: 'file',
    SVC_BASE_URL: server.ready.api,
    SVC_API_KEY: server.ready.seed!.api_key_test!,
    SVC_ADMIN_TOKEN: server.ready.admin_token,
    ...extra,
  };
}

/** Every child still alive, so an afterAll can kill what a failed test left behind. */
export const running = new Set<ChildProcess>();

export function launch(args: string[], env: Record<string, string> = {}): Launched {
  const proc = spawn(process.execPath, [BIN, 'serve', ...args], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  running.add(proc);
  let stderr = '';
  proc.stderr!.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  const exited = new Promise<Exit>((res) =>
    proc.once('exit', (code, signal) => {
      running.delete(proc);
      res({ code, signal });
    }),
  );
  return { proc, exited, stderr: () => stderr };
}

/** An escape sequence of a terminal (colour, cursor), for reading a screen as text: `raw.replace(ANSI, '')`. */
export const ANSI = /\x1b\[[0-9;?]*[A-Za-z]/g;

/** `svc serve`'s mail ports, each any free one. */
export const ANY_MAIL_PORTS = [
  '--smtp-port',
  '0',
  '--submission-port',
  '0',
  '--submissions-port',
  '0',
  '--pop3-port',
  '0',
  '--imap-port',
  '0',
];
/** All of `svc serve`'s ports, each any free one. */
export const ANY_PORTS = ['--port', '0', ...ANY_MAIL_PORTS];

/** All of `svc serve`'s ports, any free one but those given (`{ '--imap-port': '1143' }`). */
export function portsWith(given: Record<string, string>): string[] {
  return ANY_PORTS.map((arg, i) => given[ANY_PORTS[i - 1] ?? ''] ?? arg);
}

/** Starts `svc serve` on free ports and resolves with its parsed first stdout line. */
export async function serve(args: string[], env?: Record<string, string>): Promise<Served> {
  const l = launch([...ANY_PORTS, ...args], env);
  const lines = createInterface({ input: l.proc.stdout! });
  const first = await new Promise<string>((res, rej) => {
    const timer = setTimeout(() => rej(new Error(`no ready line within 20 s; stderr:\n${l.stderr()}`)), 20_000);
    lines.once('line', (line) => {
      clearTimeout(timer);
      res(line);
    });
    l.exited.then(({ code }) =>
      rej(new Error(`svc serve exited with ${code} before its ready line; stderr:\n${l.stderr()}`)),
    );
  });
  expect(first.startsWith('{'), first).toBe(true);
  const ready = JSON.parse(first) as Ready;
  return { ...l, ready, origin: ready.api.replace(/\/v1$/, '') };
}

export async function within<T>(ms: number, p: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>(
    (_, rej) => (timer = setTimeout(() => rej(new Error(`${what}: not within ${ms} ms`)), ms)),
  );
  try {
    return await Promise.race([p, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * libfaketime's preload library, where Debian's `faketime` package puts it (a directory per architecture), for a binary
 * run on a clock of a test's choosing (`LD_PRELOAD` and `FAKETIME` in its environment).
 */
export function libfaketime(): string {
  const found = readdirSync('/usr/lib', { withFileTypes: true })
    .filter((e) => e.isDirectory())
    .map((e) => join('/usr/lib', e.name, 'faketime', 'libfaketime.so.1'))
    .find((p) => existsSync(p));
  if (!found) {
    throw new Error(
      'libfaketime is not installed: some tests run the binary on a clock of their own through it. ' +
        'Install it with `apt-get install faketime` (Debian, Ubuntu); .ci/run installs it when missing.',
    );
  }
  return found;
}

/** SIGTERM and wait (bounded) for the exit. */
export function stop(s: Launched): Promise<Exit> {
  s.proc.kill('SIGTERM');
  return within(5_000, s.exited, 'exit after SIGTERM');
}

/** SIGKILL and wait (bounded) for the exit. */
export function kill9(s: Launched): Promise<Exit> {
  s.proc.kill('SIGKILL');
  return within(5_000, s.exited, 'exit after SIGKILL');
}

/** Kills every child a test left running (afterAll). */
export function killAll(): void {
  for (const p of running) p.kill('SIGKILL');
}

const sleepSync = (ms: number) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);

/**
 * The binary runs dist/: build it when missing or older than the sources. Test files run in parallel workers, so
 * the build holds a lock directory: a second file waits for the first build instead of rewriting dist/ under a
 * child the first one already started.
 */
export function ensureBuilt(): void {
  const built = join(ROOT, 'dist', 'cli', 'svc.js');
  const newest = (dir: string): number =>
    Math.max(
      0,
      ...readdirSync(dir, { withFileTypes: true }).map((e) =>
        e.isDirectory()
          ? newest(join(dir, e.name))
          : e.name.endsWith('.ts') && !e.name.endsWith('.test.ts')
            ? statSync(join(dir, e.name)).mtimeMs
            : 0,
      ),
    );
  const stale = () => !existsSync(built) || statSync(built).mtimeMs < newest(join(ROOT, 'src'));
  if (!stale()) return;
  const lock = join(ROOT, 'node_modules', '.cache', 'svc-e2e-build.lock');
  mkdirSync(dirname(lock), { recursive: true });
  const deadline = Date.now() + 120_000;
  for (;;) {
    try {
      mkdirSync(lock);
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      // A lock older than two minutes belongs to a run that died mid-build.
      const since = statSync(lock, { throwIfNoEntry: false })?.mtimeMs;
      if (since !== undefined && Date.now() - since > 120_000) rmSync(lock, { recursive: true, force: true });
      if (Date.now() > deadline) throw new Error(`waited 120 s for the build lock ${lock}`);
      sleepSync(100);
    }
  }
  try {
    if (stale()) {
      // `npm run build`: tsc, then the command line's bundle.
      execFileSync(
        process.execPath,
        [join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.build.json'],
        {
          cwd: ROOT,
          stdio: 'inherit',
        },
      );
      execFileSync(process.execPath, [join(ROOT, 'scripts', 'bundle.mjs')], { cwd: ROOT, stdio: 'inherit' });
    }
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
}
