// The local servers running on this machine, as the command line finds them. While `svc serve` runs it keeps one
// small file in a directory of the user's own (0700; each file 0600): its API address, data directory, admin token and
// pid. `svc inbox` and `svc sandbox …` look up the server their base URL points at, on whatever port and data
// directory it runs. Written by the server side, read by the client side: this module loads neither.
import { chmodSync, lstatSync, mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { writePrivateFile } from './private-file.js';

type Env = Record<string, string | undefined>;

/** One running `svc serve`, as it registered itself. */
export interface LocalServer {
  pid: number;
  /** The API's base URL as the ready line gives it, `http://127.0.0.1:4010/v1`. */
  api: string;
  /** Its data directory; null for `--memory`. */
  data_dir: string | null;
  admin_token: string;
  /** The test key it was seeded with (the ready line's), for the hint of a run given no key; absent when none works. */
  seed_test_key?: string;
  started_at: string;
  /** Its SMTP listeners (the ready line's) and TLS certificate, for `svc smtp`; absent in entries of older versions. */
  smtp?: {
    sink: string;
    /** Whether the sink offers STARTTLS (`--smtp-starttls`); absent in entries of older versions. */
    sink_starttls?: boolean;
    submission: string | null;
    submissions: string | null;
    tls_cert: string | null;
    tls_fingerprint: string;
  };
  /** Where mail clients read caught mail (the ready line's `pop3`, `imap`), for `svc mailbox`; absent in older entries. */
  mailbox?: { pop3: string | null; imap: string | null };
}

/**
 * Where running servers register: SVC_RUNTIME_DIR, else `svc` in the session's runtime directory ($XDG_RUNTIME_DIR,
 * emptied at logout and reboot), else a directory in the user's state or cache directory. A file left by a server that
 * died is recognised by its pid and removed by the next look.
 */
export function localServersDir(env: Env = process.env): string {
  if (env.SVC_RUNTIME_DIR) return env.SVC_RUNTIME_DIR;
  if (env.XDG_RUNTIME_DIR) return join(env.XDG_RUNTIME_DIR, 'svc');
  if (process.platform === 'darwin') return join(homedir(), 'Library', 'Caches', 'svc', 'run');
  if (process.platform === 'win32') return join(env.LOCALAPPDATA ?? join(homedir(), 'AppData', 'Local'), 'svc', 'run');
  return join(env.XDG_STATE_HOME ?? join(homedir(), '.local', 'state'), 'svc', 'run');
}

const fileOf = (dir: string, pid: number) => join(dir, `serve-${pid}.json`);

/**
 * Registers this process's server; returns what removes the entry again (safe to call more than once). The admin
 * token is a secret: the directory is made (or narrowed to) 0700 and the file is written 0600 and renamed into place,
 * so no reader sees half of it.
 */
export function registerLocalServer(
  server: Omit<LocalServer, 'pid' | 'started_at'>,
  env: Env = process.env,
): () => void {
  const dir = localServersDir(env);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const info = lstatSync(dir);
  if (!info.isDirectory())
    throw new Error(
      `${dir} is not a directory; svc serve keeps the address and admin token of each running server there`,
    );
  if (info.mode & 0o077) chmodSync(dir, 0o700);
  const entry: LocalServer = { pid: process.pid, ...server, started_at: new Date().toISOString() };
  const file = fileOf(dir, process.pid);
  writePrivateFile(file, `${JSON.stringify(entry)}\n`);
  return () => rmSync(file, { force: true });
}

/** Whether a process with this pid is alive (one of another user's counts: its pid is taken). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Every server registered and still running, the oldest first; entries of servers that are gone are removed on the
 * way.
 */
export function localServers(env: Env = process.env): LocalServer[] {
  const dir = localServersDir(env);
  let names: string[];
  try {
    names = readdirSync(dir).filter((n) => /^serve-\d+\.json$/.test(n));
  } catch {
    return [];
  }
  const found: LocalServer[] = [];
  for (const name of names) {
    let entry: LocalServer;
    try {
      entry = JSON.parse(readFileSync(join(dir, name), 'utf8')) as LocalServer;
    } catch {
      continue; // being replaced right now, or not ours to judge
    }
    if (typeof entry.pid !== 'number' || typeof entry.api !== 'string' || typeof entry.admin_token !== 'string')
      continue;
    if (!alive(entry.pid)) {
      rmSync(join(dir, name), { force: true });
      continue;
    }
    found.push(entry);
  }
  return found.sort((a, b) => String(a.started_at).localeCompare(String(b.started_at)));
}

/**
 * The running server a base URL reaches: the one listening on its port (and scheme). A server bound to every address
 * (`0.0.0.0`) answers on 127.0.0.1 as well, so the port decides; one registered under the very host of the URL wins
 * over another on the same port.
 */
export function findLocalServer(baseUrl: string, env: Env = process.env): LocalServer | undefined {
  const wanted = parse(baseUrl);
  if (!wanted) return undefined;
  const onPort = localServers(env).filter((s) => {
    const u = parse(s.api);
    return u !== undefined && u.protocol === wanted.protocol && u.port === wanted.port;
  });
  return onPort.find((s) => parse(s.api)!.hostname === wanted.hostname) ?? onPort[0];
}

/**
 * The address a client on this machine reaches a server at: one bound to every address (`0.0.0.0`, `::`) answers on
 * loopback.
 */
export function reachableAt(url: string): string {
  return url.replace('://0.0.0.0:', '://127.0.0.1:').replace('://[::]:', '://[::1]:');
}

/** The port of a server's URL (`http://127.0.0.1:4010/v1` → 4010), or undefined. */
export function portOf(url: string | undefined): number | undefined {
  const port = url === undefined ? undefined : parse(url)?.port;
  return port === undefined ? undefined : Number(port);
}

/** A server in a few words: `pid 4242, data dir ./data` (or `in memory`). */
export function describeLocalServer(s: LocalServer): string {
  return `pid ${s.pid}, ${s.data_dir ? `data dir ${s.data_dir}` : 'in memory'}`;
}

/** A URL with its port made explicit (`http://localhost/v1` is port 80), or undefined. */
function parse(url: string): { protocol: string; hostname: string; port: string } | undefined {
  try {
    const u = new URL(url);
    return { protocol: u.protocol, hostname: u.hostname, port: u.port || (u.protocol === 'https:' ? '443' : '80') };
  } catch {
    return undefined;
  }
}
