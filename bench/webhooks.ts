// bench/webhooks: a workspace with 5 endpoints under a steady 500 sends/s. Every event goes to every endpoint (local
// receivers in this process); prints deliveries per second and the lag from an event's creation to its arrival at
// a receiver (p50/p99/max), and the server's CPU. Then the cost of idle long polls: 300 held GET /v1/events?wait=30.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { cpuSeconds, machineTicks, percentile, rssMb, spawnServe, speedLine, stealLine } from './common.js';

const MESSAGES = Number(process.env.BENCH_MESSAGES ?? 5_000);
const RATE = Number(process.env.BENCH_RATE ?? 500);
const ENDPOINTS = Number(process.env.BENCH_ENDPOINTS ?? 5);
const TICK_MS = 100;

const svc = await spawnServe(['--send-rate', '1000000']);
const pid = svc.proc.pid!;
const origin = svc.ready.api.replace(/\/v1$/, '');
const admin = { 'Content-Type': 'application/json', Authorization: `Bearer ${svc.ready.admin_token}` };
const key = { 'Content-Type': 'application/json', Authorization: `Bearer ${svc.ready.seed.api_key_test}` };

// Receivers: each answers 204 at once and notes how long after its creation each event arrived.
const lags: number[] = [];
let delivered = 0;
let lastArrival = 0;
const receivers: Server[] = [];
for (let i = 0; i < ENDPOINTS; i++) {
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const now = Date.now();
      const event = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { created_at: string };
      lags.push(now - Date.parse(event.created_at));
      delivered++;
      lastArrival = now;
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  receivers.push(server);
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  const r = await fetch(`${origin}/sandbox/webhooks`, {
    method: 'POST',
    headers: admin,
    body: JSON.stringify({ workspace_id: svc.ready.seed.workspace_id, url }),
  });
  if (r.status !== 201) throw new Error(`creating an endpoint answered ${r.status}`);
}

// A steady RATE sends per second: a batch every TICK_MS.
const perTick = Math.max(1, Math.round((RATE * TICK_MS) / 1000));
const item = {
  from: `Shop <orders@${svc.ready.seed.domain}>`,
  to: 'delivered@simulator.test',
  subject: 'Your order',
  text: 'Thanks.',
};
const [cpuBefore, machineBefore, benchBefore] = [await cpuSeconds(pid), await machineTicks(), process.cpuUsage()];
const started = Date.now();
let sent = 0;
let behind = 0;
while (sent < MESSAGES) {
  const n = Math.min(perTick, MESSAGES - sent);
  const tickStart = Date.now();
  const res = await fetch(`${svc.ready.api}/emails/batch`, {
    method: 'POST',
    headers: key,
    body: JSON.stringify(Array.from({ length: n }, () => item)),
  });
  const out = (await res.json()) as { data: { status: number }[] };
  sent += out.data.filter((d) => d.status === 202).length;
  const wait = TICK_MS - (Date.now() - tickStart);
  if (wait > 0) await new Promise((r) => setTimeout(r, wait));
  else behind++;
}
const sendSecs = (Date.now() - started) / 1000;
// queued, sent and delivered: three events a message, each to every endpoint.
const expected = sent * 3 * ENDPOINTS;
const deadline = Date.now() + 10 * 60_000;
while (delivered < expected && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
const secs = (lastArrival - started) / 1000;
const cpu = (await cpuSeconds(pid)) - cpuBefore;
const steal = stealLine(machineBefore, await machineTicks());
const benchCpu = process.cpuUsage(benchBefore);
lags.sort((a, b) => a - b);
const pct = (p: number) => percentile(lags, p);

console.log(`bench/webhooks  (${ENDPOINTS} endpoints, every event type, ${MESSAGES} messages at ${RATE}/s)`);
console.log(
  `  sent             : ${sent} in ${sendSecs.toFixed(1)} s (${(sent / sendSecs).toFixed(0)}/s; ${behind} ticks of ${TICK_MS} ms ran late)`,
);
console.log(
  `  delivered        : ${delivered} of ${expected} events in ${secs.toFixed(1)} s: ${(delivered / secs).toFixed(0)} a second`,
);
console.log(
  `  lag              : p50 ${pct(50)} ms, p99 ${pct(99)} ms, max ${lags.at(-1)} ms (event created → at the receiver)`,
);
console.log(
  `  server CPU       : ${cpu.toFixed(1)} s (${(cpu / secs).toFixed(2)} cores busy), peak RSS now ${(await rssMb(pid)).toFixed(0)} MB`,
);
console.log(
  `  this process     : ${((benchCpu.user + benchCpu.system) / 1e6).toFixed(1)} s of CPU (sending, and the ${ENDPOINTS} receivers)`,
);
console.log(`  CPU steal        : ${steal}`);

// Idle long polls: held requests wait on the commit signal, not a timer. The server's idle CPU is measured without
// them, then with them held (the checkpoint thread's rounds and the schedulers' idle checks are there either way).
const idleCpuPerSecond = async () => {
  const before = await cpuSeconds(pid);
  await new Promise((r) => setTimeout(r, IDLE_SECONDS * 1000));
  return (((await cpuSeconds(pid)) - before) / IDLE_SECONDS) * 1000;
};
const IDLE_SECONDS = 10;
const HELD = 300;
await new Promise((r) => setTimeout(r, 2_000));
const idleAlone = await idleCpuPerSecond();
// The newest event, as a listener resuming the stream would hold it.
let after = '';
for (;;) {
  const page = (await (
    await fetch(`${svc.ready.api}/events?limit=100${after ? `&after=${after}` : ''}`, { headers: key })
  ).json()) as {
    data: { id: string }[];
    has_more: boolean;
  };
  after = page.data.at(-1)?.id ?? after;
  if (!page.has_more) break;
}
const held = Array.from({ length: HELD }, () =>
  fetch(`${svc.ready.api}/events?wait=30&after=${after}`, { headers: key }).catch(() => null),
);
await new Promise((r) => setTimeout(r, 2_000));
const idleHeld = await idleCpuPerSecond();
console.log(
  `  idle long polls  : server CPU ${idleAlone.toFixed(0)} ms a second idle, ${idleHeld.toFixed(0)} ms with ${HELD} GET /v1/events?wait=30 held`,
);
console.log(`  machine speed    : ${await speedLine()}`);

await svc.stop();
await Promise.allSettled(held);
for (const r of receivers) r.close();
