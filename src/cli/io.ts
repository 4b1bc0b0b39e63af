// The process edge of every command: streams, environment, what is a terminal, colour, spinners and prompts.
// Commands write through an IO and never touch `process`, so tests run them with captured streams.
import { styleText } from 'node:util';

export type Env = Record<string, string | undefined>;

/** Colour functions; identities when colour is off. */
export interface Style {
  bold(s: string): string;
  dim(s: string): string;
  red(s: string): string;
  green(s: string): string;
  yellow(s: string): string;
  cyan(s: string): string;
}

export interface Spinner {
  update(text: string): void;
  stop(): void;
}

export interface Prompts {
  input(message: string, opts?: { required?: boolean }): Promise<string>;
  password(message: string): Promise<string>;
  select<T>(message: string, choices: { name: string; value: T; description?: string }[]): Promise<T>;
}

export interface IO {
  stdin: NodeJS.ReadableStream;
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
  env: Env;
  /** stdout is a terminal: tables and colour; otherwise tab-separated columns for scripts. */
  stdoutIsTTY: boolean;
  /** How wide the terminal of stdout is, which tables fit; undefined when nothing limits them (piped, `--wide`). */
  columns?: number;
  stderrIsTTY: boolean;
  stdinIsTTY: boolean;
  /** Colour for each stream: on a terminal only, and never with NO_COLOR. */
  out: Style;
  err: Style;
  /** Writes a line of data to stdout. */
  print(line: string): void;
  /** Writes a line of status, progress, warning or hint to stderr. */
  info(line: string): void;
  /** Prompts are asked only when a person is there to answer: stdin and stderr are terminals. */
  canPrompt: boolean;
  prompts(): Promise<Prompts>;
  /**
   * A spinner on stderr when it is a terminal that says how wide it is; on a terminal of no width (0 or unknown, as a
   * pseudo-terminal is before its size is set) its first text once, as a line; silent otherwise.
   */
  spinner(text: string): Promise<Spinner>;
  readStdin(): Promise<string>;
  /**
   * Aborted by Ctrl-C (SIGINT) or SIGTERM. Asking for it hands the first such signal to the command, which stops what
   * it is waiting on and finishes (exit 0); a second one ends the process as usual.
   */
  interrupt(): AbortSignal;
}

const plain: Style = { bold: id, dim: id, red: id, green: id, yellow: id, cyan: id };
function id(s: string): string {
  return s;
}

/**
 * A terminal's width, or undefined when it does not say (0 or missing: a pseudo-terminal before its size is set, some CI
 * consoles): taken as unlimited rather than guessed.
 */
function width(columns: number | undefined): number | undefined {
  return columns !== undefined && columns > 0 ? columns : undefined;
}

/** NO_COLOR (no-color.org): any non-empty value turns colour off. */
export function colorAllowed(env: Env): boolean {
  return !env.NO_COLOR;
}

/**
 * A format of Node's util.styleText (the 16 basic colours, as terminals have them). Whether a stream gets colour is
 * decided here, per stream (createIO), so styleText is told not to look at process.stdout itself; an empty string
 * stays empty.
 */
function styled(format: 'bold' | 'dim' | 'red' | 'green' | 'yellow' | 'cyan'): (s: string) => string {
  return (s) => (s === '' ? s : styleText(format, s, { validateStream: false }));
}

const colours: Style = {
  bold: styled('bold'),
  dim: styled('dim'),
  red: styled('red'),
  green: styled('green'),
  yellow: styled('yellow'),
  cyan: styled('cyan'),
};

export interface IOParts {
  stdin: NodeJS.ReadableStream;
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
  env: Env;
  stdinIsTTY: boolean;
  stdoutIsTTY: boolean;
  stderrIsTTY: boolean;
  /** The width of the terminal of stdout (when it is one). */
  columns?: number;
  /** Replaces the interactive prompts (tests); the real ones are @inquirer/prompts on stdin and stderr. */
  prompts?: Prompts;
  /** What `interrupt()` returns; a signal that never aborts when not given. */
  interrupt?: () => AbortSignal;
}

/** The package's name on the registry; its command is `svc`. */
const PACKAGE = 'svc-mail';

/**
 * How a hint names the command so that the reader can run what it says. Run through `npx svc-mail …` (npm exec),
 * `svc` is on no PATH: hints say `npx svc-mail …`, which works wherever the package can be found or fetched — except
 * inside this package's own checkout, where npx finds the command as `npx svc`.
 */
export function commandName(env: Env): string {
  if (env.npm_command !== 'exec') return 'svc';
  return env.npm_package_name === PACKAGE ? 'npx svc' : `npx ${PACKAGE}`;
}

