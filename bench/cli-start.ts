// bench/cli-start: how long the built `svc` takes from spawn to exit, against `node -e 0` (the floor any Node CLI
// pays), as medians of interleaved runs. The target: under 2× for `svc --version`, for `svc emails send` (a whole
// send to a local server) and for `svc inbox` (its caught mail, listed with the admin token). `BENCH_RUNS=N` changes
// the number of runs (default 30).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { machineTicks, shebang, spawnServe, speedLine, stealLine } from './common.js';

const RUNS = Number(process.env.BENCH_RUNS ?? 30);
/** The node flags of bin/svc.js's shebang line: `svc …` runs with them. */
const SHEBANG_FLAGS = shebang().flags;

const machineBefore = await machineTicks();
const server = await spawnServe(['--send-rate', '100000']);
const { api, seed, admin_token } = server.ready;
const home = mkdtempSync(join(tmpdir(), 'svc-bench-cli-'));
const base = { PATH: process.env.PATH!, HOME: home, SVC_BASE_URL: api, SVC_CONFIG_DIR: join(home, 'config') };
const send = ['emails', 'send', '--from', `Shop <orders@${seed.domain}>`, '--to', 'delivered@simulator.test', '--subject', 'Bench', '--text', 'hello'];

interface Case {
  name: string;
  args: string[];
  env?: Record<string, string>;
}

const svc = (...args: string[]) => [...SHEBANG_FLAGS, 'bin/svc.js', ...args];
const cases: Case[] = [
  { name: 'node -e 0', args: ['-e', '0'] },
  { name: 'svc --version', args: svc('--version') },
  { name: 'svc emails send (SVC_API_KEY)', args: svc(...send), env: { SVC_API_KEY: seed.api_key_test } },
  { name: 'svc emails send (key saved in the profile)', args: svc(...send), env: { SVC_CREDENTIAL_STORE: 'file' } },
  { name: 'svc inbox (SVC_ADMIN_TOKEN)', args: svc('inbox'), env: { SVC_ADMIN_TOKEN: admin_token } },
];

function once(c: Case): number {
  const t = performance.now();
  const r = spawnSync(process.execPath, c.args, { env: { ...base, ...c.env }, encoding: 'utf8' });
  const ms = performance.now() - t;
  if (r.status !== 0) throw new Error(`${c.name} exited with ${r.status}: ${r.stderr}`);
  return ms;
}

// The profile's saved key for the last case: created and saved through the CLI itself.
const login = spawnSync(process.execPath, svc('login', '--email', seed.email, '--password-stdin'), {
  env: { ...base, SVC_CREDENTIAL_STORE: 'file' }, input: seed.password, encoding: 'utf8',
});
if (login.status !== 0) throw new Error(`login failed: ${login.stderr}`);
const created = spawnSync(process.execPath, svc('keys', 'create', '--name', 'bench', '--scope', 'emails:send', '--save'), {
  env: { ...base, SVC_CREDENTIAL_STORE: 'file' }, encoding: 'utf8',
});
if (created.status !== 0) throw new Error(`keys create failed: ${created.stderr}`);

for (const c of cases) once(c); // warm the file cache
const times = new Map<Case, number[]>(cases.map((c) => [c, []]));
for (let i = 0; i < RUNS; i++) for (const c of cases) times.get(c)!.push(once(c));

await server.stop();
rmSync(home, { recursive: true, force: true });
const machineAfter = await machineTicks();

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;
const floor = median(times.get(cases[0]!)!);
console.log(`bench/cli-start  (${RUNS} interleaved runs each, median wall time from spawn to exit; node ${process.version})`);
for (const c of cases) {
  const m = median(times.get(c)!);
  console.log(`  ${c.name.padEnd(44)} ${m.toFixed(1).padStart(6)} ms   ${(m / floor).toFixed(2)}× node -e 0`);
}
console.log(`  ${stealLine(machineBefore, machineAfter)}`);
console.log(`  ${await speedLine()}`);
