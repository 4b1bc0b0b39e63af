// bench/soak: a sandbox left running under a steady stream of mail stays bounded. `svc serve` from dist/ with a low
// --max-messages (and a short --max-age, which bounds the /v1 history too) takes sends at a steady rate through
// POST /v1/emails — accepted, delivered, DKIM-signed, caught, each with its events — while the inbox is listed four
// times a second. Every ~10 s it prints what was sent, what the sink and the /v1 history hold, the database file and
// its write-ahead log, the server's RSS and the slowest answer; at the end, whether the file and the RSS were flat
// over the second half of the run (after the warm-up: the windows filled, the log at its size).
//   BENCH_SECONDS (default 240), BENCH_RATE (messages/s, default 100), BENCH_MAX_MESSAGES (default 500),
//   BENCH_MAX_AGE (default 1m; `off` keeps the /v1 history, which then grows with every message).
import Database from 'better-sqlite3';
import { statSync } from 'node:fs';
import { Agent, fetch, type RequestInit } from 'undici';
import { join } from 'node:path';
import { cpuSeconds, html2k, machineTicks, rssMb, spawnServe, speedLine, stealLine } from './common.js';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 240);
const RATE = Number(process.env.BENCH_RATE ?? 100);
const MAX_MESSAGES = process.env.BENCH_MAX_MESSAGES ?? '500';
const MAX_AGE = process.env.BENCH_MAX_AGE ?? '1m';
const REPORT_EVERY_MS = 10_000;
const TICK_MS = 100;

const svc = await spawnServe(['--send-rate', '1000000', '--max-messages', MAX_MESSAGES, '--max-age', MAX_AGE]);
const pid = svc.proc.pid!;
const dataDir = svc.proc.spawnargs[svc.proc.spawnargs.indexOf('--data-dir') + 1]!;
const file = join(dataDir, 'svc.sqlite');
const db = new Database(file, { readonly: true, fileMustExist: true });
const count = (table: string) => (db.prepare(`SELECT COUNT(*) AS n FROM ${table}`).get() as { n: number }).n;
// Accepted messages not yet handed to the sink: a backlog here means the machine does not keep up with the rate, and
// what waits is kept (it is not history yet), so the file grows with it.
const backlog = () => (db.prepare(`SELECT COUNT(*) AS n FROM jobs WHERE kind = 'deliver'`).get() as { n: number }).n;
const mb = (path: string) => {
  try {
    return statSync(path).size / 2 ** 20;
  } catch {
    return 0;
  }
};

const origin = svc.ready.api.replace(/\/v1$/, '');
const sendHeaders = { 'Content-Type': 'application/json', Authorization: `Bearer ${svc.ready.seed.api_key_test}` };
const body = JSON.stringify({
  from: `Shop <orders@${svc.ready.seed.domain}>`,
  to: 'delivered@simulator.test',
  subject: 'Your order',
  html: html2k(),
  text: 'Thanks for your order.',
});

// A bounded pool: when the server falls behind, requests wait here (and show in `slowest`) instead of opening a
// connection each and piling up inside the server.
const dispatcher = new Agent({ connections: 32 });
let sent = 0;
let refused = 0;
let slowest = 0;
/** Why requests failed (status or error), and how often. */
const failures = new Map<string, number>();
/** Times one request; a refusal is counted, the bench goes on. */
async function timed(url: string, init: RequestInit): Promise<boolean> {
  const t = performance.now();
  let why: string | null = null;
  try {
    const res = await fetch(url, { ...init, dispatcher });
    await res.arrayBuffer();
    if (!res.ok) why = String(res.status);
  } catch (err) {
    why = String((err as Error).cause ?? err);
  } finally {
    if (why) failures.set(why, (failures.get(why) ?? 0) + 1);
    slowest = Math.max(slowest, performance.now() - t);
  }
  return why === null;
}

