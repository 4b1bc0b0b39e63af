import { Command, InvalidArgumentError, Option } from 'commander';
import type { ReadyLine } from '../../contract/seed.js';
import type { ServeOptions } from '../../server/index.js';
import type { Logger, LogLevel } from '../../lib/log.js';
import { parseSize } from '../../lib/size.js';
import type { Runner } from '../command.js';
import type { Context } from '../context.js';
import { CommandError, UsageError } from '../errors.js';
import type { IO } from '../io.js';
import { defaultDataDir } from '../paths.js';
import { isDiskFull } from '../../lib/disk-full.js';
import { parseDuration } from '../../lib/duration.js';
import { withServeFlags } from './serve-process.js';
import { printSummary } from './serve-summary.js';

function intArg(name: string, min: number, max: number) {
  return (v: string) => {
    const n = Number(v);
    if (!Number.isInteger(n) || n < min || n > max)
      throw new InvalidArgumentError(`${name} must be a whole number from ${min} to ${max}.`);
    return n;
  };
}

/** The largest `--max-message-size`: SQLite (as better-sqlite3 builds it) stores no value over 512 MiB. */
const LARGEST_MESSAGE = 500 * 1024 * 1024;

function sizeArg(name: string, min: number, max: number, range: string) {
  return (v: string) => {
    const n = parseSize(v);
    if (n === null)
      throw new InvalidArgumentError(`${name} takes a size such as 50MB, 10MiB, 500KB or a number of bytes.`);
    if (n < min || n > max) throw new InvalidArgumentError(`${name} must be ${range}.`);
    return n;
  };
}

/** `--max-messages N` or `off`: a count of at least 1 (0 would keep nothing; `off` keeps everything). */
function parseMaxMessages(v: string): number | 'off' {
  if (v === 'off') return v;
  const n = Number(v);
  if (!/^\d+$/.test(v) || !Number.isSafeInteger(n) || n < 1) {
    throw new InvalidArgumentError(
      'give a whole number of messages of at least 1 (e.g. 10000), or off to keep every one.',
    );
  }
  return n;
}

/** `--max-age 7d|12h|30m|90s|3600` (seconds without a unit) or `off`, in milliseconds. */
function parseMaxAge(v: string): number | 'off' {
  if (v === 'off') return v;
  // Whole numbers only (the general parser also takes 1.5h).
  const ms = /^\d+[smhd]?$/.test(v) ? parseDuration(v)! : Number.NaN;
  if (!(ms >= 1000) || ms > 100 * 365 * 86_400_000) {
    throw new InvalidArgumentError('give a duration such as 7d, 12h, 30m, 90s or a number of seconds, or off.');
  }
  return ms;
}

/** `--submission-port N|off`: a port (0: a free one), or off. */
function portOrOff(flag: string) {
  return (v: string): number | 'off' => {
    if (v === 'off') return v;
    const n = Number(v);
    if (!/^\d+$/.test(v) || n > 65535) throw new InvalidArgumentError(`${flag} takes a port from 0 to 65535, or off.`);
    return n;
  };
}

/** The server's options that `svc serve` always gives (commander supplies their defaults). */
type Given = 'host' | 'port' | 'smtpPort' | 'clock' | 'dns' | 'sendRate';
/** The server's options that it gives when their flags are used. */
type Optional =
  | 'dataDir'
  | 'memory'
  | 'dnsServer'
  | 'openSignup'
  | 'maxMessageSize'
  | 'smtpMaxConnections'
  | 'relay'
  | 'relayUrl'
  | 'relayFrom'
  | 'relayAllow'
  | 'relayMatching'
  | 'blockPattern'
  | 'tlsCert'
  | 'tlsKey'
  | 'allowInsecureHttp'
  | 'trustProxy'
  | 'metricsOpen'
  | 'json'
  | 'maxDbSize'
  | 'smtpStarttls'
  | 'smtpTlsCert'
  | 'smtpTlsKey'
  | 'spamd'
  | 'checkPrivateLinks'
  | 'allowPrivateAttachmentUrls'
  | 'rotateAdminToken';

