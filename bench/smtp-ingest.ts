// bench/smtp-ingest: how fast mail handed over SMTP is caught, by svc's sink beside postfix's smtp-sink (a C sink that
// stores nothing: the ceiling of this machine), MailDev (a Node mail catcher) and svc's floor (smtp-floor-server.ts:
// the sink's SMTP library and connection class with nothing behind them), measured in the same run.
//
// 20 sessions at once send BENCH_MESSAGES (default 20,000) messages of 4 KB, in two modes:
//   reused connections: each session sends message after message on one connection (a pooled client);
//   per connection:     a new connection for every message (nodemailer without `pool`, most application code).
// The client speaks raw SMTP on sockets, pipelining MAIL, RCPT and DATA in one write (every peer offers PIPELINING), so
// it costs little next to the servers; its own CPU is printed beside theirs. Every peer starts afresh for each
// measurement, and the peers take turns within a round, so a slow stretch of the machine falls on all of them.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { cpuSeconds, freePort, machineTicks, spawnServe, speedLine, stealLine } from './common.js';
import { haveMaildev, MAILDEV_DIR, MAILDEV_VERSION, startMaildev } from './maildev.js';

const TOTAL = Number(process.env.BENCH_MESSAGES ?? process.argv[2] ?? 20_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const SESSIONS = Number(process.env.BENCH_SESSIONS ?? 20);
/** A measurement stops after this long and reports what was done by then (a peer at 200 msg/s would take 100 s). */
const MAX_SECONDS = Number(process.env.BENCH_MAX_SECONDS ?? 60);
/** Flags added to `svc serve` (e.g. `--max-messages off`, to see what retention costs). */
const SVC_ARGS = (process.env.BENCH_SVC_ARGS ?? '').split(' ').filter(Boolean);
/** Only these peers (comma-separated names, e.g. `svc` to profile svc alone); all by default. */
const ONLY = process.env.BENCH_PEERS?.split(',').map((p) => p.trim());
const MESSAGE_BYTES = 4096;
const SMTP_SINK = '/usr/sbin/smtp-sink';

type Mode = 'reused' | 'per-connection';
/** BENCH_MODES=reused (or per-connection) measures that mode alone. */
const MODES: { mode: Mode; title: string }[] = (
  [
    { mode: 'reused', title: 'reused connections' },
    { mode: 'per-connection', title: 'per connection' },
  ] as const
).filter((m) => !process.env.BENCH_MODES || process.env.BENCH_MODES.split(',').includes(m.mode));

interface Running {
  port: number;
  pid: number;
  /** How many messages the peer holds now (svc only: the others are not asked). */
  stored?: () => number;
  stop(): Promise<void>;
}
interface Peer {
  name: string;
  /** Starts the peer afresh; `env` adds to svc's environment. */
  start(env?: Record<string, string>): Promise<Running>;
}

// ---------------------------------------------------------------------------------------------------------------------
// The client

/** One SMTP connection: writes commands, reads replies (a reply is complete at its line with a space after the code). */
class Conn {
  private buffer = '';
  private waiting: {
    n: number;
    codes: number[];
    resolve: (codes: number[]) => void;
    reject: (e: Error) => void;
  } | null = null;
  private failed: Error | null = null;
  private lines: string[] = [];

  private constructor(private readonly socket: Socket) {
    socket.setNoDelay(true);
    socket.setEncoding('latin1');
    socket.on('data', (d: string) => this.onData(d));
    socket.on('error', (e) => this.fail(e));
    socket.on('close', () => this.fail(new Error('connection closed by the server')));
  }

  static open(port: number): Promise<Conn> {
    return new Promise((resolve, reject) => {
      const socket = connect(port, '127.0.0.1');
      socket.once('connect', () => {
        socket.off('error', reject);
        resolve(new Conn(socket));
      });
      socket.once('error', reject);
    });
  }

  private onData(d: string): void {
    this.buffer += d;
    let nl: number;
    while ((nl = this.buffer.indexOf('\n')) >= 0) {
      const line = this.buffer.slice(0, nl + 1);
      this.buffer = this.buffer.slice(nl + 1);
      this.lines.push(line);
      if (line.charCodeAt(3) !== 45 /* '-': more lines of this reply follow */) {
        const code = Number(line.slice(0, 3));
        const w = this.waiting;
        if (!w) {
          this.fail(new Error(`unexpected reply: ${line.trim()}`));
          return;
        }
        w.codes.push(code);
        if (w.codes.length === w.n) {
          this.waiting = null;
          w.resolve(w.codes);
        }
      }
    }
  }

  private fail(e: Error): void {
    this.failed ??= e;
    const w = this.waiting;
    this.waiting = null;
    w?.reject(e);
  }

  /** Writes `data` (may be empty) and resolves with the codes of the next `n` replies. */
  send(data: string, n: number): Promise<number[]> {
    if (this.failed) return Promise.reject(this.failed);
    this.lines = [];
    const p = new Promise<number[]>((resolve, reject) => (this.waiting = { n, codes: [], resolve, reject }));
    if (data) this.socket.write(data, 'latin1');
    return p;
  }

  /** `send`, requiring these codes. */
  async expect(data: string, codes: number[]): Promise<void> {
    const got = await this.send(data, codes.length);
    if (got.some((c, i) => c !== codes[i]))
      throw new Error(`expected ${codes.join(' ')}, got: ${this.lines.join('').trim()}`);
  }

  /** QUIT, then waits for the server to close (the server closes first, so its side holds the TIME_WAIT). */
  async quit(): Promise<void> {
    const closed = new Promise<void>((resolve) => this.socket.once('close', () => resolve()));
    this.failed ??= new Error('quit');
    this.socket.write('QUIT\r\n');
    await closed;
  }
}

const BODY =
  'Thanks for your order. Your receipt and the tracking details are below; reply if anything looks wrong.\r\n'.repeat(
    50,
  );

/** A 4 KB message with a Message-ID of its own. */
function message(run: string, n: number): string {
  const head =
    `From: Shop <orders@bench.test>\r\nTo: <customer${n}@example.test>\r\nSubject: Your order ${n}\r\n` +
    `Message-ID: <${run}.${n}@bench.test>\r\nDate: Mon, 23 Nov 2026 12:00:00 +0000\r\nMIME-Version: 1.0\r\n` +
    'Content-Type: text/plain; charset=utf-8\r\n\r\n';
  return `${head + BODY.slice(0, MESSAGE_BYTES - head.length - 2)}\r\n`;
}

/** One message on an open connection: MAIL, RCPT and DATA in one write, then the message and its final dot. */
async function transaction(conn: Conn, data: string, n: number): Promise<void> {
  await conn.expect(
    `MAIL FROM:<orders@bench.test>\r\nRCPT TO:<customer${n}@example.test>\r\nDATA\r\n`,
    [250, 250, 354],
  );
  await conn.expect(`${data}.\r\n`, [250]);
}

async function greet(port: number): Promise<Conn> {
  const conn = await Conn.open(port);
  await conn.expect('', [220]);
  await conn.expect('EHLO client.bench.test\r\n', [250]);
  return conn;
}

/** SESSIONS sessions send up to TOTAL messages (until MAX_SECONDS); resolves with how many were accepted and when. */
async function load(port: number, mode: Mode): Promise<{ sent: number; secs: number }> {
  const run = `r${Date.now().toString(36)}`;
  let next = 0;
  let sent = 0;
  const started = performance.now();
  const deadline = started + MAX_SECONDS * 1000;
  const more = () => next < TOTAL && performance.now() < deadline;
  await Promise.all(
    Array.from({ length: SESSIONS }, async () => {
      if (mode === 'reused') {
        const conn = await greet(port);
        while (more()) {
          const n = next++;
          await transaction(conn, message(run, n), n);
          sent++;
        }
        await conn.quit();
      } else {
        while (more()) {
          const n = next++;
          const conn = await greet(port);
          await transaction(conn, message(run, n), n);
          sent++;
          await conn.quit();
        }
      }
    }),
  );
  return { sent, secs: (performance.now() - started) / 1000 };
}

// ---------------------------------------------------------------------------------------------------------------------
// The peers

/** Waits until a greeting comes from the port (the peer is up), for at most 30 s. */
async function greeted(port: number, proc: ChildProcess): Promise<void> {
  const until = Date.now() + 30_000;
  for (;;) {
    if (proc.exitCode !== null) throw new Error(`exited with ${proc.exitCode}`);
    try {
      const conn = await Conn.open(port);
      await conn.expect('', [220]);
      await conn.quit();
      return;
    } catch (err) {
      if (Date.now() > until) throw err;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

function stopper(proc: ChildProcess, cleanup = () => {}): () => Promise<void> {
  return () =>
    new Promise((resolve) => {
      const done = () => {
        cleanup();
        resolve();
      };
      if (proc.exitCode !== null || proc.signalCode !== null) return done();
      proc.once('exit', done);
      proc.kill('SIGTERM');
    });
}

/** svc, this build or (`build`) another checkout's, built. */
const svcBuildPeer = (name: string, build?: string): Peer => ({
  name,
  async start(env: Record<string, string> = {}) {
    const svc = await spawnServe(SVC_ARGS, { env, build });
    const dataDir = svc.proc.spawnargs[svc.proc.spawnargs.indexOf('--data-dir') + 1]!;
    let db: Database.Database | undefined;
    return {
      port: Number(new URL(svc.ready.smtp).port),
      pid: svc.proc.pid!,
      stored() {
        db ??= new Database(join(dataDir, 'svc.sqlite'), { readonly: true, fileMustExist: true });
        return (db.prepare('SELECT COUNT(*) AS n FROM sink_messages').get() as { n: number }).n;
      },
      async stop() {
        db?.close();
        await svc.stop();
      },
    };
  },
});
const svcPeer = svcBuildPeer('svc');

/**
 * svc with its library seams' stock paths (`svc-stock`: SVC_STOCK_SEAMS=1), or one library's alone
 * (`svc-stock-mailparser`): what the seams gain is svc's rate over this one's.
 */
const stockPeer = (name: string): Peer => ({
  ...svcPeer,
  name,
  start: () => svcPeer.start({ SVC_STOCK_SEAMS: name.slice('svc-stock-'.length) || '1' }),
});

const smtpSinkPeer: Peer = {
  name: 'smtp-sink',
  async start() {
    const port = await freePort();
    // -u: the user it runs as when started by root (it refuses to stay root); backlog 256.
    const args = process.getuid?.() === 0 ? ['-u', 'nobody'] : [];
    const proc = spawn(SMTP_SINK, [...args, `127.0.0.1:${port}`, '256'], { stdio: ['ignore', 'ignore', 'inherit'] });
    await greeted(port, proc);
    return { port, pid: proc.pid!, stop: stopper(proc) };
  },
};

/** The floor (bench/smtp-floor-server.ts), nothing stored; `store`: each message committed with its search entry first. */
const floorPeerOf = (store: boolean): Peer => ({
  name: store ? 'floor+store' : 'floor',
  async start() {
    const port = await freePort();
    const args = ['--import', 'tsx', 'bench/smtp-floor-server.ts', String(port), ...(store ? ['--store'] : [])];
    const proc = spawn(process.execPath, args, { stdio: ['ignore', 'ignore', 'inherit'] });
    await greeted(port, proc);
    return { port, pid: proc.pid!, stop: stopper(proc) };
  },
});
const floorPeer = floorPeerOf(false);

const maildevPeer: Peer = {
  name: 'MailDev',
  async start() {
    const maildev = await startMaildev(await freePort(), await freePort());
    await greeted(maildev.smtpPort, maildev.proc);
    return { port: maildev.smtpPort, pid: maildev.proc.pid!, stop: stopper(maildev.proc) };
  },
};

// ---------------------------------------------------------------------------------------------------------------------
// The run

interface Figure {
  rate: number;
  sent: number;
  secs: number;
  serverCores: number;
  /** The server's CPU time a message, all its threads (ms). */
  serverMs: number;
  clientCores: number;
  stored?: number;
}

async function measure(peer: Peer, mode: Mode): Promise<Figure> {
  const running = await peer.start();
  try {
    const cpuBefore = await cpuSeconds(running.pid);
    const clientBefore = process.cpuUsage();
    const { sent, secs } = await load(running.port, mode);
    const client = process.cpuUsage(clientBefore);
    const cpu = (await cpuSeconds(running.pid)) - cpuBefore;
    return {
      rate: sent / secs,
      sent,
      secs,
      serverCores: cpu / secs,
      serverMs: (cpu / sent) * 1000,
      clientCores: (client.user + client.system) / 1e6 / secs,
      stored: running.stored?.(),
    };
  } finally {
    await running.stop();
  }
}

const fmt = (n: number) => Math.round(n).toLocaleString('en-US');
const wanted = (name: string) => !ONLY || ONLY.includes(name);
// BENCH_SEAMS=both (or svc-stock in BENCH_PEERS) adds svc on its seams' stock paths.
const peers: Peer[] = [
  svcPeer,
  // BENCH_COMPARE=DIR: another build of svc (the root of another checkout, built) beside this one.
  ...(process.env.BENCH_COMPARE ? [svcBuildPeer(`svc (${process.env.BENCH_COMPARE})`, process.env.BENCH_COMPARE)] : []),
  ...(process.env.BENCH_SEAMS === 'both' && !ONLY ? [stockPeer('svc-stock')] : []),
  ...(ONLY ?? []).filter((n) => n.startsWith('svc-stock')).map(stockPeer),
  floorPeer,
  floorPeerOf(true),
].filter((p) => wanted(p.name));
const missing: string[] = [];
if (existsSync(SMTP_SINK)) {
  if (wanted('smtp-sink')) peers.push(smtpSinkPeer);
} else
  missing.push(
    `postfix's smtp-sink is not installed (Debian: echo "postfix postfix/main_mailer_type select No configuration" | sudo debconf-set-selections && sudo apt-get install postfix)`,
  );
if (!wanted('MailDev')) {
  // Not asked for: not installed either.
} else if (haveMaildev()) peers.push(maildevPeer);
else
  missing.push(
    `MailDev could not be installed into ${MAILDEV_DIR} (npm install --prefix ${MAILDEV_DIR} maildev@${MAILDEV_VERSION}); skipped`,
  );

console.log(
  `bench/smtp-ingest  (${SESSIONS} sessions at once, ${fmt(TOTAL)} messages of ${MESSAGE_BYTES / 1024} KB a measurement, ` +
    `at most ${MAX_SECONDS} s each; ${ROUNDS} rounds)`,
);
for (const m of missing) console.log(`  skipped: ${m}`);

const results = new Map<string, Figure[]>(); // `${peer} ${mode}` → one figure a round
const machineStart = await machineTicks();
for (let round = 1; round <= ROUNDS; round++) {
  const before = await machineTicks();
  console.log(`  round ${round}`);
  for (const { mode, title } of MODES) {
    for (const peer of peers) {
      const f = await measure(peer, mode);
      const key = `${peer.name} ${mode}`;
      results.set(key, [...(results.get(key) ?? []), f]);
      const partial = f.sent < TOTAL ? ` (stopped after ${MAX_SECONDS} s)` : '';
      const stored = f.stored === undefined ? '' : `, ${fmt(f.stored)} stored`;
      console.log(
        `    ${title.padEnd(18)} ${peer.name.padEnd(9)} ${fmt(f.rate).padStart(6)} msg/s   ` +
          `${fmt(f.sent)} in ${f.secs.toFixed(1)} s${partial}${stored}; server ${f.serverCores.toFixed(2)} cores ` +
          `(${f.serverMs.toFixed(2)} ms a message), client ${f.clientCores.toFixed(2)}`,
      );
    }
  }
  const ratios: string[] = [];
  const rate = (peer: string, mode: Mode) => results.get(`${peer} ${mode}`)?.[round - 1]?.rate;
  const [svcPer, sinkPer, floorPer, svcReused, devReused, floorReused] = [
    rate('svc', 'per-connection'),
    rate('smtp-sink', 'per-connection'),
    rate('floor', 'per-connection'),
    rate('svc', 'reused'),
    rate('MailDev', 'reused'),
    rate('floor', 'reused'),
  ];
  const percent = (a: number, b: number) => `${((a / b) * 100).toFixed(0)} %`;
  if (svcPer && sinkPer) ratios.push(`per connection svc/smtp-sink ${percent(svcPer, sinkPer)} (target ≥ 50 %)`);
  if (floorPer && sinkPer) ratios.push(`floor/smtp-sink ${percent(floorPer, sinkPer)}`);
  if (svcReused && devReused) ratios.push(`reused svc/MailDev ${(svcReused / devReused).toFixed(1)}× (target ≥ 4×)`);
  if (floorReused && devReused) ratios.push(`floor/MailDev ${(floorReused / devReused).toFixed(1)}×`);
  const [storedPer, storedReused] = [rate('floor+store', 'per-connection'), rate('floor+store', 'reused')];
  if (storedPer && sinkPer) ratios.push(`floor+store/smtp-sink ${percent(storedPer, sinkPer)}`);
  if (storedReused && devReused) ratios.push(`floor+store/MailDev ${(storedReused / devReused).toFixed(1)}×`);
  if (ratios.length) console.log(`    ratios: ${ratios.join('; ')}`);
  console.log(`    CPU steal: ${stealLine(before, await machineTicks())}`);
}

console.log('  summary (median of the rounds, range in brackets)');
for (const { mode, title } of MODES) {
  for (const peer of peers) {
    const rates = (results.get(`${peer.name} ${mode}`) ?? []).map((f) => f.rate).sort((a, b) => a - b);
    if (!rates.length) continue;
    const median = rates[Math.floor(rates.length / 2)]!;
    console.log(
      `    ${title.padEnd(18)} ${peer.name.padEnd(9)} ${fmt(median).padStart(6)} msg/s   [${fmt(rates[0]!)}–${fmt(rates[rates.length - 1]!)}]`,
    );
  }
}
console.log(`  CPU steal        : ${stealLine(machineStart, await machineTicks())}`);
console.log(`  machine speed    : ${await speedLine()}`);
