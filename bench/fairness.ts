// bench/fairness: one workspace floods (single sends, 16 in flight; BENCH_BATCH=100: batches of 100, 4 in flight) while
// another sends a marker every 100 ms. Prints each marker's wait, from its 202 until the sink caught it (p50, p99, max),
// for as long as the flood sends and its backlog drains, and the flood's drain rate: the messages of its backlog
// caught a second, from when it stops sending until its last message is caught. BENCH_SECONDS sets how long the flood
// sends (10). BENCH_COMPARE=DIR runs another build too (the root of another checkout, built), alternating with this one,
// in the same stretch of the machine.
import Database from 'better-sqlite3';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { html2k, machineTicks, percentile, spawnServe, speedLine, stealLine } from './common.js';

/** How long the flood sends, and how many of its batch requests are in flight at once. */
const FLOOD_SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const BATCH = Number(process.env.BENCH_BATCH ?? 1);
const PARALLEL = BATCH > 1 ? 4 : 16;
const MARKER_EVERY_MS = 100;
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2);
const compare = process.env.BENCH_COMPARE;

const key = () =>
  `svc_test_${[...randomBytes(32)].map((b) => 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789'[b % 62]).join('')}`;

/** Two workspaces, each with a verified domain and a test key of its own. */
function seedFile(dir: string, keys: { flood: string; marker: string }): string {
  const file = join(dir, 'seed.json');
  writeFileSync(
    file,
    JSON.stringify({
      users: [{ email: 'bench@fair.test', password: 'bench-fairness-only' }],
      workspaces: [{ name: 'Flood' }, { name: 'Marker' }],
      domains: [
        { name: 'flood.test', workspace: 'Flood', verified: true },
        { name: 'marker.test', workspace: 'Marker', verified: true },
      ],
      api_keys: [
        { value: keys.flood, workspace: 'Flood' },
        { value: keys.marker, workspace: 'Marker' },
      ],
    }),
  );
  return file;
}