/** `svc serve`'s flags: the server's own options (one type, the server's), and what the command does itself. */
export type ServeFlags = Required<Pick<ServeOptions, Given>> &
  Pick<ServeOptions, Optional> & {
    /** Caught messages kept (`off`: all). Commander turns a parser's null into '', hence the word. */
    maxMessages?: number | 'off';
    /** Milliseconds after which caught mail and `/v1` history go (`off` or absent: never). */
    maxAge?: number | 'off';
    /** SMTP submission's ports (`off`: none); absent, the defaults (2587, 2465). */
    submissionPort?: number | 'off';
    submissionsPort?: number | 'off';
    /** Where mail clients read caught mail (`off`: not served); absent, the defaults (1110, 1143). */
    pop3Port?: number | 'off';
    imapPort?: number | 'off';
    /** `--seed FILE` (a seed file; SVC_SEED when absent), `--no-seed` (false: no demo account); absent, the demo. */
    seed?: string | boolean;
    /** Empty the data directory first (after a confirmation, or `yes`). */
    reset?: boolean;
    /** The least level of a log line written (`quiet`: `warn`); the summary on a terminal is no log line. */
    logLevel?: LogLevel;
    quiet?: boolean;
    yes?: boolean;
  };

/**
 * `svc serve`: loads the server lazily, so client commands never load SQLite or the SMTP stack. Runs until SIGINT or
 * SIGTERM, then closes the server and returns.
 */
export async function serveRun(ctx: Context, flags: ServeFlags): Promise<void> {
  const { io } = ctx;
  withServeFlags();
  const { reset, yes, maxMessages, maxAge, logLevel, quiet, seed, ...options } = flags;
  const { submissionPort, submissionsPort, pop3Port, imapPort } = flags;
  const dataDir = flags.memory ? undefined : (flags.dataDir ?? defaultDataDir(io.env));
  if (reset) await resetDataDir(io, dataDir!, Boolean(yes));
  const { startServer, ServeUsageError } = await import('../../server/index.js');
  const { DataDirInUse } = await import('../../server/data-dir.js');
  const { createLogger } = await import('../../lib/log.js');
  const held = holdUntilReady(createLogger({ json: flags.json, level: logLevel ?? (quiet ? 'warn' : 'info') }));
  let server;
  try {
    server = await startServer({
      ...options,
      dataDir,
      memory: flags.memory,
      log: held.log,
      // On a terminal a line per request would scroll the summary away: they are debug lines there.
      requestLog: io.stderrIsTTY && !flags.json ? 'debug' : 'info',
      maxMessages: maxMessages === 'off' ? null : maxMessages,
      maxAge: maxAge === 'off' || maxAge === undefined ? null : maxAge,
      submissionPort: submissionPort === 'off' ? null : submissionPort,
      submissionsPort: submissionsPort === 'off' ? null : submissionsPort,
      pop3Port: pop3Port === 'off' ? null : pop3Port,
      imapPort: imapPort === 'off' ? null : imapPort,
      // A seed file replaces the demo account unless it says `demo_account: true` (server/seed-file.ts reads it).
      seed: seed !== false,
      seedFile: typeof seed === 'string' ? seed : io.env.SVC_SEED || undefined,
      // From the environment, the relay's credentials stay out of the process list.
      relayUrl: options.relayUrl ?? (io.env.SVC_RELAY_URL || undefined),
    });
  } catch (err) {
    held.release();
    if (err instanceof ServeUsageError) throw new UsageError(err.message);
    const e = err as NodeJS.ErrnoException;
    if (e.code === 'EADDRINUSE')
      throw await (await import('../commands/servers.js')).portTaken(ctx, e, { ...flags, dataDir });
    if (err instanceof DataDirInUse) {
      throw new CommandError(
        err.message,
        'stop that server first (Ctrl-C where it runs), or give this one another --data-dir',
      );
    }
    if (isDiskFull(err)) {
      throw new CommandError((err as Error).message, 'free space there (or give another --data-dir), then start again');
    }
    throw err;
  }
  // Registered before the ready line is out, so whoever reads it can run `svc inbox` at once; gone when it stops.
  const unregister = await register(io, server.ready, dataDir, Boolean(flags.smtpStarttls));
  // Handled before the ready line is out: whoever reads it may signal at once.
  const stopped = new Promise<void>((resolve) => {
    const stop = (signal: string) => {
      io.info(`${signal}: draining and closing…`);
      server
        .close()
        .finally(() => unregister?.())
        .then(resolve, resolve);
    };
    process.once('SIGINT', () => stop('SIGINT'));
    process.once('SIGTERM', () => stop('SIGTERM'));
  });
  // On a terminal the summary takes the ready line's place: the line is for a program, which reads it from a pipe (or
  // asks for it with --json); a person on a terminal reads the summary, on whichever of stdout and stderr is one.
  const forPerson = io.stdoutIsTTY && !flags.json;
  if (!forPerson) io.print(JSON.stringify(server.ready));
  held.release();
  if (forPerson || io.stderrIsTTY) {
    printSummary(io, server.ready, {
      dataDir,
      registered: unregister !== undefined,
      sinkStarttls: Boolean(flags.smtpStarttls),
      where: forPerson ? 'stdout' : 'stderr',
    });
  }
  // What the first delivery would load on its way, loaded now that the ready line is out (docs/local-server.md).
  server.warmUp();
  await stopped;
}

