// bench/sandbox-start: what svc/testing's startSandbox() costs a test file. Imports the built package (dist/), then
// times start-to-ready and close() for sandboxes started one after another in this process, then 8 started side by
// side (as parallel test files would), and prints the figures beside the target (≤ 150 ms to ready). The first
// start also pays for loading the server's modules and its threads; it is shown apart.
import { performance } from 'node:perf_hooks';
import { speedLine } from './common.js';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 15);
const SIDE_BY_SIDE = 8;

const { startSandbox } = (await import(
  '../dist/testing/index.js' as string
)) as typeof import('../src/testing/index.js');

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const max = (xs: number[]) => Math.max(...xs);
const ms = (x: number) => `${x.toFixed(0)} ms`;

async function once(): Promise<{ ready: number; close: number }> {
  const t0 = performance.now();
  const sb = await startSandbox();
  const ready = performance.now() - t0;
  const t1 = performance.now();
  await sb.close();
  return { ready, close: performance.now() - t1 };
}

console.log(`bench/sandbox-start  (startSandbox(): in memory, ports 0, manual clock, seeded; Node ${process.version})`);
const first = await once();
console.log(`  first start in this process (loads the server): ready ${ms(first.ready)}, close ${ms(first.close)}`);

const runs: { ready: number; close: number }[] = [];
for (let i = 0; i < ROUNDS; i++) runs.push(await once());
const ready = runs.map((r) => r.ready);
const close = runs.map((r) => r.close);
console.log(
  `  ${ROUNDS} starts one after another: ready median ${ms(median(ready))}, max ${ms(max(ready))}   (target ≤ 150 ms)`,
);
console.log(`  close: median ${ms(median(close))}, max ${ms(max(close))}`);

const t0 = performance.now();
const sandboxes = await Promise.all(
  Array.from({ length: SIDE_BY_SIDE }, async () => {
    const s = performance.now();
    const sb = await startSandbox();
    return { sb, ready: performance.now() - s };
  }),
);
const all = performance.now() - t0;
// Each one works: a send through its own API is caught by its own sink.
await Promise.all(
  sandboxes.map(async ({ sb }, i) => {
    const waiting = sb.inbox.waitFor({ to: `side${i}@example.org`, timeout: 30_000 });
    await sb.client.call('sendEmail', {
      body: { from: 'hello@example.test', to: `side${i}@example.org`, subject: `n${i}`, text: 'hi' },
    });
    await waiting;
  }),
);
const c0 = performance.now();
await Promise.all(sandboxes.map(({ sb }) => sb.close()));
console.log(
  `  ${SIDE_BY_SIDE} side by side: all ready in ${ms(all)} (each ${ms(Math.min(...sandboxes.map((s) => s.ready)))}–${ms(max(sandboxes.map((s) => s.ready)))}), ` +
    `each sent and caught its own message, all closed in ${ms(performance.now() - c0)}`,
);
console.log(`  machine speed   : ${await speedLine()}`);
