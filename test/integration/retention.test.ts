// What `svc serve` keeps (--max-messages, --max-age): caught mail pruned oldest first with its source, parts and search
// entry; with an age limit, `/v1` messages and their events too, except what something still needs; a backlog pruned
// in steps while the API keeps answering. Time moves only through the manual clock.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import nodemailer from 'nodemailer';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { HOUR } from '../../src/lib/clock.js';
import { silentLogger } from '../../src/lib/log.js';
import { createInbox } from '../../src/server/core/inbox.js';
import { ingest } from '../../src/server/inbound/sink.js';
import { groupCommit, openDb } from '../../src/server/store/db.js';
import { createInboxStore } from '../../src/server/store/inbox.js';
import { startReceiver, type Receiver } from '../helpers/receiver.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { eventsOf } from '../helpers/sse.js';
import { expectProblem, getMessage, send, sendOk, serviceNow, sim } from './emails-helpers.js';

const servers: TestServer[] = [];
const dirs: string[] = [];
const receivers: Receiver[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
  await Promise.all(receivers.splice(0).map((r) => r.close()));
});
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

async function serve(opts: Parameters<typeof startTestServer>[0] = {}): Promise<TestServer> {
  const s = await startTestServer(opts);
  servers.push(s);
  return s;
}

/** Mail from another program, over SMTP to the sink. */
async function catchMail(s: TestServer, mails: { subject: string; text: string }[]): Promise<void> {
  const t = nodemailer.createTransport({
    pool: true,
    host: '127.0.0.1',
    port: s.smtpPort,
    secure: false,
    ignoreTLS: true,
  });
  try {
    for (const m of mails) await t.sendMail({ from: 'shop@example.org', to: 'ada@example.org', ...m });
  } finally {
    t.close();
  }
}

/** Subjects of the caught mail, newest first (all of it: the sinks here are small). */
async function caughtSubjects(s: TestServer, query = ''): Promise<string[]> {
  const r = await s.admin('GET', `/sandbox/messages?limit=100${query}`);
  expect(r.status, r.text).toBe(200);
  expect(r.body.has_more).toBe(false);
  return r.body.data.map((m: { subject: string }) => m.subject);
}

