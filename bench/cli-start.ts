// bench/cli-start: how long the built `svc` takes from spawn to exit, as medians of interleaved runs, each beside its
// floor: `svc --version` and `svc emails send` beside `node -e 0` (what any Node program pays), with Node's module
// compile cache (bin/svc.js turns it on, Node ≥ 22.1) and without it (NODE_DISABLE_COMPILE_CACHE=1); and each
// one-request command beside a one-file script doing the same request with Node's fetch and printing the id
// (bench/floors/), with a script doing it with Node's http module (what the client speaks) and curl for reference. The
// targets: `svc --version` ≤ 1.5× `node -e 0`; `svc emails send` ≤ 3× `node -e 0` on Node 24; `svc emails send`,
// `svc inbox` and `svc events list` ≤ 1.5× their fetch floor. The fetch floor as written waits at exit for V8 to finish
// optimising fetch's WebAssembly parser: each also runs kept to Liftoff (bench/floors/liftoff.mjs). `BENCH_RUNS=N`
// changes the number of runs (default 30); `BENCH_NODE=/path/to/node` times another Node (the server stays on this
// one; client commands load no native module, so the node_modules installed for this Node serve).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { machineTicks, spawnServe, speedLine, stealLine } from './common.js';

const RUNS = Number(process.env.BENCH_RUNS ?? 30);
const NODE = process.env.BENCH_NODE || process.execPath;

const machineBefore = await machineTicks();
const server = await spawnServe(['--send-rate', '100000']);
const { api, seed, admin_token } = server.ready;
const home = mkdtempSync(join(tmpdir(), 'svc-bench-cli-'));
// Every command timed gets only this environment. NODE_EXTRA_CA_CERTS above all stays unset: where it is set (this
// machine sets it), every Node process reads and parses that many certificates before running a line.
const base = { PATH: process.env.PATH!, HOME: home, SVC_BASE_URL: api, SVC_CONFIG_DIR: join(home, 'config') };
const key = { SVC_API_KEY: seed.api_key_test };
const admin = { SVC_ADMIN_TOKEN: admin_token };
const mail = [`Shop <orders@${seed.domain}>`, 'delivered@simulator.test', 'Bench', 'hello'] as const;
const send = ['emails', 'send', '--from', mail[0], '--to', mail[1], '--subject', mail[2], '--text', mail[3]];
const sendBody = JSON.stringify({ from: mail[0], to: [mail[1]], subject: mail[2], text: mail[3] });

interface Case {
  name: string;
  command: string;
  args: string[];
  env?: Record<string, string>;
  /** The case this one is measured against, and the target of that ratio. */
  floor?: string;
  target?: string;
  /** Another it is shown against. */
  strictFloor?: string;
  /** Also shown against `node -e 0`, with this target. */
  nodeTarget?: string;
}

/** Turns the compile cache off: the run compiles all it loads, as the first run after an install does. */
const noCache = { NODE_DISABLE_COMPILE_CACHE: '1' };

const svc = (...args: string[]) => ['bin/svc.js', ...args];
const curl = (...args: string[]) => ['-sS', '-f', '-o', '/dev/null', '-H', 'Service-Version: 2026-08-01', ...args];
const cases: Case[] = [
  { name: 'node -e 0', command: NODE, args: ['-e', '0'] },
  { name: 'svc --version', command: NODE, args: svc('--version'), floor: 'node -e 0', target: '1.5' },
  {
    name: 'svc --version (no compile cache)',
    command: NODE,
    args: svc('--version'),
    env: noCache,
    floor: 'node -e 0',
    target: '1.5',
  },
  {
    name: 'svc emails send (no compile cache)',
    command: NODE,
    args: svc(...send),
    env: { ...key, ...noCache },
    floor: 'node -e 0',
    target: '3 (Node 24)',
  },
  { name: 'floor: send with node:http', command: NODE, args: ['bench/floors/send-http.mjs', ...mail], env: key },

  ...group(
    'send',
    ['bench/floors/send.mjs', ...mail],
    key,
    curl(
      '-H',
      `Authorization: Bearer ${seed.api_key_test}`,
      '-H',
      'Content-Type: application/json',
      '-d',
      sendBody,
      `${api}/emails`,
    ),
    { name: 'svc emails send (SVC_API_KEY)', args: svc(...send), env: key, nodeTarget: '3 (Node 24)' },
    { name: 'svc emails send (key saved in the profile)', args: svc(...send), env: { SVC_CREDENTIAL_STORE: 'file' } },
  ),
  ...group(
    'inbox',
    ['bench/floors/inbox.mjs'],
    admin,
    curl('-H', `Authorization: Bearer ${admin_token}`, api.replace(/\/v1$/, '/sandbox/messages')),
    { name: 'svc inbox (SVC_ADMIN_TOKEN)', args: svc('inbox'), env: admin },
  ),
  ...group(
    'events',
    ['bench/floors/events.mjs'],
    key,
    curl('-H', `Authorization: Bearer ${seed.api_key_test}`, `${api}/events`),
    { name: 'svc events list (SVC_API_KEY)', args: svc('events', 'list'), env: key },
  ),
];

