// `svc servers`: the `svc serve` processes running on this machine, as they registered themselves
// (lib/local-servers.ts), like `docker ps`. A client command given no base URL uses the one running when nothing
// answers on the default port (cli/discover.ts); this shows which that is, or which to pick.
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { basename } from 'node:path';
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
 * What `svc serve` says when a port it would listen on is taken: by another `svc serve` (the registry knows its pid and
 * data directory), or by some other program (its pid and name, where the system tells them). `err` is listen()'s
 * EADDRINUSE, naming the address and port, the flag that asked for it and the flags of every port that is taken.
 */
export async function portTaken(
  ctx: Context,
  err: NodeJS.ErrnoException & { address?: string; port?: number; flag?: string; flags?: string[] },
  flags: { port: number; smtpPort: number; dataDir?: string },
): Promise<Error> {
  const { CommandError } = await import('../errors.js');
  const { describeLocalServer, localServers, portOf } = await import('../../lib/local-servers.js');
  const at = `${err.address?.includes(':') ? `[${err.address}]` : (err.address ?? 'localhost')}:${err.port}`;
  const flag =
    err.flag ?? (err.port === flags.port ? '--port' : err.port === flags.smtpPort ? '--smtp-port' : undefined);
  // Every taken port's flag at once: a second `svc serve` meets all four of the first one's.
  const taken = err.flags ?? (flag ? [flag] : []);
  const pass =
    taken.length === 0
      ? 'give it another port'
      : `pass ${taken.map((f) => `${f} 0`).join(' and ')} (${taken.length === 1 ? 'a free one' : 'free ones'})`;
  const holder = localServers(ctx.io.env).find(
    (s) =>
      s.pid !== process.pid &&
      [s.api, s.smtp?.sink, s.smtp?.submission, s.smtp?.submissions, s.mailbox?.pop3, s.mailbox?.imap].some(
        (url) => url && portOf(url) === err.port,
      ),
  );
  if (!holder) {
    const program = err.port === undefined ? undefined : listenerOf(err.port);
    return new CommandError(
      `${at} is taken by another program${program ? ` (pid ${program.pid}, ${program.name})` : ''}`,
      `stop it, or ${pass}`,
    );
  }
  const what =
    portOf(holder.api) === err.port
      ? at
      : holder.smtp && portOf(holder.smtp.sink) === err.port
        ? `${at} (its SMTP sink)`
        : holder.mailbox?.pop3 && portOf(holder.mailbox.pop3) === err.port
          ? `${at} (its POP3)`
          : holder.mailbox?.imap && portOf(holder.mailbox.imap) === err.port
            ? `${at} (its IMAP)`
            : `${at} (its SMTP submission)`;
  const dir = flags.dataDir && process.getBuiltinModule('node:path').resolve(flags.dataDir);
  if (dir && holder.data_dir === dir) {
    return new CommandError(
      `svc serve (pid ${holder.pid}) already runs on the data directory ${dir} and listens on ${what}`,
      `stop it (Ctrl-C where it runs), or give this one another --data-dir and ${taken.map((f) => `${f} 0`).join(' ') || 'other ports'}`,
    );
  }
  return new CommandError(
    `svc serve (${describeLocalServer(holder)}) already listens on ${what}`,
    `stop it (Ctrl-C where it runs, or kill ${holder.pid}), or ${pass}`,
  );
}

/**
 * The process listening on TCP `port` on this machine, as Linux tells it in /proc (the socket's inode in the TCP
 * tables, then the process with a descriptor of that socket: a process of another user shows none); undefined
 * elsewhere, or when it is not found.
 */
function listenerOf(port: number): { pid: number; name: string } | undefined {
  const inodes = new Set<string>();
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let rows: string[];
    try {
      rows = readFileSync(table, 'utf8').split('\n').slice(1);
    } catch {
      continue;
    }
    for (const row of rows) {
      // sl, local_address (hex ADDRESS:PORT), rem_address, st (0A: listening), …, inode (the tenth field).
      const f = row.trim().split(/\s+/);
      if (f[3] === '0A' && Number.parseInt(f[1]?.split(':')[1] ?? '', 16) === port && f[9]) inodes.add(f[9]);
    }
  }
  if (inodes.size === 0) return undefined;
  const read = <T>(f: () => T): T | undefined => {
    try {
      return f();
    } catch {
      return undefined;
    }
  };
  for (const pid of readdirSync('/proc').filter((name) => /^\d+$/.test(name))) {
    for (const fd of read(() => readdirSync(`/proc/${pid}/fd`)) ?? []) {
      const inode = /^socket:\[(\d+)\]$/.exec(read(() => readlinkSync(`/proc/${pid}/fd/${fd}`)) ?? '')?.[1];
      if (!inode || !inodes.has(inode)) continue;
      // The program's name as it was started (argv[0]), else the kernel's name for it.
      const argv0 = read(() => readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0')[0]);
      const name = argv0 ? basename(argv0) : (read(() => readFileSync(`/proc/${pid}/comm`, 'utf8').trim()) ?? '?');
      return { pid: Number(pid), name };
    }
  }
  return undefined;
}
