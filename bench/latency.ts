// bench/latency: how soon a test sees the mail it sent, one message at a time. For svc: `POST /v1/emails` (the real
// path: queued, built, DKIM-signed, handed to the sink, stored), sent with the package's client as svc-mail/testing
// hands it and again with Node's fetch, and SMTP to its sink over a new connection per message and over one reused
// connection; each followed by svc-mail/testing's wait (client/inbox-wait.ts through
// testing/message.ts `waitAndRead`: one request, POST /sandbox/messages/wait, held by the server until the message is
// caught and answered with it claimed and in full, read for its codes and links).
// For MailDev, SMTP the same two ways, then its web API asked every millisecond until the message is listed (its
// inbox emptied between messages, so each answer is short). Each way sends BENCH_MESSAGES (300) messages after 20 to
// warm up, and prints p50, p99 and max; the peers take turns within each of BENCH_ROUNDS rounds (2). Then the trace of
// a send's hops (lib/hops.ts), in a sandbox in this process (svc-mail/testing's startSandbox): the median time from
// the request to each mark. BENCH_COMPARE=DIR adds another build's server (the root of another checkout, built) as a
// peer, waited on by this build's client: a build with POST /sandbox/messages/wait.
import { PerformanceObserver } from 'node:perf_hooks';
import nodemailer from 'nodemailer';
import { sleep } from '../src/client/backoff.js';
import { createClient } from '../src/client/index.js';
import { onHop } from '../src/lib/hops.js';
import { startSandbox } from '../src/testing/index.js';
import { waitAndRead } from '../src/testing/message.js';
import { cpuSeconds, freePort, mainThreadCpuSeconds, percentile, spawnServe, speedLine } from './common.js';
import { haveMaildev, startMaildev } from './maildev.js';

const MESSAGES = Number(process.env.BENCH_MESSAGES ?? 300);
const WARM = 20;
/**
 * Seconds of sends through the package's client, not timed, before any of a server's ways is (BENCH_SERVER_WARMUP, 5):
 * the way timed first no longer pays for the server's start, its paced warm-up and the compiling of its code. Timed
 * first after only its own 20 sends, or after 200 more, a way took about 1 ms more of the server's main thread a message
 * than the same way timed second (bench/README.md), as bench:submission found for its first case.
 */
const SERVER_WARMUP_MS = Number(process.env.BENCH_SERVER_WARMUP ?? 5) * 1000;
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2);

/** Sends a message to `to` and resolves once a test has it: the figure is the time between. */
type Way = (to: string) => Promise<void>;

/** The CPU a message took over a way's timed messages: of a server's process (its main thread, the rest) and of this one. */
interface CpuMeter {
  start(): Promise<void>;
  /** `CPU a message: svc main thread 9.4 ms + its other threads 2.6 ms, the test's process 4.6 ms`. */
  stop(messages: number): Promise<string>;
}

/** This process's garbage collections (their pauses, ms) since the meter started. */
const pauses: number[] = [];
new PerformanceObserver((list) => {
  for (const e of list.getEntries()) pauses.push(e.duration);
}).observe({ entryTypes: ['gc'] });

/**
 * Meters the svc server `pid` and this process (the test's side: the send, the wait, the read, the codes and links),
 * and this process's collections: each one holds up the message it falls on.
 */
function cpuMeter(pid: number): CpuMeter {
  const read = async () => ({ main: await mainThreadCpuSeconds(pid), all: await cpuSeconds(pid) });
  let at = { main: 0, all: 0 };
  let self = process.cpuUsage();
  return {
    async start() {
      at = await read();
      self = process.cpuUsage();
      pauses.length = 0;
    },
    async stop(n) {
      const now = await read();
      const used = process.cpuUsage(self);
      const ms = (s: number) => ((s * 1000) / n).toFixed(1);
      const [main, rest] = [now.main - at.main, now.all - now.main - (at.all - at.main)];
      const gc = `${pauses.length} collections, the longest ${Math.max(0, ...pauses).toFixed(1)} ms`;
      return `CPU a message: svc main thread ${ms(main)} ms + its other threads ${ms(rest)} ms, the test's process ${ms((used.user + used.system) / 1e6)} ms (${gc})`;
    },
  };
}

/** The CPU line of each way metered, printed under its figures. */
const cpuLines = new Map<string, string>();

