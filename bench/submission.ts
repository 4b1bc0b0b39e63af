// bench/submission: messages a second through SMTP submission, beside POST /v1/emails accepted a second, in one run
// against one `svc serve`. Submission is measured as apps use it, with nodemailer: STARTTLS (2587's role) and implicit
// TLS (2465's), each over reused connections (a pool, as a mail queue worker holds one) and with a new connection for
// every message (nodemailer without `pool`, most application code: a TCP connection, a TLS handshake and an AUTH per
// message). Every measurement runs SESSIONS sends at once for BENCH_DURATION seconds; the messages and the API's are
// the same (2 KB HTML, one recipient) and are delivered into the sink as they come, in both cases. A case's server CPU
// is counted until the last of its messages is in the sink, so it holds the delivery of its own messages and none of
// another case's (the API accepts faster than the server delivers: without this, the case after it paid for its
// backlog). Every case first runs unmeasured for BENCH_WARMUP seconds (default 3), one after another, before any is
// measured: otherwise the case measured first paid for compiling the server's code (measured alone after its own
// warm-up, a case measured the same as any other; first of several, a third slower). `BENCH_CASES` picks some of them
// (`api,starttls,implicit,starttls-each,implicit-each`; all by default), `BENCH_NODE_ARGS` gives the server node flags
// (`--cpu-prof --cpu-prof-dir=prof` profiles it). Besides messages taken a second while the senders run, each case
// prints those delivered a second (its messages over the time until the last is in the sink), and its share of the
// API's on both counts: the API takes messages faster than the server delivers them, submission does not. The CPU
// the senders took a message (this process: autocannon, or nodemailer's TLS and SMTP) is printed beside the server's:
// on two cores, it is what the server's main thread cannot have.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import autocannon from 'autocannon';
import Database from 'better-sqlite3';
import nodemailer from 'nodemailer';
import { cpuSeconds, html2k, machineTicks, spawnServe, speedLine, stealLine } from './common.js';

const DURATION = Number(process.env.BENCH_DURATION ?? 10);
/** Seconds each case runs unmeasured before any is measured: the server's code on every path is compiled by then. */
const WARMUP = Number(process.env.BENCH_WARMUP ?? 3);
const SESSIONS = Number(process.env.BENCH_SESSIONS ?? 10);

const machineBefore = await machineTicks();
// Every caught message is kept: the sink's count is how the bench knows a case's messages are all delivered.
const svc = await spawnServe(['--send-rate', '1000000', '--max-messages', 'off']);
const key = svc.ready.seed.api_key_test;
const ca = readFileSync(svc.ready.smtp_tls.cert!);
const html = html2k();
const from = `Shop <orders@${svc.ready.seed.domain}>`;
const dataDir = svc.proc.spawnargs[svc.proc.spawnargs.indexOf('--data-dir') + 1]!;
const db = new Database(join(dataDir, 'svc.sqlite'), { readonly: true, fileMustExist: true });
// Every message of the run is delivered into the sink, and the fresh data directory holds no other caught mail.
const caughtStatement = db.prepare('SELECT COUNT(*) AS n FROM sink_messages');
const caught = () => (caughtStatement.get() as { n: number }).n;

interface Sent {
  /** Messages taken a second while the senders ran. */
  rate: number;
  taken: number;
  failed: number;
  firstError?: string;
}

/** SESSIONS senders at once through one nodemailer transport for `seconds`. */
async function smtp(port: number, secure: boolean, pool: boolean, seconds: number): Promise<Sent> {
  const transport = nodemailer.createTransport({
    host: '127.0.0.1',
    port,
    secure,
    requireTLS: !secure,
    auth: { user: 'bench', pass: key },
    tls: { ca },
    ...(pool ? { pool: true, maxConnections: SESSIONS, maxMessages: Number.POSITIVE_INFINITY } : {}),
  });
  let ok = 0;
  let failed = 0;
  let firstError: string | undefined;
  const start = performance.now();
  const deadline = start + seconds * 1000;
  await Promise.all(
    Array.from({ length: SESSIONS }, async () => {
      while (performance.now() < deadline) {
        try {
          await transport.sendMail({ from, to: 'delivered@simulator.test', subject: 'Your order', html });
          ok++;
        } catch (err) {
          failed++;
          firstError ??= (err as Error).message;
        }
      }
    }),
  );
  const took = (performance.now() - start) / 1000;
  transport.close();
  return { rate: ok / took, taken: ok, failed, firstError };
}