async function run(build?: string) {
  const dir = mkdtempSync(join(tmpdir(), 'svc-bench-fair-'));
  const keys = { flood: key(), marker: key() };
  const dataDir = join(dir, 'data');
  const svc = await spawnServe(['--seed', seedFile(dir, keys), '--send-rate', '1000000', '--max-messages', 'off'], {
    dataDir,
    build,
  });
  const post = (path: string, token: string, body: unknown) =>
    fetch(`${svc.ready.api}${path}`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${token}` },
      body: JSON.stringify(body),
    });
  const item = (from: string) => ({
    from,
    to: 'delivered@simulator.test',
    subject: 'Your order',
    html: html2k(),
    text: 'Thanks for your order.',
  });
  const one = item('Shop <orders@flood.test>');
  const batch = Array.from({ length: BATCH }, () => one);
  const send = async (): Promise<number> => {
    if (BATCH === 1) {
      const res = await post('/emails', keys.flood, one);
      await res.arrayBuffer(); // read to the end: the connection goes back to the pool
      return res.status === 202 ? 1 : 0;
    }
    const out = (await (await post('/emails/batch', keys.flood, batch)).json()) as { data: { status: number }[] };
    return out.data.filter((d) => d.status === 202).length;
  };
  const machineBefore = await machineTicks();
  const started = performance.now();
  const startedAt = Date.now();
  const until = started + FLOOD_SECONDS * 1000;
  let flooded = 0;
  const flood = Promise.all(
    Array.from({ length: PARALLEL }, async () => {
      while (performance.now() < until) {
        const n = await send(); // not `flooded += await send()`: that reads flooded before the await
        flooded += n;
      }
    }),
  );
  // Markers go on until the flood's last message is caught: while it sends, and while its backlog drains.
  const markers: { id: string; accepted: number }[] = [];
  let drained = false;
  const marking = (async () => {
    while (!drained) {
      const res = await post('/emails', keys.marker, item('Alerts <alerts@marker.test>'));
      const accepted = Date.now();
      const body = (await res.json()) as { id: string };
      if (res.status === 202) markers.push({ id: body.id, accepted });
      await new Promise((r) => setTimeout(r, MARKER_EVERY_MS));
    }
  })();
  await flood;
  const sendSecs = (performance.now() - started) / 1000;

  const db = new Database(join(dataDir, 'svc.sqlite'), { readonly: true, fileMustExist: true });
  // The flood's caught mail: everything caught outside the markers' workspace.
  const markerWorkspace = db.prepare('SELECT workspace_id FROM messages WHERE id = ?').pluck().get(markers[0]!.id);
  const floodCaught = db.prepare(
    'SELECT COUNT(*) AS n, MAX(received_at) AS last FROM sink_messages WHERE workspace_id <> ?',
  );
  // The backlog left when the flood stops sending: its drain, markers and all, is timed from here.
  const left = { at: Date.now(), caught: (floodCaught.get(markerWorkspace) as { n: number }).n };
  const deadline = Date.now() + 15 * 60_000;
  let caught = { n: 0, last: 0 };
  while ((caught = floodCaught.get(markerWorkspace) as typeof caught).n < flooded && Date.now() < deadline)
    await new Promise((r) => setTimeout(r, 100));
  drained = true;
  await marking;
  const drainSecs = (caught.last - startedAt) / 1000;
  const backlog = { messages: flooded - left.caught, secs: (caught.last - left.at) / 1000 };
  // Wall-clock times of one machine: the marker's 202 as this process saw it, its catch as the server wrote it.
  const at = db.prepare('SELECT received_at FROM sink_messages WHERE svc_message_id = ?').pluck();
  const caughtAt = async (id: string) => {
    for (;;) {
      const t = at.get(id) as number | undefined;
      if (t !== undefined) return t;
      await new Promise((r) => setTimeout(r, 20));
    }
  };
  const waits: number[] = [];
  for (const m of markers) waits.push((await caughtAt(m.id)) - m.accepted);
  if (process.env.BENCH_DEBUG) console.log(markers.map((m, i) => `${m.accepted - startedAt}:${waits[i]}`).join(' '));
  waits.sort((a, b) => a - b);
  db.close();
  const steal = stealLine(machineBefore, await machineTicks());
  await svc.stop();
  rmSync(dir, { recursive: true, force: true });
  return { flooded, sendSecs, caught: caught.n, drainSecs, backlog, waits, steal };
}

console.log(
  `bench/fairness  (workspace Flood: ${PARALLEL} requests of ${BATCH} message${BATCH > 1 ? 's' : ''} in flight for ${FLOOD_SECONDS} s; ` +
    `workspace Marker: one message every ${MARKER_EVERY_MS} ms until the flood has drained)`,
);
const builds: [string, string | undefined][] = compare
  ? [
      ['this build', undefined],
      [compare, compare],
    ]
  : [['this build', undefined]];
for (let round = 1; round <= ROUNDS; round++) {
  for (const [name, build] of builds) {
    const r = await run(build);
    const w = r.waits;
    console.log(`  ${name}, round ${round}`);
    console.log(
      `    flood      : ${r.flooded} accepted in ${r.sendSecs.toFixed(1)} s (${(r.flooded / r.sendSecs).toFixed(0)}/s), ` +
        `the last caught ${r.drainSecs.toFixed(1)} s after the first was sent`,
    );
    console.log(
      `    drain      : the ${r.backlog.messages} left when it stopped sending caught in ${r.backlog.secs.toFixed(1)} s: ` +
        `${(r.backlog.messages / r.backlog.secs).toFixed(0)} messages/s`,
    );
    console.log(
      `    markers    : ${w.length}, 202 → caught p50 ${percentile(w, 50)} ms, p99 ${percentile(w, 99)} ms, max ${w.at(-1)} ms   (target p99 ≤ 1000 ms)`,
    );
    console.log(`    CPU steal  : ${r.steal}`);
  }
}
console.log(`  ${await speedLine()}`);
