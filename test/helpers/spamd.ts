// A real SpamAssassin spamd for the spam check's tests, started on a free loopback port as the browser tests start
// Chromium (Debian's `spamassassin` package: /usr/sbin/spamd; SPAMD_PATH names another). Ready once it says it
// listens; stopped with the test.
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createServer } from 'node:net';

export interface Spamd {
  /** `127.0.0.1:PORT`, for `--spamd`. */
  address: string;
  close(): Promise<void>;
}

/** A port nothing listens on now. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

export async function startSpamd(): Promise<Spamd> {
  const bin = process.env.SPAMD_PATH ?? '/usr/sbin/spamd';
  if (!existsSync(bin)) {
    throw new Error(`spamd is not at ${bin}: install it (Debian: apt-get install spamassassin), or set SPAMD_PATH`);
  }
  const port = await freePort();
  const child: ChildProcess = spawn(
    bin,
    [
      `--listen=127.0.0.1:${port}`,
      '--allowed-ips=127.0.0.1',
      '--max-children=1',
      '--min-children=1',
      '--nouser-config',
      '--syslog=stderr',
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  let log = '';
  await new Promise<void>((resolve, reject) => {
    child.stderr!.setEncoding('utf8');
    child.stderr!.on('data', (d: string) => {
      log += d;
      if (/server successfully spawned child process/.test(log)) resolve();
    });
    child.once('exit', (code) => reject(new Error(`spamd exited (${code}) before it was ready:\n${log}`)));
  });
  child.stderr!.resume();
  return {
    address: `127.0.0.1:${port}`,
    async close() {
      child.kill('SIGTERM');
      await exited;
    },
  };
}
