// A run given no base URL (no --base-url, SVC_BASE_URL or profile's) talks to http://127.0.0.1:4010/v1, where
// `svc serve` listens by default. A server started on another port registers itself (lib/local-servers.ts): when
// nothing answers on the default port and exactly one such server runs, the run uses it; when several do, it names
// them and how to pick one. Looked at only when the base URL is asked for, and the default port is tried only when a
// server is registered elsewhere: a run that has none registered, or one on the default port, pays a directory read.
import { DEFAULT_BASE_URL } from './config.js';
import { UsageError } from './errors.js';
import type { Env, IO } from './io.js';
import type { LocalServer } from '../lib/local-servers.js';

/** The local server a run given no base URL uses instead of the default, or undefined to keep the default. */
export async function discoverLocalServer(
  io: IO,
  env: Env,
  o: { quiet?: boolean } = {},
): Promise<{ url: string; server: LocalServer } | undefined> {
  const { describeLocalServer, localServers, portOf, reachableAt } = await import('../lib/local-servers.js');
  const running = localServers(env);
  if (running.length === 0) return undefined;
  const { hostname, port } = new URL(DEFAULT_BASE_URL);
  if (running.some((s) => portOf(s.api) === Number(port))) return undefined;
  // Something that did not register (another program, a server that could not) may answer there all the same.
  if (await answers(hostname, Number(port))) return undefined;
  const [server] = running;
  if (server && running.length === 1) {
    const url = reachableAt(server.api);
    if (io.stderrIsTTY && !o.quiet)
      io.info(
        `${io.err.dim('note:')} nothing answers at ${DEFAULT_BASE_URL}; using the svc serve at ${url} (${describeLocalServer(server)})`,
      );
    return { url, server };
  }
  const listed = running.map((s) => `${reachableAt(s.api)} (${describeLocalServer(s)})`).join(', ');
  throw new UsageError(
    `nothing answers at ${DEFAULT_BASE_URL}, and ${running.length} svc serve run on this machine: ${listed}`,
    `pick one with --base-url URL or SVC_BASE_URL=URL (\`svc servers\` lists them)`,
  );
}

/** Whether something accepts a TCP connection at host:port; a refusal is the one clear "no". */
function answers(host: string, port: number): Promise<boolean> {
  const net = process.getBuiltinModule('node:net');
  return new Promise((resolve) => {
    const socket = net.connect({ host, port });
    const done = (yes: boolean) => {
      socket.destroy();
      resolve(yes);
    };
    socket.setTimeout(1_000, () => done(true));
    socket.once('connect', () => done(true));
    socket.once('error', (err: NodeJS.ErrnoException) => done(err.code !== 'ECONNREFUSED'));
  });
}
