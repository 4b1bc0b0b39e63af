// bench/first-delivery: how long the first message after `svc serve` starts takes from its send to its catch, against
// the messages after it. Each round is a fresh `svc serve` (the built binary, a new data directory): one message is sent
// through /v1 (the server's first request, as in the README's flow), then LATER more, one at a time, each once the one
// before is caught. A message's time is its send's answer (202, on this side) plus its hand-over (the service clock's
// created_at of the message to received_at of its caught copy, on the server's side, read afterwards): no request to
// the server runs before the send or while the message is on its way. The first message is sent either at once after
// the ready line (a test, a script) or after a pause (a person who reads the ready line, then types `svc emails
// send`). `BENCH_ROUNDS=N` changes the rounds (default 8).
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { spawnServe, speedLine } from './common.js';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 8);
const LATER = 4;
const PAUSE_MS = 1000;

interface Timing {
  accepted: number;
  handedOver: number;
}

async function round(pause: number): Promise<Timing[]> {
  const server = await spawnServe();
  try {
    const origin = server.ready.api.replace(/\/v1$/, '');
    if (pause) await sleep(pause);
    const times: Timing[] = [];
    for (let i = 0; i <= LATER; i++) {
      const to = `first${i}@example.org`;
      const t = performance.now();
      const res = await fetch(`${server.ready.api}/emails`, {
        method: 'POST',
        headers: { authorization: `Bearer ${server.ready.seed.api_key_test}`, 'content-type': 'application/json' },
        body: JSON.stringify({ from: `hello@${server.ready.seed.domain}`, to, subject: `Message ${i}`, text: 'Hi.' }),
      });
      const accepted = performance.now() - t;
      if (res.status !== 202) throw new Error(`the send answered ${res.status}: ${await res.text()}`);
      const { created_at } = (await res.json()) as { created_at: string };
      // Read once it is surely caught: a request now would compete with the delivery it measures.
      for (let wait = 100; ; wait = 50) {
        await sleep(wait);
        const list = await fetch(`${origin}/sandbox/messages?to=${to}`, {
          headers: { authorization: `Bearer ${server.ready.admin_token}` },
        });
        const [m] = ((await list.json()) as { data: { received_at: string }[] }).data;
        if (!m) continue;
        times.push({ accepted, handedOver: Date.parse(m.received_at) - Date.parse(created_at) });
        break;
      }
    }
    return times;
  } finally {
    await server.stop();
  }
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const ms = (x: number) => `${x.toFixed(0)} ms`;
const total = (t: Timing) => t.accepted + t.handedOver;
const parts = (ts: Timing[]) =>
  `median ${ms(median(ts.map(total)))} (max ${ms(Math.max(...ts.map(total)))}; the send's answer ` +
  `${ms(median(ts.map((t) => t.accepted)))}, the hand-over ${ms(median(ts.map((t) => t.handedOver)))})`;

console.log(`bench/first-delivery  (svc serve, built; ${ROUNDS} fresh servers each way; Node ${process.version})`);
for (const [pause, what] of [
  [0, 'sent at once after the ready line'],
  [PAUSE_MS, `sent ${PAUSE_MS} ms after the ready line`],
] as const) {
  const rounds: Timing[][] = [];
  for (let i = 0; i < ROUNDS; i++) rounds.push(await round(pause));
  console.log(`  ${what}:`);
  console.log(`    first message send → caught ${parts(rounds.map((r) => r[0]!))}`);
  console.log(`    later ones ${parts(rounds.flatMap((r) => r.slice(1)))}`);
}
console.log(`  ${await speedLine()}`);
