import { Command, InvalidArgumentError, Option } from 'commander';
import type { ReadyLine } from '../../contract/sandbox.js';
import { UsageError } from '../errors.js';
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
}

/** `svc serve`: loads the server lazily, so client commands never load SQLite or the SMTP stack. */
export async function serveRun(flags: ServeFlags): Promise<void> {
  const { startServer, ServeUsageError } = await import('../../server/index.js');
  let server;
  try {
    server = await startServer({
      ...flags,
      dataDir: flags.memory ? undefined : (flags.dataDir ?? defaultDataDir()),
      memory: flags.memory,
    });
  } catch (err) {
    if (err instanceof ServeUsageError) throw new UsageError(err.message);
    const e = err as NodeJS.ErrnoException;
    if (e.code === 'EADDRINUSE') {
      throw new Error(`${e.message}: another program uses that port; pick another with --port/--smtp-port (0 picks a free one).`);
    }
    throw err;
  }
  const ready: ReadyLine = {
    ready: true,
    api: server.api,
    smtp: server.smtp,
    inbox: server.inbox,
    admin_token: server.adminToken,
    seed: server.seed,
  };
  process.stdout.write(JSON.stringify(ready) + '\n');
  await new Promise<void>((resolve) => {
    const stop = (signal: string) => {
      process.stderr.write(`${signal}: draining and closing…\n`);
      server.close().then(resolve, resolve);
    };
    process.once('SIGINT', () => stop('SIGINT'));
    process.once('SIGTERM', () => stop('SIGTERM'));
  });
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
    .action(async (flags: ServeFlags) => serveRun(flags));
}