/** The same message through POST /v1/emails, SESSIONS connections at once. */
async function api(seconds: number): Promise<Sent> {
  const r = await autocannon({
    url: `${svc.ready.api}/emails`,
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${key}` },
    body: JSON.stringify({ from, to: 'delivered@simulator.test', subject: 'Your order', html }),
    connections: SESSIONS,
    duration: seconds,
  });
  return { rate: r.requests.average, taken: r['2xx'], failed: r.non2xx + r.errors };
}

/** Waits until the sink holds `n` messages (five minutes at most). */
async function caughtReaches(n: number): Promise<void> {
  const deadline = Date.now() + 5 * 60_000;
  while (caught() < n && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
}

/** Runs a case for WARMUP seconds unmeasured, and waits until its messages are in the sink. */
async function warm(send: (seconds: number) => Promise<Sent>): Promise<void> {
  const from = caught();
  await caughtReaches(from + (await send(WARMUP)).taken);
}

/** Runs a case for DURATION seconds and waits until every message it took is in the sink: the server's CPU over both. */
async function measure(
  send: (seconds: number) => Promise<Sent>,
): Promise<Sent & { serverCpu: number; clientCpu: number; drainSeconds: number }> {
  const before = caught();
  const cpu0 = await cpuSeconds(svc.proc.pid!);
  const own = process.cpuUsage();
  const sent = await send(DURATION);
  const used = process.cpuUsage(own);
  const drainStart = performance.now();
  await caughtReaches(before + sent.taken);
  const serverCpu = ((await cpuSeconds(svc.proc.pid!)) - cpu0) / Math.max(sent.taken, 1);
  const clientCpu = (used.user + used.system) / 1e6 / Math.max(sent.taken, 1);
  return { ...sent, serverCpu, clientCpu, drainSeconds: (performance.now() - drainStart) / 1000 };
}

const port = Number(new URL(svc.ready.submission!).port);
const tlsPort = Number(new URL(svc.ready.submissions!).port);
const CASES = process.env.BENCH_CASES?.split(',').map((c) => c.trim());
const runs = (
  [
    ['api', 'POST /v1/emails (keep-alive)', api],
    ['starttls', 'STARTTLS, reused connections', (s: number) => smtp(port, false, true, s)],
    ['implicit', 'implicit TLS, reused connections', (s: number) => smtp(tlsPort, true, true, s)],
    ['starttls-each', 'STARTTLS, a connection per message', (s: number) => smtp(port, false, false, s)],
    ['implicit-each', 'implicit TLS, a connection per message', (s: number) => smtp(tlsPort, true, false, s)],
  ] as [string, string, (seconds: number) => Promise<Sent>][]
).filter(([id]) => !CASES || CASES.includes(id));
console.log(
  `bench/submission  (${SESSIONS} senders at once, ${DURATION} s each after ${WARMUP} s each unmeasured, 2 KB html, one recipient, delivered as it comes; Node ${process.version})`,
);
console.log(
  '  server CPU: until the case’s last message is in the sink (its delivery included); delivered a second: its messages over the time from its start until the last is in the sink',
);
if (WARMUP > 0) for (const [, , send] of runs) await warm(send);
let apiRate = 0;
let apiDelivered = 0;
for (const [id, name, send] of runs) {
  const f = await measure(send);
  // Taken and delivered: from the first message to the last one caught, as the sink sees the case's flow.
  const delivered = f.taken / (DURATION + f.drainSeconds);
  if (id === 'api') [apiRate, apiDelivered] = [f.rate, delivered];
  const share =
    apiRate && id !== 'api'
      ? `  (${((f.rate / apiRate) * 100).toFixed(0)} % of the API's; delivered, ${((delivered / apiDelivered) * 100).toFixed(0)} %)`
      : '';
  const failures = f.failed ? `  ${f.failed} failed: ${f.firstError ?? 'non-2xx'}` : '';
  console.log(
    `  ${name.padEnd(40)}: ${f.rate.toFixed(0).padStart(5)} messages/s  server CPU ${(f.serverCpu * 1000).toFixed(2)} ms a message (the senders' ${(f.clientCpu * 1000).toFixed(2)} ms), delivered ${f.drainSeconds.toFixed(1)} s after (${delivered.toFixed(0)} delivered a second)${share}${failures}`,
  );
}
db.close();
await svc.stop();
console.log(`  CPU steal : ${stealLine(machineBefore, await machineTicks())}`);
console.log(`  machine speed : ${await speedLine()}`);
