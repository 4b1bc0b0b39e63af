import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer } from 'node:net';
import { createInterface } from 'node:readline';
import { SERVE_ENV, SERVE_NODE_FLAGS } from '../src/cli/serve/serve-process.js';
import type { ReadyLine, Seed } from '../src/contract/seed.js';

type Ready = ReadyLine & { seed: Seed };

/**
 * Starts `svc serve` from the built package in a child process, as `npx svc-mail serve` runs it (with the environment and
 * node flags it gives itself, here given at once, so that Node 20 runs with them too), and waits for the ready line.
 * `opts.env` adds to its environment (`SVC_STOCK_SEAMS: '1'`: the library seams' stock paths). `BENCH_NODE_ARGS` adds
 * node flags (e.g. `--cpu-prof --cpu-prof-dir=prof` to profile a run). `opts.build` runs another build's `bin/svc.js`
 * (the root of another checkout, built): a before-and-after comparison in one run. The data directory (a new one unless
 * given) is removed when it stops.
 */
export async function spawnServe(
  args: string[] = [],
  opts: { dataDir?: string; env?: Record<string, string>; build?: string } = {},
): Promise<{ ready: Ready; proc: ChildProcess; stop(): Promise<void> }> {
  const dataDir = opts.dataDir ?? mkdtempSync(join(tmpdir(), 'svc-bench-'));
  const nodeArgs = (process.env.BENCH_NODE_ARGS ?? '').split(' ').filter(Boolean);
  const bin = opts.build ? join(opts.build, 'bin/svc.js') : 'bin/svc.js';
  // Every listener on a port of its own; an earlier build lacks some of them (POP3 and IMAP came later).
  const ports = ['--port', '--smtp-port', '--submission-port', '--submissions-port', '--pop3-port', '--imap-port'];
  const serveArgs = [
    'serve',
    ...ports.filter((flag) => takes(bin, flag)).flatMap((flag) => [flag, '0']),
    '--data-dir',
    dataDir,
    ...args,
  ];
  const proc = spawn(process.execPath, [...SERVE_NODE_FLAGS, ...nodeArgs, bin, ...serveArgs], {
    env: { ...process.env, ...SERVE_ENV, ...opts.env },
    stdio: ['ignore', 'pipe', process.env.BENCH_STDERR ? 'inherit' : 'ignore'],
  });
  const lines = createInterface({ input: proc.stdout! });
  const ready = await new Promise<Ready>((resolve, reject) => {
    proc.once('exit', (code) => reject(new Error(`svc serve exited with ${code}`)));
    lines.once('line', (line) => resolve(JSON.parse(line)));
  });
  return {
    ready,
    proc,
    stop: () =>
      new Promise((resolve) => {
        proc.once('exit', () => {
          rmSync(dataDir, { recursive: true, force: true });
          resolve();
        });
        proc.kill('SIGTERM');
      }),
  };
}

const helps = new Map<string, string>();
/** Whether `svc serve` of the build at `bin` takes `flag` (by its --help, read once a build). */
function takes(bin: string, flag: string): boolean {
  let help = helps.get(bin);
  if (help === undefined) {
    help = execFileSync(process.execPath, [bin, 'serve', '--help'], { encoding: 'utf8' });
    helps.set(bin, help);
  }
  return help.includes(`${flag} `);
}

/** CPU seconds (user + system) used so far according to a /proc stat file (Linux). */
async function statCpuSeconds(path: string): Promise<number> {
  const { readFile } = await import('node:fs/promises');
  const fields = (await readFile(path, 'utf8')).split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100; // utime, stime in clock ticks (100/s)
}

/** CPU seconds a process has used so far, all its threads. */
export const cpuSeconds = (pid: number) => statCpuSeconds(`/proc/${pid}/stat`);

/** CPU seconds of a process's main thread (its first task) alone. */
export const mainThreadCpuSeconds = (pid: number) => statCpuSeconds(`/proc/${pid}/task/${pid}/stat`);