/** An IO over the given streams. */
export async function createIO(p: IOParts): Promise<IO> {
  const colour = colorAllowed(p.env);
  const name = commandName(p.env);
  // A hint's commands are written `svc …` between backticks: said again as the reader can run them.
  const named = name === 'svc' ? id : (line: string) => line.replace(/`svc(?=[ `])/g, `\`${name}`);
  const out = colour && p.stdoutIsTTY ? colours : plain;
  const err = colour && p.stderrIsTTY ? colours : plain;
  const io: IO = {
    // Read from `p` when asked: process.stdin is made on first use, and most commands never read it.
    get stdin() {
      return p.stdin;
    },
    stdout: p.stdout,
    stderr: p.stderr,
    env: p.env,
    stdoutIsTTY: p.stdoutIsTTY,
    stderrIsTTY: p.stderrIsTTY,
    stdinIsTTY: p.stdinIsTTY,
    columns: p.stdoutIsTTY ? width(p.columns) : undefined,
    out,
    err,
    print: (line) => void p.stdout.write(`${line}\n`),
    info: (line) => void p.stderr.write(`${named(line)}\n`),
    canPrompt: p.stdinIsTTY && p.stderrIsTTY,
    prompts: async () => p.prompts ?? inquirerPrompts(p.stdin, p.stderr),
    async spinner(text) {
      const silent: Spinner = { update() {}, stop() {} };
      if (!p.stderrIsTTY) return silent;
      const stream = p.stderr as NodeJS.WriteStream;
      // ora counts the lines it drew as their width divided by the terminal's: with a width of 0 that count is
      // infinite and clearing them never ends (the event loop blocked, no timeout, no signal handled). A terminal
      // that does not say how wide it is gets no live spinner, only the line.
      if (width(stream.columns) === undefined) {
        io.info(text);
        return silent;
      }
      const { default: ora } = await import('ora');
      // discardStdin would put stdin in raw mode, which a prompt right after the spinner needs to own.
      const s = ora({
        text,
        stream,
        color: colour ? 'cyan' : false,
        discardStdin: false,
        isEnabled: true,
      }).start();
      // A terminal resized to no width while it spins: the spinner goes before ora draws on it again ('resize' comes
      // in the same turn as the new size).
      const resized = () => {
        if (width(stream.columns) === undefined) stop();
      };
      const stop = () => {
        stream.off('resize', resized);
        s.stop();
      };
      stream.on('resize', resized);
      return {
        update: (t) => void (s.text = t),
        stop,
      };
    },
    readStdin: () => readAll(p.stdin),
    interrupt: p.interrupt ?? (() => new AbortController().signal),
  };
  return io;
}

/** The IO of this process. */
export function processIO(): Promise<IO> {
  // A reader that went away (`svc keys list | head -1`) is not a failure of the command: the rest of its output
  // has nowhere to go, and the command finishes its work.
  for (const stream of [process.stdout, process.stderr]) {
    stream.on('error', (err: NodeJS.ErrnoException) => {
      if (err.code !== 'EPIPE' && err.code !== 'ERR_STREAM_DESTROYED') throw err;
    });
  }
  return createIO({
    get stdin() {
      return process.stdin;
    },
    stdout: process.stdout,
    stderr: process.stderr,
    env: process.env,
    stdinIsTTY: process.getBuiltinModule('node:tty').isatty(0),
    stdoutIsTTY: Boolean(process.stdout.isTTY),
    stderrIsTTY: Boolean(process.stderr.isTTY),
    columns: process.stdout.columns,
    interrupt: () => (interrupted ??= onSignals()),
  });
}

let interrupted: AbortSignal | undefined;

/**
 * An AbortSignal for the first SIGINT or SIGTERM; a second one kills the process as usual. The handler stays in place
 * after the first signal: exit hooks of dependencies (signal-exit, under ora and the prompts) raise the signal again
 * when they find themselves its only listener, which would turn a clean stop into exit 130 or 143.
 */
function onSignals(): AbortSignal {
  const controller = new AbortController();
  const stop = (signal: NodeJS.Signals) => {
    if (!controller.signal.aborted) {
      controller.abort(new Error(`interrupted (${signal})`));
      return;
    }
    process.off('SIGINT', stop);
    process.off('SIGTERM', stop);
    process.kill(process.pid, signal);
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
  return controller.signal;
}

async function inquirerPrompts(input: NodeJS.ReadableStream, output: NodeJS.WritableStream): Promise<Prompts> {
  const inquirer = await import('@inquirer/prompts');
  // Prompts draw on stderr: stdout carries data only, even while asking.
  const context = { input: input as NodeJS.ReadStream, output: output as NodeJS.WriteStream };
  return {
    input: (message, o = {}) => inquirer.input({ message, required: o.required }, context),
    // Nothing is echoed, not even one mask character per key (like sudo and gh): its length is a secret too.
    password: (message) => inquirer.password({ message }, context),
    select: (message, choices) => inquirer.select({ message, choices }, context),
  };
}

async function readAll(stream: NodeJS.ReadableStream): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer));
  return Buffer.concat(chunks).toString('utf8');
}