describe('--max-messages', () => {
  it('keeps the newest N caught messages: the older ones go with their source, parts and search entry', async () => {
    const s = await serve({ maxMessages: 5 });
    const stream = await fetch(`${s.origin}/sandbox/stream`, { headers: { authorization: `Bearer ${s.adminToken}` } });
    const events = eventsOf(stream);
    const order = (i: number) => ({ subject: `Order ${i}`, text: `Receipt word${i}x` });
    await catchMail(s, [1, 2, 3, 4, 5].map(order));
    const firstFive = (await s.admin('GET', '/sandbox/messages')).body.data.map((m: { id: string }) => m.id).reverse();
    await catchMail(s, [6, 7, 8, 9, 10, 11, 12].map(order));
    // A pass runs every minute of service clock (and sooner as mail piles up).
    await s.advance(60);

    expect(await caughtSubjects(s)).toEqual(['Order 12', 'Order 11', 'Order 10', 'Order 9', 'Order 8']);
    // The inbox page is told which ones went.
    const gone = new Set<string>();
    while (gone.size < 7) for (const id of (await events.nextOf('deleted')).ids) gone.add(id);
    await events.close();
    expect([...gone]).toEqual(expect.arrayContaining(firstFive));

    const kept = (await s.admin('GET', '/sandbox/messages')).body.data.map((m: { id: string }) => m.id).reverse();
    for (const [i, id] of [...firstFive, ...kept].entries()) {
      const n = i < 5 ? i + 1 : i + 3;
      const [one, raw, found] = await Promise.all([
        s.admin('GET', `/sandbox/messages/${id}`),
        s.admin('GET', `/sandbox/messages/${id}/raw`),
        caughtSubjects(s, `&q=word${n}x`),
      ]);
      if (i < 5) {
        expect([one.status, raw.status, found]).toEqual([404, 404, []]);
      } else {
        expect([one.status, raw.status, found]).toEqual([200, 200, [`Order ${n}`]]);
        expect(one.body.text).toContain(`Receipt word${n}x`);
        expect(raw.text).toContain(`Subject: Order ${n}`);
      }
    }
    // Nor are the two others that went found by their words.
    expect(await caughtSubjects(s, '&q=word6x')).toEqual([]);
    expect(await caughtSubjects(s, '&q=word7x')).toEqual([]);
  });

  it('prunes a large backlog in steps, answering requests and catching mail between them', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'svc-retention-'));
    dirs.push(dataDir);
    // A sink of 3,000 messages, caught while nothing limited it.
    const first = await serve({ dataDir, maxMessages: null });
    // Through the sink's own ingest on a connection of its own, a turn's worth of messages to a commit.
    const { db } = openDb({ dataDir });
    const sink = {
      inbox: createInbox({ store: createInboxStore(db), commit: groupCommit(db), clock: first.clock }),
      log: silentLogger,
    };
    const envelope = { mailFrom: 'shop@example.org', rcptTo: ['ada@example.org'] };
    const ids = await Promise.all(
      Array.from({ length: 3000 }, (_, i) =>
        ingest(
          sink,
          Buffer.from(`From: shop@example.org\r\nTo: ada@example.org\r\nSubject: Backlog ${i}\r\n\r\nReceipt ${i}\r\n`),
          envelope,
        ),
      ),
    );
    db.close();
    const seed = first.ready.seed!;
    await first.close();

    // Started again keeping 100: the 2,900 oldest go at once, in passes, while these requests come in.
    const s = await serve({ dataDir, maxMessages: 100 });
    const oldest = ids[0]!;
    const lastToGo = ids[2899]!;
    expect(ids.every(Boolean)).toBe(true);
    const statuses = new Set<number>();
    let between = 0;
    const probes = Array.from({ length: 3 }, async () => {
      for (;;) {
        const a = await s.admin('GET', `/sandbox/messages/${oldest}/raw`);
        const b = await s.admin('GET', `/sandbox/messages/${lastToGo}/raw`);
        const list = await s.admin('GET', '/sandbox/messages?limit=5');
        for (const r of [a, b, list]) statuses.add(r.status);
        if (a.status === 404 && b.status === 200) between++;
        if (b.status === 404) return;
      }
    });
    const sent = sendOk(
      s,
      { from: 'orders@example.test', to: sim('delivered'), subject: 'During the prune', text: 'hi' },
      { key: seed.api_key_test! },
    );
    await Promise.all([...probes, sent, catchMail(s, [{ subject: 'Caught during the prune', text: 'hi' }])]);
    await s.settle();
    await s.advance(60);

    // Every request was answered, some of them while the backlog was half gone.
    expect([...statuses].sort()).toEqual([200, 404]);
    expect(between).toBeGreaterThan(0);
    const kept = await s.admin('GET', '/sandbox/messages?limit=100');
    expect(kept.body.has_more).toBe(false);
    const subjects = kept.body.data.map((m: { subject: string }) => m.subject);
    const newest = [
      'During the prune',
      'Caught during the prune',
      ...Array.from({ length: 98 }, (_, i) => `Backlog ${2902 + i}`),
    ];
    expect(subjects.sort()).toEqual(newest.sort());
  });
});

