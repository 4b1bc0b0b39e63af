// bench/drain: 20,000 messages accepted, then the time until every one is caught, parsed and stored by the sink.
// Reports end-to-end messages/s and the server's peak RSS.
import Database from 'better-sqlite3';
import { join } from 'node:path';
import { cpuSeconds, html2k, machineTicks, mainThreadCpuSeconds, rssMb, spawnServe, speedLine, stealLine } from './common.js';

const TOTAL = Number(process.env.BENCH_MESSAGES ?? 20_000);
const BATCH = 100;
const PARALLEL = 4;

const svc = await spawnServe(['--send-rate', '1000000']);
const dataDir = svc.proc.spawnargs[svc.proc.spawnargs.indexOf('--data-dir') + 1]!;
const db = new Database(join(dataDir, 'svc.sqlite'), { readonly: true, fileMustExist: true });
// Every message this run sends is a /v1 message, and the fresh data directory holds no other caught mail: a plain
// COUNT(*) (answered from the narrowest index, not a scan of the stored sources) counts them.
const caught = db.prepare('SELECT COUNT(*) AS n FROM sink_messages');

let peakRss = 0;
const sampler = setInterval(async () => {
  peakRss = Math.max(peakRss, await rssMb(svc.proc.pid!).catch(() => 0));
}, 100);

const item = {
  from: `Shop <orders@${svc.ready.seed.domain}>`,
  to: 'delivered@simulator.test',
  subject: 'Your order',
  html: html2k(),
  text: 'Thanks for your order.',
};
const body = JSON.stringify(Array.from({ length: BATCH }, () => item));
const headers = { 'Content-Type': 'application/json', Authorization: `Bearer ${svc.ready.seed.api_key_test}` };

const cpuBefore = await cpuSeconds(svc.proc.pid!);
const mainBefore = await mainThreadCpuSeconds(svc.proc.pid!);
const machineBefore = await machineTicks();
const started = performance.now();
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
const acceptedAt = performance.now();

let n = 0;
const deadline = Date.now() + 15 * 60_000;
while ((n = (caught.get() as { n: number }).n) < accepted && Date.now() < deadline) {
  await new Promise((r) => setTimeout(r, 100));
}
const done = performance.now();
const cpu = (await cpuSeconds(svc.proc.pid!)) - cpuBefore;
const mainCpu = (await mainThreadCpuSeconds(svc.proc.pid!)) - mainBefore;
const machineAfter = await machineTicks();
clearInterval(sampler);
peakRss = Math.max(peakRss, await rssMb(svc.proc.pid!).catch(() => 0));
db.close();
await svc.stop();

const secs = (done - started) / 1000;
console.log(`bench/drain  (${TOTAL} messages, batches of ${BATCH}, 2 KB html + text, DKIM-signed, one recipient)`);
console.log(`  accepted         : ${accepted} in ${((acceptedAt - started) / 1000).toFixed(1)} s`);
console.log(`  caught in sink   : ${n} after ${secs.toFixed(1)} s from the first request`);
console.log(`  end to end       : ${(n / secs).toFixed(0)} messages/s   (target ≥ 1000)`);
console.log(`  server peak RSS  : ${peakRss.toFixed(0)} MB   (target ≤ 250)`);
console.log(`  server CPU       : ${cpu.toFixed(1)} s (${((cpu / n) * 1000).toFixed(2)} ms a message, ${(cpu / secs).toFixed(2)} cores busy)`);
console.log(
  `  of which         : main thread ${mainCpu.toFixed(1)} s (${((mainCpu / n) * 1000).toFixed(2)} ms a message); ` +
    `other threads (composing, RSA signing, GC, checkpoints) ${(cpu - mainCpu).toFixed(1)} s`,
);
console.log(`  CPU steal        : ${stealLine(machineBefore, machineAfter)}`);
console.log(`  machine speed    : ${await speedLine()}`);