/** Resident set size of a process in MB, from /proc (Linux). */
export async function rssMb(pid: number): Promise<number> {
  const { readFile } = await import('node:fs/promises');
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const kb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0);
  return kb / 1024;
}

export function html2k(): string {
  const para =
    '<p>Thanks for your order. Your receipt and the tracking details are below; reply to this email if anything looks wrong.</p>';
  let html = '<html><body><h1>Your order</h1>';
  while (html.length < 2000) html += para;
  return `${html}<a href="https://example.com/orders/1">View order</a></body></html>`;
}

/** The machine's CPU time so far (all cores, clock ticks), with the part a hypervisor gave to other guests (steal). */
export async function machineTicks(): Promise<{ total: number; steal: number }> {
  const { readFile } = await import('node:fs/promises');
  const cpu = (await readFile('/proc/stat', 'utf8')).split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
  return { total: cpu.slice(0, 8).reduce((a, b) => a + b, 0), steal: cpu[7] ?? 0 };
}

/**
 * How much of the machine's time a hypervisor gave to other guests between two readings, in words for a bench's
 * report: on a shared virtual machine the same build measures a third slower when its neighbours are busy.
 */
export function stealLine(before: { total: number; steal: number }, after: { total: number; steal: number }): string {
  const pct = ((after.steal - before.steal) / Math.max(1, after.total - before.total)) * 100;
  return `${pct.toFixed(0)} % of the machine's time went to other guests of the hypervisor`;
}

/**
 * How fast this machine is right now, in words for a bench's report: the time of one 2048-bit RSA signature (the
 * DKIM signature every message gets), best of three rounds. A shared virtual machine's speed drifts by a third
 * within minutes; a figure read beside this one can be compared with another run's.
 */
export async function speedLine(): Promise<string> {
  const { generateKeyPairSync, sign } = await import('node:crypto');
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  let best = Infinity;
  for (let round = 0; round < 3; round++) {
    const t = performance.now();
    for (let i = 0; i < 50; i++) sign('sha256', Buffer.from(`message ${i}`), privateKey);
    best = Math.min(best, (performance.now() - t) / 50);
  }
  return `${best.toFixed(3)} ms a 2048-bit RSA signature just now (bench/README.md's figures: 0.27 fast – 0.54 slow)`;
}

/**
 * A pooled nodemailer transport to the sink of a server spawnServe started (4 connections, logged in with its seeded test
 * key, so what it sends is filed under the seeded workspace): how the mailbox benches fill a mailbox.
 */
export async function sinkTransport(svc: { ready: Ready }) {
  const nodemailer = (await import('nodemailer')).default;
  return nodemailer.createTransport({
    host: '127.0.0.1',
    port: Number(new URL(svc.ready.smtp).port),
    pool: true,
    maxConnections: 4,
    maxMessages: Number.POSITIVE_INFINITY,
    ignoreTLS: true,
    auth: { user: 'bench', pass: svc.ready.seed.api_key_test! },
  });
}

/**
 * The resident memory of process `pid`, read now and then every 20 ms until `stop()`, which answers the first reading
 * and the highest.
 */
export async function sampleRss(pid: number): Promise<{ stop(): Promise<{ before: number; peak: number }> }> {
  const before = await rssMb(pid);
  let peak = before;
  let sampling = true;
  const sampler = (async () => {
    while (sampling) {
      peak = Math.max(peak, await rssMb(pid));
      await new Promise((r) => setTimeout(r, 20));
    }
  })();
  return {
    async stop() {
      sampling = false;
      await sampler;
      return { before, peak };
    },
  };
}

/** The p-th percentile (0–100) of figures sorted in ascending order; NaN for none. */
export const percentile = (sorted: number[], p: number): number =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;

/** A port of 127.0.0.1 free just now (a peer is started on it). */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}
