// bench/drain: 20,000 messages accepted, then the time until every one is caught, parsed and stored by the sink.
// Reports messages/s and the server's peak RSS, in two runs of a fresh server each:
//   backlog:  the 20,000 are accepted first (scheduled a minute ahead on a manual clock), then one clock move makes
//             them all due at once; the figure is the time from the move until the last is in the sink;
//   arriving: the 20,000 arrive while the server delivers (acceptance and delivery share the machine); the figure
//             is the time from the first request until the last is in the sink.
import Database from 'better-sqlite3';
import { join } from 'node:path';
import {
  cpuSeconds,
  html2k,
  machineTicks,
  mainThreadCpuSeconds,
  rssMb,
  spawnServe,
  speedLine,
  stealLine,
} from './common.js';

const TOTAL = Number(process.env.BENCH_MESSAGES ?? 20_000);
const BATCH = 100;
const PARALLEL = 4;

type Served = Awaited<ReturnType<typeof spawnServe>>;

/** Sends TOTAL messages in batches of BATCH, PARALLEL requests at a time; resolves with how many were accepted. */
async function sendAll(svc: Served, extra: Record<string, unknown> = {}): Promise<number> {
  const item = {
    from: `Shop <orders@${svc.ready.seed.domain}>`,
    to: 'delivered@simulator.test',
    subject: 'Your order',
    html: html2k(),
    text: 'Thanks for your order.',
    ...extra,
  };
  const body = JSON.stringify(Array.from({ length: BATCH }, () => item));
  const headers = { 'Content-Type': 'application/json', Authorization: `Bearer ${svc.ready.seed.api_key_test}` };
  let next = 0;
  let accepted = 0;
  await Promise.all(
    Array.from({ length: PARALLEL }, async () => {
      while (next < TOTAL / BATCH) {
        next++;
        const res = await fetch(`${svc.ready.api}/emails/batch`, { method: 'POST', headers, body });
        const out = (await res.json()) as { data: { status: number }[] };
        accepted += out.data.filter((d) => d.status === 202).length;
      }
    }),
  );
  return accepted;
}

/**
 * Runs `work` against the server and waits until the sink holds as many messages as `work` resolved with; reports the
 * time from the start of `work` (and how long `work` itself took), and the server's CPU, peak RSS and the machine's
 * steal over that window.
 */
async function measure(svc: Served, work: () => Promise<number>) {
  const pid = svc.proc.pid!;
  const dataDir = svc.proc.spawnargs[svc.proc.spawnargs.indexOf('--data-dir') + 1]!;
  const db = new Database(join(dataDir, 'svc.sqlite'), { readonly: true, fileMustExist: true });
  // Every message this run sends is a /v1 message, and the fresh data directory holds no other caught mail: a plain
  // COUNT(*) (answered from the narrowest index, not a scan of the stored sources) counts them.
  const caught = db.prepare('SELECT COUNT(*) AS n FROM sink_messages');
  let peakRss = 0;
  const sampler = setInterval(async () => {
    peakRss = Math.max(peakRss, await rssMb(pid).catch(() => 0));
  }, 100);
  const [cpuBefore, mainBefore, machineBefore] = [
    await cpuSeconds(pid),
    await mainThreadCpuSeconds(pid),
    await machineTicks(),
  ];
  const started = performance.now();
  const expected = await work();
  const workDone = performance.now();
  let n = 0;
  const deadline = Date.now() + 15 * 60_000;
  while ((n = (caught.get() as { n: number }).n) < expected && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 100));
  }
  const secs = (performance.now() - started) / 1000;
  const cpu = (await cpuSeconds(pid)) - cpuBefore;
  const mainCpu = (await mainThreadCpuSeconds(pid)) - mainBefore;
  const machineAfter = await machineTicks();
  clearInterval(sampler);
  peakRss = Math.max(peakRss, await rssMb(pid).catch(() => 0));
  db.close();
  return {
    expected,
    caught: n,
    secs,
    workSecs: (workDone - started) / 1000,
    cpu,
    mainCpu,
    peakRss,
    steal: stealLine(machineBefore, machineAfter),
  };
}

