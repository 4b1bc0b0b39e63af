import { Command, InvalidArgumentError, Option } from 'commander';
import type { ReadyLine } from '../../contract/sandbox.js';
import type { Logger } from '../../lib/log.js';
import { DEFAULT_BASE_URL } from '../config.js';
import { CommandError, UsageError } from '../errors.js';
import { processIO, type IO } from '../io.js';
import { defaultDataDir } from '../paths.js';

function intArg(name: string, min: number, max: number) {
  return (v: string) => {
    const n = Number(v);
    if (!Number.isInteger(n) || n < min || n > max) throw new InvalidArgumentError(`${name} must be a whole number from ${min} to ${max}.`);
    return n;
  };
}

export interface ServeFlags {
  host: string;
  port: number;
  smtpPort: number;
  dataDir?: string;
  memory?: boolean;
  clock: 'real' | 'manual';
  dns: 'sandbox' | 'system';
  dnsServer?: string[];
  openSignup?: boolean;
  seed: boolean;
  sendRate: number;
  relay?: string;
  blockPattern?: string[];
  tlsCert?: string;
  tlsKey?: string;
  allowInsecureHttp?: boolean;
  trustProxy?: boolean;
  json?: boolean;
  /** Empty the data directory first (after a confirmation, or `yes`). */
  reset?: boolean;
  yes?: boolean;
}

/**
 * The node flags `svc serve` runs with. A server allocates steadily for as long as it runs, and V8 would otherwise size
 * its heap for throughput: --max-semi-space-size=8 stops the young generation at 8 MB semi-spaces instead of 32 MB
 * (~50 MB of resident memory, no measurable throughput); --heap-growing-percent=100 lets the old generation grow to
 * twice what survived the last full collection before it collects again, instead of up to four times (the drain
 * bench's peak RSS fell from 240–256 to 196–204 MB at the same throughput; the send bench measured 5–15 % fewer
 * accepted/s, within its targets).
 */
export const SERVE_NODE_FLAGS = ['--max-semi-space-size=8', '--heap-growing-percent=100'];

/**
 * Gives this process the serve flags. They are not on bin/svc.js's first line: any V8 flag there makes Node compile
 * every built-in module it loads after start-up afresh instead of from the compiled code it ships (the code is tied to
 * the default flags), which cost each client command a third of its start. Node ≥ 22.15 restarts the process in place
 * with them (same pid, same stdio; not on Windows); otherwise the old generation's rule is taken at run time, and the
 * young generation keeps V8's size.
 */
function withServeFlags(): void {
  const missing = SERVE_NODE_FLAGS.filter((f) => !process.execArgv.includes(f));
  if (missing.length === 0) return;
  const { execve } = process as unknown as { execve?: (file: string, args: string[], env: NodeJS.ProcessEnv) => never };
  if (execve && process.platform !== 'win32') execve(process.execPath, [process.execPath, ...missing, ...process.execArgv, ...process.argv.slice(1)], process.env);
  process.getBuiltinModule('node:v8').setFlagsFromString('--heap-growing-percent=100');
}

/** `svc serve`: loads the server lazily, so client commands never load SQLite or the SMTP stack. */
export async function serveRun(flags: ServeFlags, io: IO): Promise<void> {
  withServeFlags();
  const { reset, yes, ...options } = flags;
  const dataDir = flags.memory ? undefined : (flags.dataDir ?? defaultDataDir(io.env));
  if (reset) await resetDataDir(io, dataDir!, Boolean(yes));
  const { startServer, ServeUsageError } = await import('../../server/index.js');
  const { createLogger } = await import('../../lib/log.js');
  const held = holdUntilReady(createLogger({ json: flags.json }));
  let server;
  try {
    server = await startServer({ ...options, dataDir, memory: flags.memory, log: held.log });
  } catch (err) {
    held.release();
    if (err instanceof ServeUsageError) throw new UsageError(err.message);
    const e = err as NodeJS.ErrnoException;
    if (e.code === 'EADDRINUSE') {
      throw new Error(`${e.message}: another program uses that port; pick another with --port/--smtp-port (0 picks a free one).`);
    }
    throw err;
  }
  // Handled before the ready line is out: whoever reads it may signal at once.
  const stopped = new Promise<void>((resolve) => {
    const stop = (signal: string) => {
      io.info(`${signal}: draining and closing…`);
      server.close().then(resolve, resolve);
    };
    process.once('SIGINT', () => stop('SIGINT'));
    process.once('SIGTERM', () => stop('SIGTERM'));
  });
  io.print(JSON.stringify(server.ready));
  held.release();
  if (io.stderrIsTTY) printSummary(io, server.ready, dataDir);
  await stopped;
}

/**
 * `--reset`: removes what svc keeps in the data directory (database, secrets, admin token, seed) and nothing else,
 * after asking on a terminal; a script says `--yes`, since nothing can answer a question there.
 */
async function resetDataDir(io: IO, dir: string, yes: boolean): Promise<void> {
  if (!yes && !io.canPrompt) {
    throw new UsageError(`--reset asks before it empties ${dir}, and there is no terminal to ask on`, 'add --yes to reset without asking');
  }
  const { dataFilesIn, databaseInUse, removeDataFiles } = await import('../../server/data-dir.js');
  if (dataFilesIn(dir).length === 0) {
    io.info(`Nothing to reset: ${dir} holds no svc data.`);
    return;
  }
  if (databaseInUse(dir)) {
    throw new CommandError(`another svc serve is using ${dir}; nothing was removed`, 'stop that server first (Ctrl-C where it runs), then reset');
  }
  if (!yes) {
    const sure = await (await io.prompts()).select(
      `Empty ${dir}? Its database (accounts, keys, sent and caught mail), secrets, admin token and seed go for good.`,
      [
        { name: 'No, keep everything', value: false },
        { name: 'Yes, remove them and start fresh', value: true },
      ],
    );
    if (!sure) throw new CommandError('reset declined; nothing was removed');
  }
  io.info(`Removed ${removeDataFiles(dir).join(', ')} from ${dir}.`);
}