describe('--max-age', () => {
  const from = 'orders@example.test';

  it('removes caught mail and /v1 messages with their events once older than the window; younger ones, a scheduled message and an idempotency key stay', async () => {
    const s = await serve({ maxAge: HOUR });
    const key = s.seed!.api_key_test;
    const first = { from, to: sim('delivered'), subject: 'Old order', text: 'hi' };
    const old = await sendOk(s, first, { headers: { 'Idempotency-Key': 'order-1' } });
    const scheduledAt = (await serviceNow(s)) + 3 * HOUR;
    const later = await sendOk(s, {
      from,
      to: sim('delivered'),
      subject: 'Scheduled order',
      text: 'hi',
      scheduled_at: new Date(scheduledAt).toISOString(),
    });
    await catchMail(s, [{ subject: 'Old mail from elsewhere', text: 'hi' }]);
    await s.settle();
    await s.advance(30 * 60);
    const young = await sendOk(s, { from, to: sim('delivered'), subject: 'Young order', text: 'hi' });
    await s.settle();
    await s.advance(31 * 60);

    // An hour and a minute later: what is older than an hour is gone, the rest stays.
    expect(await caughtSubjects(s)).toEqual(['Young order']);
    expectProblem(await s.call('GET', `/v1/emails/${old.id}`, { token: key }), 404, 'not_found');
    expect((await getMessage(s, young.id)).events.map((e) => e.type)).toEqual([
      'email.queued',
      'email.sent',
      'email.delivered',
    ]);
    expect((await getMessage(s, later.id)).status).toBe('scheduled');
    // The seed's domain.verified stays too, as the newest (the only) event of its type.
    const listed = await s.call('GET', '/v1/events?limit=100', { token: key });
    expect(
      listed.body.data.map((e: { type: string; data: { message_id?: string } }) => [e.type, e.data.message_id ?? null]),
    ).toEqual([
      ['domain.verified', null],
      ['email.queued', young.id],
      ['email.sent', young.id],
      ['email.delivered', young.id],
    ]);

    // A send retried with its Idempotency-Key within 24 hours is answered as the first time, and not sent again.
    const again = await send(s, first, { headers: { 'Idempotency-Key': 'order-1' } });
    expect([again.status, again.body.id, again.headers.get('idempotent-replay')]).toEqual([202, old.id, 'true']);
    await s.settle();
    expect(await caughtSubjects(s)).toEqual(['Young order']);

    // The scheduled message goes out at its time, untouched.
    await s.advance(2 * 3600);
    expect((await getMessage(s, later.id)).status).toBe('delivered');
    expect(await caughtSubjects(s)).toEqual(['Scheduled order']);
  });

  it("keeps a workspace's newest event of each type, so a listener resting on it goes on", async () => {
    const s = await serve({ maxAge: HOUR });
    const key = s.seed!.api_key_test;
    const events = async (after?: string) => {
      const r = await s.call('GET', `/v1/events?limit=100${after ? `&after=${after}` : ''}`, { token: key });
      expect(r.status, r.text).toBe(200);
      return r.body.data as { id: string; type: string; data: { message_id: string } }[];
    };
    const quiet = await sendOk(s, { from, to: sim('delivered'), subject: 'Before a quiet spell', text: 'hi' });
    await s.settle();
    const cursor = (await events()).at(-1)!.id;

    // Two quiet hours: the message is old, but its events are still the newest of their types.
    await s.advance(2 * 3600);
    expect((await getMessage(s, quiet.id)).status).toBe('delivered');
    expect(await events(cursor)).toEqual([]);

    const next = await sendOk(s, { from, to: sim('delivered'), subject: 'After it', text: 'hi' });
    await s.settle();
    const arrived = await events(cursor);
    expect(arrived.map((e) => e.data.message_id)).toEqual([next.id, next.id, next.id]);
    await s.advance(60);
    expectProblem(await s.call('GET', `/v1/emails/${quiet.id}`, { token: key }), 404, 'not_found');
    expect(await events(arrived.at(-1)!.id)).toEqual([]);
  });

  it('keeps a message while its events are still being delivered to a webhook endpoint', async () => {
    let failing = '';
    const receiver = await startReceiver((_, req) => (failing && req.body.includes(failing) ? 500 : 200));
    receivers.push(receiver);
    const s = await serve({ maxAge: HOUR });
    const key = s.seed!.api_key_test;
    const endpoint = await s.admin('POST', '/sandbox/webhooks', {
      workspace_id: s.seed!.workspace_id,
      url: receiver.url,
      events: ['email.delivered'],
    });
    expect(endpoint.status, endpoint.text).toBe(201);
    const stuck = await sendOk(s, { from, to: sim('delivered'), subject: 'Its receiver fails', text: 'hi' });
    failing = stuck.id;
    await s.settle();
    // Attempts at 30 s, 2 min, 10 min and 1 h fail too; the one at 6 h is still to come.
    await s.advance(2 * 3600);
    const other = await sendOk(s, { from, to: sim('delivered'), subject: 'Its receiver answers', text: 'hi' });
    await s.settle();
    await s.advance(120);
    expect((await getMessage(s, stuck.id)).status).toBe('delivered');

    // The attempts at 6 h and 24 h fail: the delivery is over, and the message goes at the next pass.
    await s.advance(23 * 3600);
    await s.advance(60);
    expectProblem(await s.call('GET', `/v1/emails/${stuck.id}`, { token: key }), 404, 'not_found');
    expect((await getMessage(s, other.id)).status).toBe('delivered');
    // The endpoint still shows its latest attempts, the seven of the message that went among them.
    const [listed] = (await s.admin('GET', `/sandbox/webhooks?workspace_id=${s.seed!.workspace_id}`)).body.data;
    expect(listed.status).toBe('active');
    expect(listed.recent_attempts.map((a: { attempt: number; ok: boolean }) => [a.attempt, a.ok])).toEqual([
      [7, false],
      [6, false],
      [1, true],
      [5, false],
      [4, false],
      [3, false],
      [2, false],
      [1, false],
    ]);
  });
});

