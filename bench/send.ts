// bench/send: POST /v1/emails throughput and latency, against a bare node:http + SQLite ceiling.
// One recipient, 2 KB HTML, 50 connections, 20 s each. Messages are scheduled an hour ahead so that delivery
// (measured by bench/drain) does not share the server's core with acceptance.
import autocannon from 'autocannon';
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { html2k, machineTicks, spawnServe, speedLine, stealLine } from './common.js';

const DURATION = Number(process.env.BENCH_DURATION ?? 20);
const CONNECTIONS = 50;

async function run(url: string, headers: Record<string, string>, body: string) {
  const r = await autocannon({ url, method: 'POST', headers, body, connections: CONNECTIONS, duration: DURATION });
  return {
    rps: r.requests.average,
    p99: r.latency.p99,
    p50: r.latency.p50,
    ok: r['2xx'],
    non2xx: r.non2xx,
    errors: r.errors,
  };
}

const machineBefore = await machineTicks();
const svc = await spawnServe(['--send-rate', '1000000']);
const body = JSON.stringify({
  from: `Shop <orders@${svc.ready.seed.domain}>`,
  to: 'delivered@simulator.test',
  subject: 'Your order',
  html: html2k(),
  scheduled_at: new Date(Date.now() + 3600_000).toISOString(),
});
const svcResult = await run(
  `${svc.ready.api}/emails`,
  {
    'Content-Type': 'application/json',
    Authorization: `Bearer ${svc.ready.seed.api_key_test}`,
  },
  body,
);
await svc.stop();

const ceiling = spawn(process.execPath, ['--import', 'tsx', 'bench/ceiling-server.ts'], {
  stdio: ['ignore', 'pipe', 'inherit'],
});
const { port } = await new Promise<{ port: number }>((resolve) =>
  createInterface({ input: ceiling.stdout! }).once('line', (l) => resolve(JSON.parse(l))),
);
const ceilingResult = await run(`http://127.0.0.1:${port}/`, { 'Content-Type': 'application/json' }, body);
ceiling.kill('SIGTERM');

const machineAfter = await machineTicks();
const ratio = svcResult.rps / ceilingResult.rps;
console.log(`bench/send  (${CONNECTIONS} connections, ${DURATION} s each, 2 KB html, one recipient)`);
console.log(
  `  svc POST /v1/emails : ${svcResult.rps.toFixed(0)} accepted/s  p50 ${svcResult.p50} ms  p99 ${svcResult.p99} ms  (2xx ${svcResult.ok}, non-2xx ${svcResult.non2xx}, errors ${svcResult.errors})`,
);
console.log(
  `  ceiling node:http   : ${ceilingResult.rps.toFixed(0)} req/s       p50 ${ceilingResult.p50} ms  p99 ${ceilingResult.p99} ms`,
);
console.log(`  svc / ceiling       : ${(ratio * 100).toFixed(0)} %   (targets: ≥ 50 %, ≥ 3000/s, p99 < 25 ms)`);
console.log(`  CPU steal           : ${stealLine(machineBefore, machineAfter)}`);
console.log(`  machine speed       : ${await speedLine()}`);
