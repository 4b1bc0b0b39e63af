// bench/sandbox-start: what svc-mail/testing's startSandbox() costs a test file. Each round is a fresh Node process, as a
// test worker is: it imports the built package (dist/), then times start-to-ready and close() of a first sandbox and
// of a few more one after another. The figures are medians over the rounds, beside the target (≤ 150 ms to ready, the
// first start in a fresh worker included); the import is shown apart, as a test file pays it before its first line
// runs. Then, in this process, 8 started side by side (as parallel test files would), each sending and catching a
// message of its own. `BENCH_ROUNDS=N` changes the number of fresh processes (default 15).
import { spawnSync } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { speedLine } from './common.js';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 15);
const LATER = 5;
const SIDE_BY_SIDE = 8;
const TESTING = fileURLToPath(new URL('../dist/testing/index.js', import.meta.url));

/** One fresh process: the import, the first start, then LATER more, each closed before the next. */
const round = `
const t0 = performance.now();
const { startSandbox } = await import(${JSON.stringify(TESTING)});
const imported = performance.now() - t0;
const starts = [];
const closes = [];
for (let i = 0; i < ${LATER + 1}; i++) {
  const s = performance.now();
  const sb = await startSandbox();
  starts.push(performance.now() - s);
  const c = performance.now();
  await sb.close();
  closes.push(performance.now() - c);
}
console.log(JSON.stringify({ imported, starts, closes }));
`;

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const max = (xs: number[]) => Math.max(...xs);
const ms = (x: number) => `${x.toFixed(0)} ms`;

console.log(
  `bench/sandbox-start  (startSandbox(): in memory, ports 0, manual clock, seeded; ${ROUNDS} fresh processes; Node ${process.version})`,
);
const rounds: { imported: number; starts: number[]; closes: number[] }[] = [];
for (let i = 0; i < ROUNDS; i++) {
  // No NODE_EXTRA_CA_CERTS: where it is set, every Node process parses that many certificates first.
  const { NODE_EXTRA_CA_CERTS: _, ...env } = process.env;
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', round], { encoding: 'utf8', env });
  if (r.status !== 0) throw new Error(`round ${i} failed: ${r.stderr}`);
  rounds.push(JSON.parse(r.stdout.trim().split('\n').at(-1)!));
}
const imports = rounds.map((r) => r.imported);
const firsts = rounds.map((r) => r.starts[0]!);
const later = rounds.flatMap((r) => r.starts.slice(1));
const closes = rounds.flatMap((r) => r.closes);
console.log(`  import of svc-mail/testing in a fresh process: median ${ms(median(imports))}, max ${ms(max(imports))}`);
console.log(
  `  first start in a fresh process: ready median ${ms(median(firsts))}, max ${ms(max(firsts))}   (target ≤ 150 ms)`,
);
console.log(
  `  import + first start: median ${ms(median(rounds.map((r) => r.imported + r.starts[0]!)))}   (what a test file's first sandbox costs)`,
);
console.log(
  `  later starts (${LATER} a process, one after another): ready median ${ms(median(later))}, max ${ms(max(later))}   (target ≤ 150 ms)`,
);
console.log(`  close: median ${ms(median(closes))}, max ${ms(max(closes))}`);

const { startSandbox } = (await import(TESTING)) as typeof import('../src/testing/index.js');
await (await startSandbox()).close();
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