function report(title: string, r: Awaited<ReturnType<typeof measure>>, lines: string[]): void {
  console.log(`  ${title}`);
  for (const line of lines) console.log(`    ${line}`);
  console.log(`    caught in sink : ${r.caught} of ${r.expected} in ${r.secs.toFixed(1)} s`);
  console.log(`    messages/s     : ${(r.caught / r.secs).toFixed(0)}   (target ≥ 1000)`);
  console.log(`    server peak RSS: ${r.peakRss.toFixed(0)} MB   (target ≤ 250)`);
  console.log(
    `    server CPU     : ${r.cpu.toFixed(1)} s (${((r.cpu / r.caught) * 1000).toFixed(2)} ms a message, ${(r.cpu / r.secs).toFixed(2)} cores busy); ` +
      `main thread ${((r.mainCpu / r.caught) * 1000).toFixed(2)} ms a message, other threads (composing, RSA signing, GC, checkpoints) ` +
      `${(((r.cpu - r.mainCpu) / r.caught) * 1000).toFixed(2)} ms`,
  );
  console.log(`    CPU steal      : ${r.steal}`);
}

console.log(`bench/drain  (${TOTAL} messages, batches of ${BATCH}, 2 KB html + text, DKIM-signed, one recipient)`);

// Both runs turn retention off: the figure waits until the sink holds all TOTAL messages, more than the default
// --max-messages keeps.

// Backlog: accepted first, then released at once by one move of the manual clock. BENCH_SEAMS=both runs it twice, the
// library seams' fast paths and then their stock ones (SVC_STOCK_SEAMS=1: src/server/seams/README.md), in this run;
// BENCH_SEAMS=nodemailer (library names) the second time with only those seams on their stock paths.
const seams = process.env.BENCH_SEAMS;
for (const stock of seams ? [null, seams === 'both' ? '1' : seams] : [null]) {
  const svc = await spawnServe(['--send-rate', '1000000', '--clock', 'manual', '--max-messages', 'off'], {
    env: stock ? { SVC_STOCK_SEAMS: stock } : {},
  });
  const admin = { 'Content-Type': 'application/json', Authorization: `Bearer ${svc.ready.admin_token}` };
  const origin = svc.ready.api.replace(/\/v1$/, '');
  const { now } = (await (await fetch(`${origin}/sandbox/clock`, { headers: admin })).json()) as { now: string };
  const t = performance.now();
  const accepted = await sendAll(svc, { scheduled_at: new Date(Date.parse(now) + 60_000).toISOString() });
  const acceptSecs = (performance.now() - t) / 1000;
  const r = await measure(svc, async () => {
    const res = await fetch(`${origin}/sandbox/clock`, {
      method: 'POST',
      headers: admin,
      body: JSON.stringify({ advance_seconds: 120 }),
    });
    if (!res.ok) throw new Error(`POST /sandbox/clock answered ${res.status}`);
    return accepted;
  });
  await svc.stop();
  report(
    `backlog${stock ? ` (stock seams: ${stock === '1' ? 'all' : stock})` : ''}: accepted first, then all due at once (one move of the manual clock)`,
    r,
    [`accepted       : ${accepted} in ${acceptSecs.toFixed(1)} s (scheduled a minute ahead)`],
  );
}

// Arriving: accepted while the server delivers.
{
  const svc = await spawnServe(['--send-rate', '1000000', '--max-messages', 'off']);
  const r = await measure(svc, () => sendAll(svc));
  await svc.stop();
  report('arriving: accepted while the server delivers (timed from the first request)', r, [
    `accepted       : ${r.expected} in ${r.workSecs.toFixed(1)} s`,
  ]);
}
console.log(`  machine speed    : ${await speedLine()}`);