/** Times `MESSAGES` messages sent one after the other (after `WARM` not timed), in ms, sorted; `cpu` meters them. */
async function time(way: Way, label: string, cpu?: { meter: CpuMeter; name: string }): Promise<number[]> {
  const times: number[] = [];
  for (let i = 0; i < WARM + MESSAGES; i++) {
    if (i === WARM) await cpu?.meter.start();
    const to = `${label}-${i}-${Date.now()}@example.com`;
    const t = performance.now();
    await way(to);
    if (i >= WARM) times.push(performance.now() - t);
  }
  if (cpu) cpuLines.set(cpu.name, await cpu.meter.stop(MESSAGES));
  return times.sort((a, b) => a - b);
}

const mail = (to: string) => ({
  from: 'Shop <orders@example.test>',
  to,
  subject: 'Your sign-in code',
  text: 'Your code is 482913. It expires in 10 minutes.',
});

/** An SMTP way: a transport per message (a new connection each) or one pooled connection kept open. */
function smtpSender(port: number, reuse: boolean) {
  const options = { host: '127.0.0.1', port, secure: false, ignoreTLS: true };
  const pooled = reuse ? nodemailer.createTransport({ ...options, pool: true, maxConnections: 1 }) : null;
  return {
    async send(to: string) {
      if (pooled) return void (await pooled.sendMail(mail(to)));
      const t = nodemailer.createTransport(options);
      try {
        await t.sendMail(mail(to));
      } finally {
        t.close();
      }
    },
    close: () => pooled?.close(),
  };
}

/** Both SMTP ways to `port` (a new connection each, one reused connection), each message then `seen`. */
async function smtpFigures(
  name: string,
  port: number,
  seen: Way,
  label: string,
  meter?: CpuMeter,
): Promise<Record<string, number[]>> {
  const out: Record<string, number[]> = {};
  for (const reuse of [false, true]) {
    const smtp = smtpSender(port, reuse);
    const way = `${name} SMTP, ${reuse ? 'one reused connection' : 'a new connection each'}`;
    const send: Way = async (to) => {
      await smtp.send(to);
      await seen(to);
    };
    out[way] = await time(send, label, meter && { meter, name: way });
    smtp.close();
  }
  return out;
}

async function svcFigures(build?: string): Promise<Record<string, number[]>> {
  const svc = await spawnServe(['--send-rate', '1000000', '--max-messages', 'off'], { build });
  const name = build ? `svc (${build})` : 'svc';
  try {
    const key = svc.ready.seed.api_key_test;
    // The package's client as svc-mail/testing hands it to a test: the seeded test key for the sends, the admin token
    // for the waits.
    const client = createClient({ baseUrl: svc.ready.api, adminToken: svc.ready.admin_token, apiKey: key });
    // svc-mail/testing's own clock (testing/index.ts): a wait's time-out ends with the wait. A sleep that ignored the
    // wait's signal left each wait's 10 s timer behind in this process, and the collections of this process's heap
    // took up to 30 ms instead of 15, on the figure of the send they fell on (bench/README.md).
    const clock = { now: Date.now, sleep };
    const since = new Date().toISOString();
    const seen = async (to: string) => {
      const m = await waitAndRead(client, { to, since, timeoutMs: 10_000, clock }, {});
      if (!m) throw new Error(`svc: no message to ${to} within 10 s`);
    };
    const from = `Shop <orders@${svc.ready.seed.domain}>`;
    const api: Way = async (to) => {
      await client.call('sendEmail', { body: { ...mail(to), from } });
      await seen(to);
    };
    // The same with Node's fetch, as an app's own code or an SDK sends: fetch keeps a fifth of what a request allocates
    // alive past the young generation's collections, so this process collects for longer (bench/README.md).
    const headers = { 'Content-Type': 'application/json', Authorization: `Bearer ${key}` };
    const viaFetch: Way = async (to) => {
      const res = await fetch(`${svc.ready.api}/emails`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ ...mail(to), from }),
      });
      if (res.status !== 202) throw new Error(`POST /v1/emails answered ${res.status}: ${await res.text()}`);
      await res.arrayBuffer();
      await seen(to);
    };
    for (let i = 0, until = performance.now() + SERVER_WARMUP_MS; performance.now() < until; i++)
      await api(`warm-${i}-${Date.now()}@example.com`);
    // The server's CPU is metered for each way (the main thread apart): a send's latency is at least its share of it.
    const meter = cpuMeter(svc.proc.pid!);
    const way = `${name} POST /v1/emails`;
    const fetchWay = `${way} (fetch)`;
    return {
      [way]: await time(api, 'api', { meter, name: way }),
      [fetchWay]: await time(viaFetch, 'fetch', { meter, name: fetchWay }),
      ...(await smtpFigures(name, Number(new URL(svc.ready.smtp).port), seen, 'smtp', meter)),
    };
  } finally {
    await svc.stop();
  }
}