/** A one-request command's cases: its floor (as written, and kept to Liftoff), curl, and svc measured against the floor. */
function group(
  what: string,
  floor: string[],
  env: Record<string, string>,
  curlArgs: string[],
  ...runs: { name: string; args: string[]; env: Record<string, string>; nodeTarget?: string }[]
): Case[] {
  const plain = `floor: ${what} with fetch`;
  const liftoff = `${plain}, Liftoff only`;
  return [
    { name: plain, command: NODE, args: floor, env },
    { name: liftoff, command: NODE, args: ['--import', './bench/floors/liftoff.mjs', ...floor], env },
    { name: `curl: ${what}`, command: 'curl', args: curlArgs },
    ...runs.map((r) => ({ ...r, command: NODE, floor: plain, target: '1.5', strictFloor: liftoff })),
  ];
}

function once(c: Case): number {
  const t = performance.now();
  const r = spawnSync(c.command, c.args, { env: { ...base, ...c.env }, encoding: 'utf8' });
  const ms = performance.now() - t;
  if (r.status !== 0) throw new Error(`${c.name} exited with ${r.status}: ${r.stderr}`);
  return ms;
}

// The profile's saved key: created and saved through the CLI itself.
const login = spawnSync(NODE, svc('login', '--email', seed.email, '--password-stdin'), {
  env: { ...base, SVC_CREDENTIAL_STORE: 'file' },
  input: seed.password,
  encoding: 'utf8',
});
if (login.status !== 0) throw new Error(`login failed: ${login.stderr}`);
const created = spawnSync(NODE, svc('keys', 'create', '--name', 'bench', '--scope', 'emails:send', '--save'), {
  env: { ...base, SVC_CREDENTIAL_STORE: 'file' },
  encoding: 'utf8',
});
if (created.status !== 0) throw new Error(`keys create failed: ${created.stderr}`);

for (const c of cases) once(c); // warm the file cache
const times = new Map<Case, number[]>(cases.map((c) => [c, []]));
for (let i = 0; i < RUNS; i++) for (const c of cases) times.get(c)!.push(once(c));

await server.stop();
rmSync(home, { recursive: true, force: true });
const machineAfter = await machineTicks();

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;
const medianOf = (name: string) => median(times.get(cases.find((c) => c.name === name)!)!);
const version = spawnSync(NODE, ['--version'], { encoding: 'utf8' }).stdout.trim();
console.log(`bench/cli-start  (${RUNS} interleaved runs each, median wall time from spawn to exit; node ${version})`);
console.log(
  '  NODE_EXTRA_CA_CERTS is unset for every command timed (it costs each Node process ~80 ms where it is set)',
);
for (const c of cases) {
  const m = medianOf(c.name);
  const ratio = c.floor ? `${(m / medianOf(c.floor)).toFixed(2)}× ${c.floor} (target ≤ ${c.target}×)` : '';
  const strict = c.strictFloor ? `, ${(m / medianOf(c.strictFloor)).toFixed(2)}× kept to Liftoff` : '';
  const node = c.nodeTarget ? `; ${(m / medianOf('node -e 0')).toFixed(2)}× node -e 0 (target ≤ ${c.nodeTarget}×)` : '';
  console.log(`  ${c.name.padEnd(48)} ${m.toFixed(1).padStart(6)} ms   ${ratio}${strict}${node}`);
}
console.log(`  ${stealLine(machineBefore, machineAfter)}`);
console.log(`  ${await speedLine()}`);