/**
 * Registers the server for the local client (lib/local-servers.ts): its API address → data directory and admin token.
 * A server that cannot register still serves (undefined); the client then needs the token given (SVC_ADMIN_TOKEN).
 */
async function register(
  io: IO,
  ready: ReadyLine,
  dataDir: string | undefined,
  sinkStarttls: boolean,
): Promise<(() => void) | undefined> {
  const { registerLocalServer } = await import('../../lib/local-servers.js');
  try {
    const unregister = registerLocalServer(
      {
        api: ready.api,
        data_dir: dataDir ? process.getBuiltinModule('node:path').resolve(dataDir) : null,
        admin_token: ready.admin_token,
        seed_test_key: ready.seed?.api_key_test ?? undefined,
        smtp: {
          sink: ready.smtp,
          sink_starttls: sinkStarttls,
          submission: ready.submission,
          submissions: ready.submissions,
          tls_cert: ready.smtp_tls.cert,
          tls_fingerprint: ready.smtp_tls.fingerprint_sha256,
        },
        mailbox: { pop3: ready.pop3, imap: ready.imap },
      },
      io.env,
    );
    // Also when the process ends some other way than by a signal (an uncaught error).
    process.once('exit', unregister);
    return unregister;
  } catch (err) {
    io.info(
      `warning: could not register this server for svc inbox and svc sandbox (${(err as Error).message}); give them SVC_ADMIN_TOKEN`,
    );
    return undefined;
  }
}

/**
 * `--reset`: removes what svc keeps in the data directory (database, secrets, admin token, seed) and nothing else,
 * after asking on a terminal; a script says `--yes`, since nothing can answer a question there.
 */
async function resetDataDir(io: IO, dir: string, yes: boolean): Promise<void> {
  if (!yes && !io.canPrompt) {
    throw new UsageError(
      `--reset asks before it empties ${dir}, and there is no terminal to ask on`,
      'add --yes to reset without asking',
    );
  }
  const { dataFilesIn, lockDataDir, DataDirInUse, removeDataFiles, LOCK_FILE, HOLDER_FILE } = await import(
    '../../server/data-dir.js'
  );
  if (dataFilesIn(dir).length === 0) {
    io.info(`Nothing to reset: ${dir} holds no svc data.`);
    return;
  }
  let lock;
  try {
    lock = lockDataDir(dir);
  } catch (err) {
    if (!(err instanceof DataDirInUse)) throw err;
    throw new CommandError(
      `${err.message}; nothing was removed`,
      'stop that server first (Ctrl-C where it runs), then reset',
    );
  }
  try {
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
    // Removed under the lock, so no server can start on the directory half-way through.
    const removed = removeDataFiles(dir).filter((name) => name !== LOCK_FILE && name !== HOLDER_FILE);
    io.info(`Removed ${removed.join(', ')} from ${dir}.`);
  } finally {
    lock.release();
  }
}