console.log(
  `bench/soak  (${RATE} messages/s through POST /v1/emails for ${SECONDS} s; svc serve --max-messages ${MAX_MESSAGES} --max-age ${MAX_AGE})`,
);
console.log('      s     sent  backlog   caught  /v1 kept   db MB  wal MB  rss MB  cpu %  slowest ms');
const machineBefore = await machineTicks();
const started = performance.now();
const inflight = new Set<Promise<void>>();
const samples: { s: number; db: number; rss: number }[] = [];
let nextReport = REPORT_EVERY_MS;
// The server's CPU (all its threads) over each report's interval: a backlog with the CPU below 100 % per core is the
// machine's other load, not the server's work.
let cpuBefore = await cpuSeconds(pid);
let cpuAt = performance.now();
let tick = 0;
const perTick = (RATE * TICK_MS) / 1000;
const probe = setInterval(
  () =>
    void timed(`${origin}/sandbox/messages?limit=20`, {
      headers: { Authorization: `Bearer ${svc.ready.admin_token}` },
    }),
  250,
);

while (performance.now() - started < SECONDS * 1000) {
  // Sends due by this tick (the rate holds even when a tick comes late).
  tick++;
  const due = Math.round(tick * perTick) - Math.round((tick - 1) * perTick);
  for (let i = 0; i < due; i++) {
    const p = timed(`${svc.ready.api}/emails`, { method: 'POST', headers: sendHeaders, body }).then((ok) => {
      if (ok) sent++;
      else refused++;
      inflight.delete(p);
    });
    inflight.add(p);
  }
  const elapsed = performance.now() - started;
  if (elapsed >= nextReport) {
    nextReport += REPORT_EVERY_MS;
    const s = elapsed / 1000;
    const sample = { s, db: mb(file), rss: await rssMb(pid) };
    const cpuNow = await cpuSeconds(pid);
    const cpu = ((cpuNow - cpuBefore) / ((performance.now() - cpuAt) / 1000)) * 100;
    [cpuBefore, cpuAt] = [cpuNow, performance.now()];
    samples.push(sample);
    console.log(
      `  ${s.toFixed(0).padStart(5)}  ${String(sent).padStart(7)}  ${String(backlog()).padStart(7)}  ${String(count('sink_messages')).padStart(7)}` +
        `  ${String(count('messages')).padStart(8)}` +
        `  ${sample.db.toFixed(1).padStart(6)}  ${mb(`${file}-wal`).toFixed(1).padStart(6)}  ${sample.rss.toFixed(0).padStart(6)}  ${cpu.toFixed(0).padStart(5)}` +
        `  ${slowest.toFixed(0).padStart(10)}`,
    );
    slowest = 0;
  }
  const wait = started + tick * TICK_MS - performance.now();
  if (wait > 0) await new Promise((r) => setTimeout(r, wait));
}
clearInterval(probe);
await Promise.all(inflight);
const machineAfter = await machineTicks();

// Flat: over the second half the file grew by less than 5 % (and 2 MB), the RSS by less than 10 % (and 10 MB).
const half = samples.find((x) => x.s >= SECONDS / 2) ?? samples[0]!;
const last = samples.at(-1)!;
const verdict = (name: string, from: number, to: number, pct: number, abs: number, unit: string) => {
  const grew = to - from;
  const flat = grew < Math.max((from * pct) / 100, abs);
  console.log(
    `  ${name.padEnd(8)}: ${from.toFixed(1)} → ${to.toFixed(1)} ${unit} from ${half.s.toFixed(0)} s to ${last.s.toFixed(0)} s ` +
      `(${grew >= 0 ? '+' : ''}${grew.toFixed(1)} ${unit}): ${flat ? 'flat' : 'GROWING'}`,
  );
};
console.log(
  `  sent     : ${sent} accepted, ${refused} refused or failed; caught now ${count('sink_messages')}, /v1 messages kept ${count('messages')}`,
);
if (failures.size) console.log(`  failures : ${[...failures].map(([why, n]) => `${n} × ${why}`).join('; ')}`);
verdict('db file', half.db, last.db, 5, 2, 'MB');
verdict('rss', half.rss, last.rss, 10, 10, 'MB');
console.log(`  CPU steal: ${stealLine(machineBefore, machineAfter)}`);
db.close();
await dispatcher.close();
await svc.stop();
console.log(`  machine speed: ${await speedLine()}`);