async function maildevFigures(): Promise<Record<string, number[]>> {
  const maildev = await startMaildev(await freePort(), await freePort());
  const web = `http://127.0.0.1:${maildev.webPort}`;
  try {
    for (const until = Date.now() + 30_000; ; ) {
      const up = await fetch(`${web}/api/email`).then(
        (r) => r.ok,
        () => false,
      );
      if (up) break;
      if (Date.now() > until) throw new Error('MailDev did not start within 30 s');
      await new Promise((r) => setTimeout(r, 100));
    }
    const seen = async (to: string) => {
      for (;;) {
        const list = (await (await fetch(`${web}/api/email`)).json()) as { to: { address: string }[] }[];
        if (list.some((m) => m.to.some((a) => a.address === to))) break;
        await new Promise((r) => setTimeout(r, 1));
      }
      await (await fetch(`${web}/api/email/all`, { method: 'DELETE' })).arrayBuffer();
    };
    return await smtpFigures('MailDev', maildev.smtpPort, seen, 'maildev');
  } finally {
    maildev.proc.kill('SIGTERM');
  }
}

/** The median time from `POST /v1/emails` to each hop mark and to the test's read, over MESSAGES sends. */
async function trace() {
  const sb = await startSandbox({ clock: 'real', sendRate: 1_000_000, maxMessages: null });
  let t0 = 0;
  let marks: [string, number][] = [];
  onHop((name) => marks.push([name, performance.now() - t0]));
  const at = new Map<string, number[]>();
  try {
    for (let i = 0; i < WARM + MESSAGES; i++) {
      const to = `trace-${i}@example.com`;
      marks = [];
      t0 = performance.now();
      await sb.client.call('sendEmail', { body: { ...mail(to), from: `Shop <orders@${sb.seed!.domain}>` } });
      marks.push(['the client has the 202', performance.now() - t0]);
      await sb.inbox.waitFor({ to });
      marks.push(['inbox.waitFor returned', performance.now() - t0]);
      if (i < WARM) continue;
      const once = new Set<string>();
      for (const [name, t] of marks) {
        if (once.has(name)) continue;
        once.add(name);
        at.set(name, [...(at.get(name) ?? []), t]);
      }
    }
  } finally {
    onHop(null);
    await sb.close();
  }
  console.log(
    '  the hops of a send (POST /v1/emails, then inbox.waitFor; sandbox in this process), median ms from the request:',
  );
  const median = (t: number[]) =>
    percentile(
      [...t].sort((a, b) => a - b),
      50,
    );
  for (const [name, t] of [...at].sort((a, b) => median(a[1]) - median(b[1])))
    console.log(`    ${median(t).toFixed(2).padStart(6)}  ${name}`);
}

console.log(
  `bench/latency  (send → a test sees it, ${MESSAGES} messages one after the other, after ${WARM} to warm up)`,
);
const maildev = haveMaildev();
if (!maildev) console.log('  MailDev could not be installed: svc alone');
for (let round = 1; round <= ROUNDS; round++) {
  const compare = process.env.BENCH_COMPARE;
  const figures = {
    ...(await svcFigures()),
    ...(compare ? await svcFigures(compare) : {}),
    ...(maildev ? await maildevFigures() : {}),
  };
  console.log(`  round ${round}`);
  for (const [name, t] of Object.entries(figures)) {
    console.log(
      `    ${name.padEnd(42)} p50 ${percentile(t, 50).toFixed(1).padStart(5)} ms   p99 ${percentile(t, 99).toFixed(1).padStart(5)} ms   max ${t.at(-1)!.toFixed(1).padStart(6)} ms`,
    );
    if (cpuLines.has(name)) console.log(`      ${cpuLines.get(name)}`);
  }
}
console.log('  targets: svc POST /v1/emails p50 ≤ 4 ms, p99 ≤ 15 ms');
await trace();
console.log(`  ${await speedLine()}`);
