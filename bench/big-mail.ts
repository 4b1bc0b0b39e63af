// bench/big-mail: the server's memory while it carries big messages. `svc serve` (built, fresh data directory) gets
//   attachments, sequential: ten sends one after another, each a request body of about 35 MB (a base64 attachment),
//   attachments, concurrent: five sends of about 30 MB at once (retried after a 429, as the client does: the body
//               budget takes one such request at a time),
//   text, sequential: ten sends one after another whose text body is about 35 MB (and no attachment),
//   text, concurrent: three sends of a text body of about 30 MB at once,
// each phase until the sink holds every message; then every text message is opened once (GET /sandbox/messages/{id},
// the first read, which parses it). The server's RSS (VmRSS) is sampled every 100 ms: idle before, the peak of each
// phase, then what is left at intervals up to 60 s after the last message arrived and was opened. Every message is
// then read back from the data directory: its attachment, or its text, compared with what was sent; and each opened
// text message's view holds the start of its text and says it is truncated.
// BENCH_PHASES=attachments or BENCH_PHASES=text runs one kind only.
import Database from 'better-sqlite3';
import { simpleParser } from 'mailparser';
import { createHash, randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { machineTicks, rssMb, spawnServe, speedLine, stealLine } from './common.js';

const SEQUENTIAL = Number(process.env.BENCH_SEQUENTIAL ?? 10);
const CONCURRENT = Number(process.env.BENCH_CONCURRENT ?? 5);
const TEXT_SEQUENTIAL = Number(process.env.BENCH_TEXT_SEQUENTIAL ?? 10);
const TEXT_CONCURRENT = Number(process.env.BENCH_TEXT_CONCURRENT ?? 3);
const PHASES = new Set((process.env.BENCH_PHASES ?? 'attachments,text').split(','));
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
const admin = { Authorization: `Bearer ${svc.ready.admin_token}` };

let rss = 0;
let peak = 0;
const sampler = setInterval(async () => {
  rss = await rssMb(pid).catch(() => rss);
  peak = Math.max(peak, rss);
}, 100);
const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** What was sent: the message id, and the attachment's name, length and hash or the text's length and hash. */
interface Sent {
  id: string;
  kind: 'attachment' | 'text';
  filename: string;
  bytes: number;
  sha256: string;
}

const sha256 = (data: Buffer | string) => createHash('sha256').update(data).digest('hex');

/** POSTs a send; a 429 (the server reads as much body as it will at once) is retried after its Retry-After. */
async function post(label: string, body: string): Promise<string> {
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
    return out.id;
  }
}

/** One send whose JSON body is about `bodyBytes` long: text, html and one attachment of random bytes filling the rest. */
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
  const sent = { kind: 'attachment' as const, filename, bytes: attachment.length, sha256: sha256(attachment) };
  return { id: await post(label, body), ...sent };
}

const WORDS = ['invoice', 'total', 'shipped', 'order', 'customer', 'café', 'naïve', 'line', 'report', '€12.50'];

/**
 * A text of about `chars` characters as an export in a mail's body looks: lines of words under 78 characters, a few
 * of them not ASCII (so it travels quoted-printable, the largest encoding of text).
 */
function bigText(chars: number): string {
  const random = randomBytes(chars / 4);
  const lines: string[] = [];
  let length = 0;
  let line = '';
  for (let i = 0; length < chars; i++) {
    const word = `${WORDS[random[i % random.length]! % WORDS.length]}${random[(i * 7) % random.length]}`;
    if (line.length + word.length + 1 > 72) {
      lines.push(line);
      length += line.length + 1;
      line = '';
    }
    line = line ? `${line} ${word}` : word;
  }
  lines.push(line);
  return lines.join('\n');
}