/** Log lines wait until the ready line is out: it is the first line on stdout, also with --json logs. */
function holdUntilReady(log: Logger): { log: Logger; release(): void } {
  let held: (() => void)[] | null = [];
  const level =
    (name: keyof Logger): Logger[keyof Logger] =>
    (msg, fields) =>
      held ? held.push(() => log[name](msg, fields)) : log[name](msg, fields);
  return {
    log: { debug: level('debug'), info: level('info'), warn: level('warn'), error: level('error') },
    release() {
      const lines = held ?? [];
      held = null;
      for (const line of lines) line();
    },
  };
}

export function serveCommand(runner: Runner): Command {
  return (
    new Command('serve')
      .description(
        'Run the whole service locally: the /v1 API, an SMTP sink that catches every message, and the sandbox.',
      )
      .option('--host <host>', 'address to bind', '127.0.0.1')
      .option('--port <n>', 'HTTP port (0 picks a free one)', intArg('--port', 0, 65535), 4010)
      .option('--smtp-port <n>', 'SMTP sink port (0 picks a free one)', intArg('--smtp-port', 0, 65535), 1025)
      .option(
        '--submission-port <n|off>',
        'SMTP submission with STARTTLS and API-key AUTH (0 picks a free one; default: 2587)',
        portOrOff('--submission-port'),
      )
      .option(
        '--submissions-port <n|off>',
        'SMTP submission with implicit TLS (0 picks a free one; default: 2465)',
        portOrOff('--submissions-port'),
      )
      .option(
        '--pop3-port <n|off>',
        'POP3 for mail clients: any username, an API key or the admin token as the password (0 picks a free one; default: 1110)',
        portOrOff('--pop3-port'),
      )
      .option(
        '--imap-port <n|off>',
        'IMAP for mail clients, with the same logins (0 picks a free one; default: 1143)',
        portOrOff('--imap-port'),
      )
      .option(
        '--smtp-tls-cert <file>',
        'certificate for SMTP TLS (default: one made for localhost, kept in the data directory)',
      )
      .option('--smtp-tls-key <file>', 'private key for --smtp-tls-cert')
      .option(
        '--smtp-starttls',
        'the sink offers STARTTLS too, with the SMTP TLS certificate: a client that upgrades whenever it is offered (nodemailer, Go, PHP) must then trust it',
      )
      .option(
        '--no-smtp-starttls',
        'the default: the sink offers no STARTTLS, a client needs only its host and port (kept for scripts that name it)',
      )
      .option(
        '--max-message-size <size>',
        'largest message the SMTP sink takes (50MB, 10MiB, 500KB or bytes); a larger one is refused with 552 (default: 50MB)',
        sizeArg('--max-message-size', 1, LARGEST_MESSAGE, 'from 1 byte to 500MiB'),
      )
      .option(
        '--smtp-max-connections <n>',
        'SMTP connections open at once; more are refused with 421 (default: 100)',
        intArg('--smtp-max-connections', 1, 100_000),
      )
      .option('--data-dir <dir>', 'where the SQLite database and secrets live (default: the user data directory)')
      .option('--memory', 'keep everything in memory; nothing on disk')
      .addOption(new Option('--clock <mode>', 'service clock').choices(['real', 'manual']).default('real'))
      .addOption(
        new Option('--dns <mode>', 'where domain records are looked up')
          .choices(['sandbox', 'system'])
          .default('sandbox'),
      )
      .option(
        '--dns-server <host[:port]>',
        'resolver for --dns system (repeatable)',
        (v: string, prev: string[] = []) => [...prev, v],
      )
      .option('--open-signup', 'open registration (no invite needed)')
      .option(
        '--seed <file>',
        'a seed file (YAML or JSON): users, workspaces, domains, API keys, webhook endpoints, suppressions made to exist on every start; replaces the demo account (or SVC_SEED)',
      )
      .option('--no-seed', 'do not create the demo account in a fresh data directory')
      .option(
        '--send-rate <n>',
        'sending rate limit per workspace, requests per second',
        intArg('--send-rate', 1, 1_000_000),
        50,
      )
      // The relay's URLs are checked by the server (options.ts relaySettings), whose errors never show the password.
      .option(
        '--relay-url <url>',
        'relay that releases and relay rules send caught mail through: smtp[s]://user:pass@host:port, ?tls=skip-verify for a self-signed one (or SVC_RELAY_URL)',
      )
      .option('--relay-from <address>', "envelope sender of what the relay sends (default: the caught message's own)")
      .option(
        '--relay-allow <pattern>',
        'recipients releases and relay rules may reach: an address or a glob such as *@example.com (repeatable; default: anyone)',
        (v: string, prev: string[] = []) => [...prev, v],
      )
      .option(
        '--relay-matching <pattern>',
        'relay live mail to its recipients matching this glob as it is caught (repeatable; test-key mail never)',
        (v: string, prev: string[] = []) => [...prev, v],
      )
      .option('--relay <url>', "the same as --relay-url URL --relay-matching '*': every live message relayed as caught")
      .option(
        '--block-pattern <regex>',
        'refuse messages matching this pattern with 451 (repeatable)',
        (v: string, prev: string[] = []) => {
          try {
            new RegExp(v, 'i');
          } catch {
            throw new InvalidArgumentError(`${v} is not a valid regular expression.`);
          }
          return [...prev, v];
        },
      )
      .option('--tls-cert <file>', 'serve HTTPS with this certificate (with --tls-key)')
      .option('--tls-key <file>', 'private key for --tls-cert')
      .option('--allow-insecure-http', 'allow plain HTTP on a non-loopback host')
      .option('--trust-proxy', 'take the client address from X-Forwarded-For')
      .option('--metrics-open', 'serve GET /metrics without the admin token (only on a loopback --host)')
      .option(
        '--max-db-size <size>',
        'largest the database may grow (500MB, 2GiB…); writes past it are refused as on a full disk',
        sizeArg('--max-db-size', 1_000_000, Number.MAX_SAFE_INTEGER, 'at least 1MB'),
      )
      // No commander default: the server's (10,000) applies, and the contract's zod stays out of `svc --version`.
      .option('--max-messages <n|off>', 'caught messages kept; the oldest go first (default: 10000)', parseMaxMessages)
      .option(
        '--max-age <duration|off>',
        'remove caught mail, /v1 messages and events older than this: 7d, 12h, 30m, seconds (default: off)',
        parseMaxAge,
      )
      .option('--spamd <host:port>', 'a SpamAssassin spamd for the spam check of caught mail (default: none, skipped)')
      .option('--check-private-links', 'let the links check of caught mail reach loopback and private addresses')
      .option(
        '--allow-private-attachment-urls',
        'let attachment urls lead to private ranges (RFC 1918, unique-local IPv6, CGNAT); never to this server',
      )
      .option('--json', 'log as JSON lines on stdout')
      .option('-q, --quiet', 'log only warnings and errors (--log-level warn); the summary on a terminal stays')
      .addOption(
        new Option(
          '--log-level <level>',
          'the least level logged; request lines are debug on a terminal, info otherwise (default: info)',
        ).choices(['debug', 'info', 'warn', 'error']),
      )
      .option('--reset', 'empty the data directory first: database, secrets, admin token and seed (asks unless --yes)')
      .option('--yes', 'with --reset: do not ask')
      .option(
        '--rotate-admin-token',
        'make the data directory a new admin token: every inbox page signed in with the last one is signed out',
      )
      .action((flags: ServeFlags, c: Command) => {
        if (flags.yes && !flags.reset) throw new UsageError('--yes goes with --reset');
        if (flags.reset && flags.memory)
          throw new UsageError('--reset empties a data directory; with --memory nothing is kept to reset');
        if (flags.rotateAdminToken && flags.memory)
          throw new UsageError(
            "--rotate-admin-token replaces a data directory's token; with --memory every start makes a new one",
          );
        return runner(c, serveRun, flags);
      })
  );
}
