// bench/big-mail: the server's memory while it carries big messages. `svc serve` (built, fresh data directory) gets
//   sequential: ten sends one after another, each a request body of about 35 MB (a base64 attachment), then
//   concurrent: five sends of about 30 MB at once (retried after a 429, as the client does: the body budget takes one
//               such request at a time);
// each phase until the sink holds every message. The server's RSS (VmRSS) is sampled every 100 ms: idle before, the
// peak of each phase, then what is left at intervals up to 60 s after the last message arrived. Every message is
// then read back from the data directory and its attachment compared with what was sent.
import Database from 'better-sqlite3';
import { createHash, randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { machineTicks, rssMb, spawnServe, speedLine, stealLine } from './common.js';

const SEQUENTIAL = Number(process.env.BENCH_SEQUENTIAL ?? 10);
const CONCURRENT = Number(process.env.BENCH_CONCURRENT ?? 5);
const SEQUENTIAL_BODY = 35_000_000;
const CONCURRENT_BODY = 30_000_000;
const SETTLE_AT_S = [1, 5, 10, 20, 30, 45, 60];
const TARGET_PEAK_MB = 500;
const TARGET_SETTLED_MB = 250;

const svc = await spawnServe();
const pid = svc.proc.pid!;
const dataDir = svc.proc.spawnargs[svc.proc.spawnargs.indexOf('--data-dir') + 1]!;
const origin = svc.ready.api.replace(/\/v1$/, '');
const seed = svc.ready.seed!;

let rss = 0;
let peak = 0;
const sampler = setInterval(async () => {
  rss = await rssMb(pid).catch(() => rss);
  peak = Math.max(peak, rss);
}, 100);
const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** What was sent: the message id, the attachment's name, length and hash. */
interface Sent {
  id: string;
  filename: string;
  bytes: number;
  sha256: string;
}

/**
 * One send whose JSON body is about `bodyBytes` long: text, html and one attachment of random bytes filling the rest.
 * A 429 (the server reads as much body as it will at once) is retried after its Retry-After.
 */
async function sendBig(label: string, bodyBytes: number): Promise<Sent> {
  const attachment = randomBytes(Math.floor(((bodyBytes - 2_000) * 3) / 4));
  const filename = `${label}.bin`;
  const body = JSON.stringify({
    from: `Reports <reports@${seed.domain}>`,
    to: 'delivered@simulator.test',
    subject: `Monthly export ${label}`,
    text: 'The export is attached.',
    html: '<p>The export is attached.</p>',
    attachments: [{ filename, content: attachment.toString('base64'), content_type: 'application/octet-stream' }],
  });
  const sent = { filename, bytes: attachment.length, sha256: createHash('sha256').update(attachment).digest('hex') };
  for (let attempt = 1; ; attempt++) {
    const res = await fetch(`${svc.ready.api}/emails`, {
      method: 'POST',
      headers: {
        'Content-Type': 'application/json',
        Authorization: `Bearer ${seed.api_key_test}`,
        'Idempotency-Key': `big-mail-${label}`,
      },
      body,
    }).catch((err: Error) => {
      // A 429 answered before the body was read closes the connection under the upload: the client sees the
      // connection break instead. The Idempotency-Key makes sending again safe.
      if (attempt >= 100) throw err;
      return null;
    });
    if (!res) {
      await pause(1000);
      continue;
    }
    if (res.status === 429) {
      await res.arrayBuffer();
      await pause(Number(res.headers.get('retry-after') ?? 1) * 1000);
      continue;
    }
    const out = (await res.json()) as { id?: string };
    if (res.status !== 202 || !out.id) throw new Error(`send ${label} answered ${res.status}: ${JSON.stringify(out)}`);
    return { id: out.id, ...sent };
  }
}

/** Waits until the sink has caught every message of `sent` (GET /sandbox/messages with the admin token). */
async function caught(sent: Sent[]): Promise<void> {
  const want = new Set(sent.map((s) => s.id));
  const deadline = Date.now() + 10 * 60_000;
  for (;;) {
    const res = await fetch(`${origin}/sandbox/messages?limit=100`, {
      headers: { Authorization: `Bearer ${svc.ready.admin_token}` },
    });
    const list = (await res.json()) as { data: { message_id: string | null }[] };
    const have = new Set(list.data.map((m) => m.message_id));
    if ([...want].every((id) => have.has(id))) return;
    if (Date.now() > deadline)
      throw new Error(`only ${[...want].filter((id) => have.has(id)).length} of ${want.size} messages arrived`);
    await pause(200);
  }
}

/** Runs a phase; reports its time and the server's peak RSS while it ran. */
async function phase(title: string, work: () => Promise<Sent[]>): Promise<Sent[]> {
  peak = rss;
  const started = performance.now();
  const sent = await work();
  await caught(sent);
  await pause(150);
  const secs = (performance.now() - started) / 1000;
  console.log(
    `  ${title}: ${sent.length} caught in ${secs.toFixed(1)} s; server peak RSS ${peak.toFixed(0)} MB   (target ≤ ${TARGET_PEAK_MB})`,
  );
  return sent;
}

console.log(
  `bench/big-mail  (${SEQUENTIAL} sequential sends of ~35 MB, then ${CONCURRENT} concurrent of ~30 MB; test key, DKIM-signed)`,
);
await pause(2_000);
const idle = await rssMb(pid);
console.log(`  idle RSS before: ${idle.toFixed(0)} MB`);
const machineBefore = await machineTicks();

let overall = 0;
const all: Sent[] = [];
all.push(
  ...(await phase('sequential', async () => {
    const out: Sent[] = [];
    for (let i = 0; i < SEQUENTIAL; i++) out.push(await sendBig(`seq-${i}`, SEQUENTIAL_BODY));
    return out;
  })),
);
overall = Math.max(overall, peak);
all.push(
  ...(await phase('concurrent', () =>
    Promise.all(Array.from({ length: CONCURRENT }, (_, i) => sendBig(`con-${i}`, CONCURRENT_BODY))),
  )),
);
overall = Math.max(overall, peak);
const machineAfter = await machineTicks();
console.log(`  peak RSS of the workload: ${overall.toFixed(0)} MB   (target ≤ ${TARGET_PEAK_MB})`);

// After the last message arrived: nothing more is sent, the server is left alone.
const settledFrom = performance.now();
const settled: string[] = [];
let within: number | null = null;
for (const at of SETTLE_AT_S) {
  await pause(Math.max(0, settledFrom + at * 1000 - performance.now()));
  const now = await rssMb(pid);
  settled.push(`${at} s ${now.toFixed(0)}`);
  if (within === null && now <= TARGET_SETTLED_MB) within = at;
}
clearInterval(sampler);
console.log(
  `  RSS after the last arrival (MB): ${settled.join(', ')}   (target ≤ ${TARGET_SETTLED_MB} within 60 s: ${within === null ? 'not met' : `met at ${within} s`})`,
);

// Every message arrived whole: its attachment, as stored by the sink, decodes to the bytes sent.
const db = new Database(join(dataDir, 'svc.sqlite'), { readonly: true, fileMustExist: true });
const rawOf = db
  .prepare('SELECT c.raw FROM sink_messages s JOIN sink_content c ON c.seq = s.seq WHERE s.svc_message_id = ?')
  .pluck();
let intact = 0;
for (const s of all) {
  const raw = rawOf.get(s.id) as Buffer | undefined;
  const bytes = raw ? attachmentOf(raw, s.filename) : null;
  if (bytes && bytes.length === s.bytes && createHash('sha256').update(bytes).digest('hex') === s.sha256) intact++;
  else
    console.log(
      `  ${s.id} (${s.filename}): the attachment did not arrive intact (${bytes?.length ?? 'no'} bytes of ${s.bytes})`,
    );
}
db.close();
console.log(`  intact: ${intact} of ${all.length} attachments arrived byte for byte`);
console.log(`  CPU steal       : ${stealLine(machineBefore, machineAfter)}`);
console.log(`  machine speed   : ${await speedLine()}`);
await svc.stop();
if (intact !== all.length) process.exitCode = 1;

/** The decoded content of the base64 part named `filename` in a raw message. */
function attachmentOf(raw: Buffer, filename: string): Buffer | null {
  const named = raw.indexOf(filename);
  if (named < 0) return null;
  const start = raw.indexOf('\r\n\r\n', named);
  const end = raw.indexOf('\r\n--', start);
  if (start < 0 || end < 0) return null;
  return Buffer.from(raw.subarray(start + 4, end).toString('latin1'), 'base64');
}