/** One send whose text body is about `chars` characters long (and no HTML, no attachment). */
async function sendText(label: string, chars: number): Promise<Sent & { text: string }> {
  const text = bigText(chars);
  const body = JSON.stringify({
    from: `Reports <reports@${seed.domain}>`,
    to: 'delivered@simulator.test',
    subject: `Log export ${label}`,
    text,
  });
  const sent = { kind: 'text' as const, filename: label, bytes: text.length, sha256: sha256(text), text };
  return { id: await post(label, body), ...sent };
}

/** The sink's ids of the `/v1` messages of `sent`, once it has caught every one (GET /sandbox/messages). */
async function caught(sent: Sent[]): Promise<Map<string, string>> {
  const want = new Set(sent.map((s) => s.id));
  const deadline = Date.now() + 10 * 60_000;
  for (;;) {
    // A connection the server closed as idle may be picked for this request as it closes: asked again.
    const res = await fetch(`${origin}/sandbox/messages?limit=100`, { headers: admin }).catch(() => null);
    if (!res) continue;
    const list = (await res.json()) as { data: { id: string; message_id: string | null }[] };
    const have = new Map(list.data.map((m) => [m.message_id, m.id]));
    if ([...want].every((id) => have.has(id))) return have as Map<string, string>;
    if (Date.now() > deadline)
      throw new Error(`only ${[...want].filter((id) => have.has(id)).length} of ${want.size} messages arrived`);
    await pause(200);
  }
}

/** Runs a phase; reports its time and the server's peak RSS while it ran. */
async function phase<T extends Sent>(title: string, work: () => Promise<T[]>): Promise<T[]> {
  peak = rss;
  const started = performance.now();
  const sent = await work();
  await caught(sent);
  await pause(150);
  report(title, `${sent.length} caught`, started);
  return sent;
}

let overall = 0;
function report(title: string, what: string, started: number): void {
  const secs = (performance.now() - started) / 1000;
  overall = Math.max(overall, peak);
  console.log(
    `  ${title}: ${what} in ${secs.toFixed(1)} s; server peak RSS ${peak.toFixed(0)} MB   (target ≤ ${TARGET_PEAK_MB})`,
  );
}

console.log(
  `bench/big-mail  (test key, DKIM-signed; ${[
    PHASES.has('attachments') &&
      `${SEQUENTIAL} sequential sends of a ~35 MB attachment body, ${CONCURRENT} concurrent of ~30 MB`,
    PHASES.has('text') &&
      `${TEXT_SEQUENTIAL} sequential sends of a ~35 MB text body, ${TEXT_CONCURRENT} concurrent of ~30 MB, each opened once`,
  ]
    .filter(Boolean)
    .join('; then ')}; node ${process.version})`,
);
await pause(2_000);
const idle = await rssMb(pid);
console.log(`  idle RSS before: ${idle.toFixed(0)} MB`);
const machineBefore = await machineTicks();