/** Log lines wait until the ready line is out: it is the first line on stdout, also with --json logs. */
function holdUntilReady(log: Logger): { log: Logger; release(): void } {
  let held: (() => void)[] | null = [];
  const level =
    (name: keyof Logger): Logger[keyof Logger] =>
    (msg, fields) =>
      held ? held.push(() => log[name](msg, fields)) : log[name](msg, fields);
  return {
    log: { info: level('info'), warn: level('warn'), error: level('error') },
    release() {
      const lines = held ?? [];
      held = null;
      for (const line of lines) line();
    },
  };
}

/** On a terminal, the ready line for a person (stderr: stdout keeps only the line itself). */
function printSummary(io: IO, ready: ReadyLine, dataDir: string | undefined): void {
  const { bold, dim } = io.err;
  const row = (label: string, value: string) => `  ${bold(label.padEnd(9))} ${value}`;
  const lines = [
    '',
    `${bold('svc serve')} is running, ${dataDir ? `its data in ${dataDir}` : 'in memory (nothing is kept)'}.`,
    '',
    row('Inbox', ready.inbox),
    row('API', ready.api),
    row('SMTP', ready.smtp),
  ];
  const seed = ready.seed;
  if (seed) {
    lines.push(row('Login', `${seed.email}  password ${seed.password}`));
    lines.push(row('Test key', seed.api_key_test ?? 'revoked (svc keys create makes another)'));
  }
  lines.push('', `Try: ${tryNext(io, ready, dataDir)}`, dim('Ctrl-C stops it.'), '');
  for (const line of lines) io.info(line);
}

/** One command to run next, with the environment it needs when this server is not where svc looks by default. */
function tryNext(io: IO, ready: ReadyLine, dataDir: string | undefined): string {
  const base = ready.api === DEFAULT_BASE_URL ? '' : `SVC_BASE_URL=${ready.api} `;
  const seed = ready.seed;
  if (seed?.api_key_test) {
    return `${base}SVC_API_KEY=${seed.api_key_test} svc emails send --from hello@${seed.domain} --to you@example.org --subject Hello --text 'Your code is 482913'`;
  }
  if (seed) return `${base}svc login --email ${seed.email}`;
  // The client finds the admin token itself only in the default data directory.
  const admin = dataDir === defaultDataDir(io.env) ? '' : `SVC_ADMIN_TOKEN=${ready.admin_token} `;
  return `${base}${admin}svc inbox --follow`;
}

export function serveCommand(): Command {
  return new Command('serve')
    .description('Run the whole service locally: the /v1 API, an SMTP sink that catches every message, and the sandbox.')
    .option('--host <host>', 'address to bind', '127.0.0.1')
    .option('--port <n>', 'HTTP port (0 picks a free one)', intArg('--port', 0, 65535), 4010)
    .option('--smtp-port <n>', 'SMTP sink port (0 picks a free one)', intArg('--smtp-port', 0, 65535), 1025)
    .option('--data-dir <dir>', 'where the SQLite database and secrets live (default: the user data directory)')
    .option('--memory', 'keep everything in memory; nothing on disk')
    .addOption(new Option('--clock <mode>', 'service clock').choices(['real', 'manual']).default('real'))
    .addOption(new Option('--dns <mode>', 'where domain records are looked up').choices(['sandbox', 'system']).default('sandbox'))
    .option('--dns-server <host[:port]>', 'resolver for --dns system (repeatable)', (v: string, prev: string[] = []) => [...prev, v])
    .option('--open-signup', 'open registration (no invite needed)')
    .option('--no-seed', 'do not create the demo account in a fresh data directory')
    .option('--send-rate <n>', 'sending rate limit per workspace, requests per second', intArg('--send-rate', 1, 1_000_000), 50)
    .option('--relay <url>', 'smtp:// or smtps:// smarthost that live-mode mail is also relayed to', (v: string) => {
      if (!/^smtps?:\/\/[^/]+/.test(v)) throw new InvalidArgumentError('give an smtp:// or smtps:// URL, e.g. smtp://user:pass@mail.example.com:587');
      return v;
    })
    .option('--block-pattern <regex>', 'refuse messages matching this pattern with 451 (repeatable)', (v: string, prev: string[] = []) => {
      try {
        new RegExp(v, 'i');
      } catch {
        throw new InvalidArgumentError(`${v} is not a valid regular expression.`);
      }
      return [...prev, v];
    })
    .option('--tls-cert <file>', 'serve HTTPS with this certificate (with --tls-key)')
    .option('--tls-key <file>', 'private key for --tls-cert')
    .option('--allow-insecure-http', 'allow plain HTTP on a non-loopback host')
    .option('--trust-proxy', 'take the client address from X-Forwarded-For')
    .option('--json', 'log as JSON lines on stdout')
    .option('--reset', 'empty the data directory first: database, secrets, admin token and seed (asks unless --yes)')
    .option('--yes', 'with --reset: do not ask')
    .action(async (flags: ServeFlags) => {
      if (flags.yes && !flags.reset) throw new UsageError('--yes goes with --reset');
      if (flags.reset && flags.memory) throw new UsageError('--reset empties a data directory; with --memory nothing is kept to reset');
      return serveRun(flags, await processIO());
    });
}
