// bench/inbox: the inbox's listing over a large sink. 100,000 messages are caught into a fresh data directory through
// the sink's own ingest (header parse, body glance, search index; stored directly, not over SMTP), half of them linked
// to `/v1` messages of a workspace; then `svc serve` starts on it and GET /sandbox/messages is timed over HTTP: the
// first page, a page 99,000 messages deep by cursor, a workspace's pages, searches, and the listing of the mail to one
// address that every inbox wait makes. Target: first and deep page
// under 50 ms. The newest BENCH_LARGE messages (default 10) are 5 MB each, so the first page holds them and the second
// none: the listing must not pay for the size of the messages it lists.
import nodemailer from 'nodemailer';
import { mkdtempSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { manualClock } from '../src/lib/clock.js';
import { silentLogger } from '../src/lib/log.js';
import { createInbox } from '../src/server/core/inbox.js';
import { ingest } from '../src/server/inbound/sink.js';
import { groupCommit, openDb } from '../src/server/store/db.js';
import { createInboxStore } from '../src/server/store/inbox.js';
import { speedLine, spawnServe } from './common.js';

const TOTAL = Number(process.env.BENCH_MESSAGES ?? 100_000);
const PAGE = 50;
const REQUESTS = 200;
const WORKSPACE = 'ws_benchinbox00000000000000';
const LARGE = Number(process.env.BENCH_LARGE ?? 10);
const LARGE_BYTES = 5 * 1024 * 1024;

// A vocabulary of made-up words: common ones in most bodies, rare ones in a few.
const words = Array.from({ length: 3000 }, (_, i) => `w${i.toString(36)}${'aeiou'[i % 5]}`);
let seed = 42;
const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
const pick = () => words[Math.floor(random() ** 2 * words.length)]!; // skewed: low indexes are common
const sentence = (n: number) => Array.from({ length: n }, pick).join(' ');

/** A few dozen message shapes, as the service and other programs send them; MSGID and TOKEN are replaced per message. */
async function templates(): Promise<Buffer[]> {
  const t = nodemailer.createTransport({ streamTransport: true, buffer: true, newline: 'windows' });
  const out: Buffer[] = [];
  for (let i = 0; i < 40; i++) {
    const body = `Your order ${i} ${sentence(150 + (i % 7) * 60)}`;
    const info = (await t.sendMail({
      from: `Shop ${i} <orders${i % 5}@shop${i % 3}.example>`,
      to: `customer${i}@example.test`,
      cc: i % 4 === 0 ? `copy${i}@example.test` : undefined,
      subject: `Order ${1000 + i}: ${sentence(4)} TOKEN`,
      messageId: `<MSGID@shop${i % 3}.example>`,
      text: i % 3 === 2 ? undefined : body,
      html: i % 3 === 0 ? undefined : `<html><body><h1>Order ${i}</h1><p>${body}</p></body></html>`,
      attachments: i % 5 === 0 ? [{ filename: `invoice-${i}.pdf`, content: Buffer.alloc(2048, i) }] : undefined,
    })) as unknown as { message: Buffer };
    out.push(info.message);
  }
  return out;
}

/** A message of about LARGE_BYTES: a short text and a PDF attachment (base64). */
async function largeTemplate(): Promise<Buffer> {
  const t = nodemailer.createTransport({ streamTransport: true, buffer: true, newline: 'windows' });
  const info = (await t.sendMail({
    from: 'Reports <reports@shop0.example>',
    to: 'customer1@example.test',
    subject: 'Your yearly statement TOKEN',
    messageId: '<MSGID@shop0.example>',
    text: `Your statement is attached. ${sentence(80)}`,
    attachments: [{ filename: 'statement.pdf', content: Buffer.alloc(Math.floor((LARGE_BYTES * 3) / 4), 7) }],
  })) as unknown as { message: Buffer };
  return info.message;
}

/**
 * Fills a data directory's database with TOTAL caught messages, the newest LARGE of them large ones; returns the ids
 * of the one 99,000 deep and of the last of the first page (newest first).
 */
async function fill(dataDir: string): Promise<{ deepId: string; secondPageAfter: string; perSecond: number }> {
  const { db } = openDb({ dataDir });
  db.prepare(
    `INSERT INTO workspaces (id, name, slug, status, pinned_version, created_at) VALUES (?, 'Bench', 'bench', 'active', '2026-08-01', 0)`,
  ).run(WORKSPACE);
  const addMessage = db.prepare(
    `INSERT INTO messages (id, workspace_id, key_id, mode, domain_id, status, from_header, from_email, to_addrs, cc_addrs, bcc_addrs,
       reply_to, subject, html, text, attachments, headers, tags, tracking, scheduled_at, created_at, updated_at)
     VALUES (?, ?, 'key_bench', 'test', 'dom_bench', ?, '', '', '[]', '[]', '[]', '[]', '', NULL, NULL, '[]', '{}', '[]', '{}', NULL, 0, 0)`,
  );
  const statuses = ['delivered', 'delivered', 'delivered', 'bounced', 'complained'];
  const store = createInboxStore(db);
  const commit = groupCommit(db);
  const clock = manualClock(Date.now() - TOTAL * 1000);
  const shapes = await templates();
  const inbox = createInbox({
    store,
    commit,
    clock,
    // Every other message is a /v1 message of the workspace (as the service's own mail is linked).
    origin: (header: string) => {
      const id = /^<(msg_\w+)@/.exec(header)?.[1];
      return id
        ? { fromService: true, messageId: id, workspaceId: WORKSPACE }
        : { fromService: false, messageId: null, workspaceId: null };
    },
  });
  const sink = { inbox, log: silentLogger };
  const large = await largeTemplate();
  const started = performance.now();
  for (let n = 0; n < TOTAL; n += 1000) {
    const batch: Promise<string | null>[] = [];
    for (let i = n; i < Math.min(TOTAL, n + 1000); i++) {
      const linked = i % 2 === 0;
      const id = linked ? `msg_bench${String(i).padStart(19, '0')}` : `other${i}`;
      if (linked) addMessage.run(id, WORKSPACE, statuses[i % statuses.length]);
      // A word in one message of every thousand (tok0000 … tok0999), for a search that finds few.
      const token = `tok${String(i % 1000).padStart(4, '0')}`;
      const shape = i >= TOTAL - LARGE ? large : shapes[i % shapes.length]!;
      const raw = Buffer.from(shape.toString('latin1').replace('MSGID', id).replace('TOKEN', token), 'latin1');
      clock.advance(1000);
      batch.push(ingest(sink, raw, { mailFrom: 'bounces@shop.example', rcptTo: [`customer${i % 40}@example.test`] }));
    }
    await Promise.all(batch);
  }
  const perSecond = TOTAL / ((performance.now() - started) / 1000);
  const nth = (n: number) =>
    (db.prepare('SELECT id FROM sink_messages ORDER BY seq DESC LIMIT 1 OFFSET ?').get(n) as { id: string }).id;
  const deepId = nth(Math.min(99_000, TOTAL - PAGE));
  const secondPageAfter = nth(PAGE - 1);
  db.pragma('wal_checkpoint(TRUNCATE)');
  db.close();
  return { deepId, secondPageAfter, perSecond };
}

async function time(url: string, token: string): Promise<{ median: number; p95: number; rows: number }> {
  const get = async () => {
    const res = await fetch(url, { headers: { Authorization: `Bearer ${token}` } });
    const body = (await res.json()) as { data: unknown[] };
    if (!res.ok) throw new Error(`${url}: ${res.status} ${JSON.stringify(body)}`);
    return body.data.length;
  };
  for (let i = 0; i < 20; i++) await get();
  const ms: number[] = [];
  let rows = 0;
  for (let i = 0; i < REQUESTS; i++) {
    const t = performance.now();
    rows = await get();
    ms.push(performance.now() - t);
  }
  ms.sort((a, b) => a - b);
  return { median: ms[Math.floor(ms.length / 2)]!, p95: ms[Math.floor(ms.length * 0.95)]!, rows };
}

const dataDir = mkdtempSync(join(tmpdir(), 'svc-bench-inbox-'));
console.log(
  `bench/inbox  (${TOTAL} caught messages, the newest ${LARGE} of ${(LARGE_BYTES / 1024 / 1024).toFixed(0)} MB; ${PAGE} a page, ${REQUESTS} requests each after 20 to warm up)`,
);
const { deepId, secondPageAfter, perSecond } = await fill(dataDir);
const dbMb = statSync(join(dataDir, 'svc.sqlite')).size / 1024 / 1024;
console.log(
  `  filled through the sink's ingest at ${Math.round(perSecond)} messages/s; database ${dbMb.toFixed(0)} MB`,
);

// Retention off: the default --max-messages would prune the filled sink to 10,000 while it is measured.
const svc = await spawnServe(['--max-messages', 'off'], { dataDir });
try {
  const base = `${svc.ready.api.replace(/\/v1$/, '')}/sandbox/messages?limit=${PAGE}`;
  const cases: [string, string, boolean][] = [
    [`first page (${Math.min(LARGE, PAGE)} large)`, base, true],
    ['second page (after=, none large)', `${base}&after=${secondPageAfter}`, true],
    ['page 99,000 deep (after=)', `${base}&after=${deepId}`, true],
    [
      `a workspace, first page (${Math.ceil(Math.min(LARGE, PAGE * 2) / 2)} large)`,
      `${base}&workspace_id=${WORKSPACE}`,
      false,
    ],
    ['a workspace, 49,000 deep', `${base}&workspace_id=${WORKSPACE}&after=${deepId}`, false],
    [`search, a common word ("${words[0]}")`, `${base}&q=${words[0]}`, false],
    [`search, common word 99,000 deep`, `${base}&q=${words[0]}&after=${deepId}`, false],
    ['search, a word in 1 of 1,000 ("tok0123")', `${base}&q=tok0123`, false],
    ['search, to:customer7', `${base}&q=to:customer7`, false],
    // A wait's listing: the unclaimed mail to its address since it began (sink_recipients leads).
    [
      "a wait's listing, an address with no mail",
      `${base}&to=nobody@example.test&claimed=false&since=2000-01-01T00:00:00Z`,
      false,
    ],
    [`to=customer7@example.test (1 in 40 messages)`, `${base}&to=customer7@example.test`, false],
    [
      'search, subject:"order 1013" is:unread',
      `${base}&q=${encodeURIComponent('subject:"order 1013" is:unread')}`,
      false,
    ],
  ];
  for (const [name, url, target] of cases) {
    const r = await time(url, svc.ready.admin_token);
    const verdict = target ? `   (target < 50 ms: ${r.p95 < 50 ? 'met' : 'MISSED'})` : '';
    console.log(
      `  ${name.padEnd(42)} median ${r.median.toFixed(1).padStart(5)} ms  p95 ${r.p95.toFixed(1).padStart(5)} ms  ${String(r.rows).padStart(3)} rows${verdict}`,
    );
  }
} finally {
  await svc.stop();
}
console.log(`  machine speed    : ${await speedLine()}`);
