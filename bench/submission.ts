// bench/submission: messages a second through SMTP submission, beside POST /v1/emails accepted a second, in one run
// against one `svc serve`. Submission is measured as apps use it, with nodemailer: STARTTLS (2587's role) and implicit
// TLS (2465's), each over reused connections (a pool, as a mail queue worker holds one) and with a new connection for
// every message (nodemailer without `pool`, most application code: a TCP connection, a TLS handshake and an AUTH per
// message). Every measurement runs SESSIONS sends at once for BENCH_DURATION seconds; the messages and the API's are
// the same (2 KB HTML, one recipient) and are delivered into the sink as they come, in both cases.
import { readFileSync } from 'node:fs';
import autocannon from 'autocannon';
import nodemailer from 'nodemailer';
import { cpuSeconds, html2k, machineTicks, spawnServe, speedLine, stealLine } from './common.js';

const DURATION = Number(process.env.BENCH_DURATION ?? 10);
const SESSIONS = Number(process.env.BENCH_SESSIONS ?? 10);

const machineBefore = await machineTicks();
const svc = await spawnServe(['--send-rate', '1000000']);
const key = svc.ready.seed.api_key_test;
const ca = readFileSync(svc.ready.smtp_tls.cert!);
const html = html2k();
const from = `Shop <orders@${svc.ready.seed.domain}>`;

interface Figures {
  rate: number;
  failed: number;
  firstError?: string;
  serverCpu: number;
}

/** SESSIONS senders at once through one nodemailer transport for DURATION seconds; messages taken a second. */
async function smtp(port: number, secure: boolean, pool: boolean): Promise<Figures> {
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
  const cpu0 = await cpuSeconds(svc.proc.pid!);
  const start = performance.now();
  const deadline = start + DURATION * 1000;
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
  const seconds = (performance.now() - start) / 1000;
  const serverCpu = (await cpuSeconds(svc.proc.pid!)) - cpu0;
  transport.close();
  return { rate: ok / seconds, failed, firstError, serverCpu: serverCpu / Math.max(ok, 1) };
}

/** The same message through POST /v1/emails, SESSIONS connections at once. */
async function api(): Promise<Figures> {
  const cpu0 = await cpuSeconds(svc.proc.pid!);
  const r = await autocannon({
    url: `${svc.ready.api}/emails`,
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${key}` },
    body: JSON.stringify({ from, to: 'delivered@simulator.test', subject: 'Your order', html }),
    connections: SESSIONS,
    duration: DURATION,
  });
  const serverCpu = (await cpuSeconds(svc.proc.pid!)) - cpu0;
  return { rate: r.requests.average, failed: r.non2xx + r.errors, serverCpu: serverCpu / Math.max(r['2xx'], 1) };
}

const port = Number(new URL(svc.ready.submission!).port);
const tlsPort = Number(new URL(svc.ready.submissions!).port);
const runs: [string, () => Promise<Figures>][] = [
  ['POST /v1/emails (keep-alive)         ', api],
  ['STARTTLS, reused connections         ', () => smtp(port, false, true)],
  ['implicit TLS, reused connections     ', () => smtp(tlsPort, true, true)],
  ['STARTTLS, a connection per message   ', () => smtp(port, false, false)],
  ['implicit TLS, a connection per message', () => smtp(tlsPort, true, false)],
];
console.log(
  `bench/submission  (${SESSIONS} senders at once, ${DURATION} s each, 2 KB html, one recipient, delivered as it comes; Node ${process.version})`,
);
let apiRate = 0;
for (const [name, measure] of runs) {
  const f = await measure();
  if (name.startsWith('POST')) apiRate = f.rate;
  const share =
    apiRate && !name.startsWith('POST') ? `  (${((f.rate / apiRate) * 100).toFixed(0)} % of the API's)` : '';
  const failures = f.failed ? `  ${f.failed} failed: ${f.firstError ?? 'non-2xx'}` : '';
  console.log(
    `  ${name.trimEnd().padEnd(40)}: ${f.rate.toFixed(0).padStart(5)} messages/s  server CPU ${(f.serverCpu * 1000).toFixed(2)} ms a message${share}${failures}`,
  );
}
await svc.stop();
console.log(`  CPU steal : ${stealLine(machineBefore, await machineTicks())}`);
console.log(`  machine speed : ${await speedLine()}`);
