// The command line under test at its two levels: argv → options through the real commander tree (with a runner that
// records instead of running), and a command's run function with a captured IO against the real server.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough, Readable } from 'node:stream';
import { run } from '../../src/cli/program.js';
import type { Run, Runner } from '../../src/cli/command.js';
import { commandPath } from '../../src/cli/command.js';
import { createContext, type WallClock, type Context, type GlobalOptions } from '../../src/cli/context.js';
import { EXIT, reportError } from '../../src/cli/errors.js';
import { createIO, type Env, type IO, type Prompts } from '../../src/cli/io.js';
import type { ClientOptions } from '../../src/client/index.js';
import type { TestServer } from '../helpers/server.js';

export interface Captured {
  io: IO;
  stdout(): string;
  stderr(): string;
}

/**
 * An IO over captured streams; `tty` makes stdin, stdout and stderr terminals (tables, colour unless NO_COLOR, stderr
 * 80 columns wide for the spinner);
 * aborting `interrupt` is Ctrl-C.
 */
export async function testIO(
  o: { tty?: boolean; stdin?: string; env?: Env; prompts?: Prompts; interrupt?: AbortSignal } = {},
): Promise<Captured> {
  let out = '';
  let err = '';
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  stdout.on('data', (d: Buffer) => (out += d.toString()));
  stderr.on('data', (d: Buffer) => (err += d.toString()));
  // A terminal says how wide it is; the spinner is drawn only on one that does.
  if (o.tty) Object.assign(stderr, { columns: 80 });
  const io = await createIO({
    stdin: Readable.from(o.stdin === undefined ? [] : [Buffer.from(o.stdin)]),
    stdout,
    stderr,
    env: o.env ?? {},
    stdinIsTTY: Boolean(o.tty),
    stdoutIsTTY: Boolean(o.tty),
    stderrIsTTY: Boolean(o.tty),
    prompts: o.prompts,
    interrupt: o.interrupt && (() => o.interrupt!),
  });
  return { io, stdout: () => out, stderr: () => err };
}

/** A config directory of its own per test file, removed by `cleanup()`. */
export function tempDirs() {
  const made: string[] = [];
  return {
    make(prefix = 'svc-cli-'): string {
      const d = mkdtempSync(join(tmpdir(), prefix));
      made.push(d);
      return d;
    },
    cleanup(): void {
      for (const d of made) rmSync(d, { recursive: true, force: true });
    },
  };
}

/** A clock for waits: `sleep` moves it at once (and runs `onSleep`, e.g. to change the world while "waiting"). */
export function fakeClock(onSleep?: (ms: number) => Promise<void> | void): WallClock & { slept: number[] } {
  let now = Date.parse('2026-08-01T12:00:00.000Z');
  const slept: number[] = [];
  return {
    slept,
    now: () => now,
    async sleep(ms) {
      slept.push(ms);
      now += ms;
      await onSleep?.(ms);
    },
  };
}

export interface Cli {
  ctx: Context;
  stdout(): string;
  stderr(): string;
  /** Runs a command's work as the program does: a failure becomes its one line and exit code. */
  run<O>(work: Run<O>, opts: O, command?: string): Promise<number>;
}

/**
 * A Context against the test server, with a config directory of its own, secrets in the file store (tests never
 * touch a real keychain), and the given IO settings. Several Clis may share a `configDir` to act as later runs.
 */
export async function cli(
  s: TestServer,
  o: {
    configDir: string;
    tty?: boolean;
    stdin?: string;
    env?: Env;
    globals?: GlobalOptions;
    clock?: WallClock;
    prompts?: Prompts;
    interrupt?: AbortSignal;
    /** Client options (an undici MockAgent as dispatcher, for failures the server cannot produce). */
    client?: Partial<ClientOptions>;
  },
): Promise<Cli> {
  // SVC_RUNTIME_DIR: the registry of local servers of this test alone, never the user's.
  const env: Env = {
    SVC_CONFIG_DIR: o.configDir,
    SVC_CREDENTIAL_STORE: 'file',
    SVC_BASE_URL: s.api,
    SVC_RUNTIME_DIR: join(o.configDir, 'run'),
    ...o.env,
  };
  const t = await testIO({ tty: o.tty, stdin: o.stdin, env, prompts: o.prompts, interrupt: o.interrupt });
  const ctx = createContext({ io: t.io, globals: { retries: 0, ...o.globals }, clock: o.clock, client: o.client });
  return {
    ctx,
    stdout: t.stdout,
    stderr: t.stderr,
    async run(work, opts, command = 'svc') {
      try {
        await work(ctx, opts);
        return EXIT.ok;
      } catch (err) {
        return reportError(t.io, err, { command, json: ctx.json });
      }
    },
  };
}

export interface Parsed {
  /** 0 when a command was reached (or help/version printed), else the usage error's code. */
  code: number;
  /** The command reached: `keys create`. */
  command?: string;
  opts?: unknown;
  globals?: GlobalOptions;
  stdout: string;
  stderr: string;
}

/** Parses argv (without `svc`) with the real program; the command's work is recorded, not run. */
export async function parse(...args: string[]): Promise<Parsed> {
  const t = await testIO();
  let reached: Pick<Parsed, 'command' | 'opts' | 'globals'> = {};
  const recorder: Runner = async (cmd, _work, opts) => {
    reached = { command: commandPath(cmd).replace(/^svc /, ''), opts, globals: cmd.optsWithGlobals() };
  };
  const code = await run(['node', 'svc', ...args], t.io, recorder);
  return { code, ...reached, stdout: t.stdout(), stderr: t.stderr() };
}