const all: Sent[] = [];
if (PHASES.has('attachments')) {
  all.push(
    ...(await phase('attachments, sequential', async () => {
      const out: Sent[] = [];
      for (let i = 0; i < SEQUENTIAL; i++) out.push(await sendBig(`seq-${i}`, SEQUENTIAL_BODY));
      return out;
    })),
  );
  all.push(
    ...(await phase('attachments, concurrent', () =>
      Promise.all(Array.from({ length: CONCURRENT }, (_, i) => sendBig(`con-${i}`, CONCURRENT_BODY))),
    )),
  );
}
/** Each text message's start, to compare its view with. */
const texts = new Map<string, string>();
if (PHASES.has('text')) {
  const keep = (s: Sent & { text: string }) => {
    texts.set(s.id, s.text.slice(0, 4096));
    return { ...s, text: undefined };
  };
  const sequential = await phase('text, sequential', async () => {
    const out: Sent[] = [];
    for (let i = 0; i < TEXT_SEQUENTIAL; i++) out.push(keep(await sendText(`text-seq-${i}`, SEQUENTIAL_BODY)));
    return out;
  });
  const concurrent = await phase('text, concurrent', async () =>
    (
      await Promise.all(Array.from({ length: TEXT_CONCURRENT }, (_, i) => sendText(`text-con-${i}`, CONCURRENT_BODY)))
    ).map(keep),
  );
  all.push(...sequential, ...concurrent);
  // The first read of each: the message's view, which parses it and keeps what it shows.
  peak = rss;
  const started = performance.now();
  const ids = await caught([...sequential, ...concurrent]);
  let shown = 0;
  for (const s of [...sequential, ...concurrent]) {
    const res = await fetch(`${origin}/sandbox/messages/${ids.get(s.id)}`, { headers: admin });
    const view = (await res.json()) as { text?: string; truncated?: boolean };
    const start = texts.get(s.id)!;
    if (res.status === 200 && view.truncated === true && view.text?.startsWith(start)) shown++;
    else
      console.log(
        `  ${s.id}: the view answered ${res.status}, truncated ${view.truncated}, text did not start as sent`,
      );
  }
  report('text, opened', `${shown} of ${texts.size} views show their text's start, marked truncated,`, started);
}
const machineAfter = await machineTicks();
console.log(`  peak RSS of the workload: ${overall.toFixed(0)} MB   (target ≤ ${TARGET_PEAK_MB})`);

// After the last message arrived (and was opened): nothing more is sent, the server is left alone.
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

// Every message arrived whole: its attachment, or its text, as stored by the sink, is what was sent.
const db = new Database(join(dataDir, 'svc.sqlite'), { readonly: true, fileMustExist: true });
// A raw source's first MiB is in sink_content, the rest in sink_raw_pieces.
const headOf = db.prepare(
  'SELECT c.seq, c.raw FROM sink_messages s JOIN sink_content c ON c.seq = s.seq WHERE s.svc_message_id = ?',
);
const piecesOf = db.prepare('SELECT bytes FROM sink_raw_pieces WHERE seq = ? ORDER BY n').pluck();
const rawOf = (id: string): Buffer | undefined => {
  const head = headOf.get(id) as { seq: number; raw: Buffer } | undefined;
  return head && Buffer.concat([head.raw, ...(piecesOf.all(head.seq) as Buffer[])]);
};
let intact = 0;
for (const s of all) {
  const raw = rawOf(s.id);
  const bytes = raw ? (s.kind === 'attachment' ? attachmentOf(raw, s.filename) : await textOf(raw)) : null;
  if (bytes && bytes.length === s.bytes && sha256(bytes) === s.sha256) intact++;
  else
    console.log(
      `  ${s.id} (${s.filename}): the ${s.kind} did not arrive intact (${bytes?.length ?? 'no'} of ${s.bytes})`,
    );
}
db.close();
console.log(`  intact: ${intact} of ${all.length} messages' attachment or text arrived as sent`);
console.log(`  CPU steal       : ${stealLine(machineBefore, machineAfter)}`);
console.log(`  machine speed   : ${await speedLine()}`);
await svc.stop();
if (intact !== all.length || texts.size !== all.filter((s) => s.kind === 'text').length) process.exitCode = 1;

/** The decoded content of the base64 part named `filename` in a raw message. */
function attachmentOf(raw: Buffer, filename: string): Buffer | null {
  const named = raw.indexOf(filename);
  if (named < 0) return null;
  const start = raw.indexOf('\r\n\r\n', named);
  const end = raw.indexOf('\r\n--', start);
  if (start < 0 || end < 0) return null;
  return Buffer.from(raw.subarray(start + 4, end).toString('latin1'), 'base64');
}

/** The text of a raw message, decoded by mailparser (here, in the bench's process). */
async function textOf(raw: Buffer): Promise<string | null> {
  const parsed = await simpleParser(raw, { skipHtmlToText: true, skipTextToHtml: true });
  return parsed.text?.replace(/\n$/, '') ?? null;
}