describe('webhook attempts', () => {
  it('leave the database once nothing shows them: not under a caught message, not among their endpoint’s latest', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'svc-retention-'));
    dirs.push(dataDir);
    const receiver = await startReceiver(() => 200);
    receivers.push(receiver);
    const s = await serve({ dataDir, maxMessages: 2 });
    const endpoint = await s.admin('POST', '/sandbox/webhooks', {
      workspace_id: s.seed!.workspace_id,
      url: receiver.url,
      events: ['email.delivered'],
    });
    expect(endpoint.status, endpoint.text).toBe(201);
    const send15 = Array.from({ length: 15 }, (_, i) =>
      sendOk(s, { from: 'orders@example.test', to: sim('delivered'), subject: `Early ${i}`, text: 'hi' }),
    );
    await Promise.all(send15);
    await s.settle();
    await s.advance(2 * 3600);
    for (const subject of ['Late 1', 'Late 2'])
      await sendOk(s, { from: 'orders@example.test', to: sim('delivered'), subject, text: 'hi' });
    await s.settle();
    await s.advance(60);

    expect(await caughtSubjects(s)).toEqual(['Late 2', 'Late 1']);
    const [listed] = (await s.admin('GET', `/sandbox/webhooks?workspace_id=${s.seed!.workspace_id}`)).body.data;
    expect(listed.recent_attempts).toHaveLength(10);
    // Each caught message still shows its delivery under its event.
    for (const m of (await s.admin('GET', '/sandbox/messages')).body.data) {
      const shown = await s.admin('GET', `/sandbox/messages/${m.id}`);
      const delivered = shown.body.events.find((e: { type: string }) => e.type === 'email.delivered');
      expect(delivered.deliveries).toHaveLength(1);
    }
    // The 17 attempts made: the endpoint's 10 latest are what the database still holds.
    const db = new Database(join(dataDir, 'svc.sqlite'), { readonly: true });
    try {
      expect((db.prepare('SELECT COUNT(*) AS n FROM webhook_attempts').get() as { n: number }).n).toBe(10);
    } finally {
      db.close();
    }
  });
});
