// `svc servers`: the `svc serve` processes running on this machine, as they registered themselves
// (lib/local-servers.ts), like `docker ps`. A client command given no base URL uses the one running when nothing
// answers on the default port (cli/discover.ts); this shows which that is, or which to pick.
import { Command } from 'commander';
import { examples, type Runner } from '../command.js';
import type { Context } from '../context.js';
import { printJson, printTable } from '../output.js';

export function serversCommand(runner: Runner): Command {
  const cmd = new Command('servers')
    .description(
      'List the local servers (`svc serve`) running on this machine: address, SMTP port, data directory, pid',
    )
    .action((_o: object, c: Command) => runner(c, serversRun, {}));
  return examples(
    cmd,
    'svc servers',
    'svc servers --json | jq -r ".data[0].api"',
    'SVC_BASE_URL=$(svc servers | cut -f2 | head -1) svc inbox',
  );
}

/** A running server as `svc servers` shows it: its registration without the admin token (a secret). */
export interface ListedServer {
  pid: number;
  api: string;
  smtp: string | null;
  data_dir: string | null;
  started_at: string;
}

export async function serversRun(ctx: Context): Promise<void> {
  const { localServers, reachableAt } = await import('../../lib/local-servers.js');
  const data: ListedServer[] = localServers(ctx.io.env).map((s) => ({
    pid: s.pid,
    api: reachableAt(s.api),
    smtp: s.smtp ? reachableAt(s.smtp.sink) : null,
    data_dir: s.data_dir,
    started_at: s.started_at,
  }));
  if (ctx.json) return printJson(ctx.io, { data });
  if (data.length === 0 && ctx.io.stdoutIsTTY) {
    ctx.io.info('No svc serve is running on this machine: start one with `svc serve`.');
    return;
  }
  await printTable(ctx.io, data, [
    { header: 'PID', value: (s) => s.pid },
    { header: 'API', value: (s) => s.api, id: true },
    { header: 'SMTP', value: (s) => s.smtp },
    { header: 'DATA DIR', value: (s) => s.data_dir ?? '(in memory)' },
    { header: 'STARTED', value: (s) => s.started_at, time: true },
  ]);
}

/**
 * What `svc serve` says when a port it was given is taken: by another `svc serve` (the registry knows its pid and data
 * directory), or by some other program. `err` is listen()'s EADDRINUSE, naming the address and port.
 */
export async function portTaken(
  ctx: Context,
  err: NodeJS.ErrnoException & { address?: string; port?: number; flag?: string },
  flags: { port: number; smtpPort: number; dataDir?: string },
): Promise<Error> {
  const { CommandError } = await import('../errors.js');
  const { describeLocalServer, localServers, portOf } = await import('../../lib/local-servers.js');
  const at = `${err.address?.includes(':') ? `[${err.address}]` : (err.address ?? 'localhost')}:${err.port}`;
  // A submission listener's error names its own flag (a default port that is taken is replaced, never refused).
  const flag =
    err.flag ?? (err.port === flags.port ? '--port' : err.port === flags.smtpPort ? '--smtp-port' : 'another port');
  const pass = flag === 'another port' ? 'give it another port' : `pass ${flag} 0 (a free one)`;
  const holder = localServers(ctx.io.env).find(
    (s) =>
      s.pid !== process.pid &&
      [s.api, s.smtp?.sink, s.smtp?.submission, s.smtp?.submissions].some((url) => url && portOf(url) === err.port),
  );
  if (!holder) {
    return new CommandError(`${at} is taken by another program`, `stop it, or ${pass}`);
  }
  const what =
    portOf(holder.api) === err.port
      ? at
      : holder.smtp && portOf(holder.smtp.sink) === err.port
        ? `${at} (its SMTP sink)`
        : `${at} (its SMTP submission)`;
  const dir = flags.dataDir && process.getBuiltinModule('node:path').resolve(flags.dataDir);
  if (dir && holder.data_dir === dir) {
    return new CommandError(
      `svc serve (pid ${holder.pid}) already runs on the data directory ${dir} and listens on ${what}`,
      'stop it (Ctrl-C where it runs), or give this one another --data-dir and --port 0',
    );
  }
  return new CommandError(
    `svc serve (${describeLocalServer(holder)}) already listens on ${what}`,
    `stop it (Ctrl-C where it runs, or kill ${holder.pid}), or ${pass}`,
  );
}
