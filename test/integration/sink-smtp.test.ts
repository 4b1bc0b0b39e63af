// The SMTP sink's side of a conversation, over real sockets: its greeting, whole messages pipelined, messages no mail
// reader shows whole (caught all the same), and its limits — the largest message (--max-message-size), the connections
// open at once (--smtp-max-connections: the service's own deliveries come in outside them) and the time a whole DATA
// phase may take.
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { manualClock } from '../../src/lib/clock.js';
import { silentLogger } from '../../src/lib/log.js';
import { createInbox } from '../../src/server/core/inbox.js';
import { connectionsPath } from '../../src/server/inbound/seams/smtp-server.js';
import { createSink, type Sink, type SinkLimits } from '../../src/server/inbound/sink.js';
import { openDb, type Db } from '../../src/server/store/db.js';
import { createInboxStore, type InboxStore } from '../../src/server/store/inbox.js';
import { manyParts, nestedParts } from '../helpers/mime.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { smtpTalk, type SmtpTalk } from '../helpers/smtp.js';

/** A message of exactly `bytes` bytes as the sink stores it (CRLF line ends, no line starting with a dot). */
function messageOf(bytes: number, subject: string): string {
  const head = `From: alice@example.test\r\nTo: bob@example.test\r\nSubject: ${subject}\r\n\r\n`;
  let body = '';
  while (head.length + body.length + 80 <= bytes) body += `${'x'.repeat(78)}\r\n`;
  const rest = bytes - head.length - body.length;
  return head + body + (rest >= 2 ? `${'y'.repeat(rest - 2)}\r\n` : 'z'.repeat(rest));
}

/** Greets, says EHLO and opens a transaction up to the 354; resolves with the EHLO reply. */
async function openTransaction(talk: SmtpTalk): Promise<string> {
  expect(await talk.reply()).toMatch(/^220 /);
  talk.write('EHLO client.example.test\r\n');
  const ehlo = await talk.reply();
  talk.write('MAIL FROM:<alice@example.test>\r\nRCPT TO:<bob@example.test>\r\nDATA\r\n');
  expect([
    (await talk.reply()).slice(0, 3),
    (await talk.reply()).slice(0, 3),
    (await talk.reply()).slice(0, 3),
  ]).toEqual(['250', '250', '354']);
  return ehlo;
}

describe('--max-message-size', () => {
  let s: TestServer;
  const LIMIT = 10_000;
  const subjects = async () => {
    const r = await s.admin('GET', '/sandbox/messages');
    expect(r.status).toBe(200);
    return (r.body.data as { subject: string }[]).map((m) => m.subject);
  };

  beforeAll(async () => {
    s = await startTestServer({ maxMessageSize: LIMIT });
  });
  afterAll(() => s?.close());
  beforeEach(async () => {
    expect((await s.admin('DELETE', '/sandbox/messages')).status).toBe(204);
  });

  it('is advertised with SIZE; a message of that many bytes is caught, one byte more is refused with 552 and not stored', async () => {
    const talk = await smtpTalk(s.smtpPort);
    try {
      const ehlo = await openTransaction(talk);
      expect(ehlo).toMatch(new RegExp(`^250[- ]SIZE ${LIMIT}\\r$`, 'm'));
      talk.write(`${messageOf(LIMIT, 'just fits')}.\r\n`);
      expect(await talk.reply()).toMatch(/^250 /);

      talk.write('MAIL FROM:<alice@example.test>\r\nRCPT TO:<bob@example.test>\r\nDATA\r\n');
      expect([
        (await talk.reply()).slice(0, 3),
        (await talk.reply()).slice(0, 3),
        (await talk.reply()).slice(0, 3),
      ]).toEqual(['250', '250', '354']);
      talk.write(`${messageOf(LIMIT + 1, 'one byte over')}.\r\n`);
      expect(await talk.reply()).toMatch(/^552 /);

      // A size declared up front is refused before the message is sent.
      talk.write(`MAIL FROM:<alice@example.test> SIZE=${LIMIT + 1}\r\n`);
      expect(await talk.reply()).toMatch(/^552 /);
    } finally {
      talk.destroy();
    }
    expect(await subjects()).toEqual(['just fits']);
    const { data } = (await s.admin('GET', '/sandbox/messages')).body;
    expect(data[0].size).toBe(LIMIT);
  });
});

describe('the sink on its own', () => {
  let db: Db;
  let store: InboxStore;
  let sink: Sink | undefined;
  const talks: SmtpTalk[] = [];

  async function start(limits: SinkLimits): Promise<number> {
    sink = createSink({ inbox: createInbox({ store, clock: manualClock() }), log: silentLogger }, limits);
    return sink.listen(0, '127.0.0.1');
  }
  async function talk(port: number): Promise<SmtpTalk> {
    const t = await smtpTalk(port);
    talks.push(t);
    return t;
  }

  beforeEach(() => {
    db = openDb({ memory: true }).db;
    store = createInboxStore(db);
  });
  afterEach(async () => {
    vi.useRealTimers();
    for (const t of talks.splice(0)) t.destroy();
    await sink?.close();
    sink = undefined;
    db.close();
  });

  it('greets a new connection at once, and answers a client that talks before the greeting in order', async () => {
    // With no timer able to fire, smtp-server's own 100 ms wait before the greeting would answer this client
    // "421 You talk too soon".
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const port = await start({});
    const early = await talk(port);
    early.write(
      `EHLO client.example.test\r\nMAIL FROM:<alice@example.test>\r\nRCPT TO:<bob@example.test>\r\nDATA\r\n${messageOf(500, 'early')}.\r\nQUIT\r\n`,
    );
    if ((await connectionsPath()).path === 'stock') {
      // smtp-server's own connections (SVC_STOCK_SEAMS, or an smtp-server the sink's are not written for): that 421,
      // nothing kept, and a client that waits is greeted once the timer fires.
      expect(await early.reply()).toMatch(/^421 .*You talk too soon/);
      expect(store.count()).toBe(0);
      vi.useRealTimers();
      expect(await (await talk(port)).reply()).toMatch(/^220 /);
      return;
    }
    const codes: string[] = [];
    for (let i = 0; i < 7; i++) codes.push((await early.reply()).slice(0, 3));
    expect(codes).toEqual(['220', '250', '250', '250', '354', '250', '221']);
    expect(store.count()).toBe(1);
  });

  it('answers whole messages pipelined in one write (RFC 2920) each in order, and catches each', async () => {
    const port = await start({});
    const client = await talk(port);
    expect(await client.reply()).toMatch(/^220 /);
    client.write('EHLO client.example.test\r\n');
    await client.reply();
    const message = (i: number) =>
      `MAIL FROM:<alice@example.test>\r\nRCPT TO:<bob@example.test>\r\nDATA\r\n${messageOf(500, `pipelined ${i}`)}.\r\n`;
    client.write(`${[1, 2, 3, 4].map(message).join('')}QUIT\r\n`);
    const codes: string[] = [];
    for (let i = 0; i < 17; i++) codes.push((await client.reply()).slice(0, 3));
    expect(codes).toEqual([...Array(4).fill(['250', '250', '354', '250']).flat(), '221']);
    expect(store.count()).toBe(4);
  });

  it('refuses a connection beyond --smtp-max-connections with 421 and closes it; a freed place is taken again', async () => {
    const port = await start({ maxConnections: 2 });
    const [first, second] = [await talk(port), await talk(port)];
    expect(await first.reply()).toMatch(/^220 /);
    expect(await second.reply()).toMatch(/^220 /);

    const third = await talk(port);
    expect(await third.reply()).toMatch(/^421 .*Too many connected clients/);
    await third.closed;

    // The two keep working.
    second.write('NOOP\r\n');
    expect(await second.reply()).toMatch(/^250 /);

    first.write('QUIT\r\n');
    expect(await first.reply()).toMatch(/^221 /);
    await first.closed;
    const fourth = await talk(port);
    expect(await fourth.reply()).toMatch(/^220 /);
  });

  it('cuts off a client that drips its message for longer than the DATA time limit with 421, and keeps nothing of it', async () => {
    const port = await start({ dataTimeoutMs: 200 });
    const slow = await talk(port);
    await openTransaction(slow);
    slow.write('From: alice@example.test\r\nTo: bob@example.test\r\nSubject: never ends\r\n\r\n');
    // A byte every 10 ms: never idle long enough for the idle limit, never finished.
    const drip = setInterval(() => slow.write('x'), 10);
    try {
      expect(await slow.reply()).toMatch(/^421 The message did not arrive within 0\.2 s/);
      await slow.closed;
    } finally {
      clearInterval(drip);
    }
    expect(store.count()).toBe(0);

    // The sink goes on catching mail.
    const next = await talk(port);
    await openTransaction(next);
    next.write(`${messageOf(500, 'after the cut')}.\r\n`);
    expect(await next.reply()).toMatch(/^250 /);
    expect(store.count()).toBe(1);
  });
});

describe("the service's own deliveries", () => {
  let s: TestServer;
  const talks: SmtpTalk[] = [];
  beforeAll(async () => {
    s = await startTestServer({ smtpMaxConnections: 3 });
  });
  afterAll(async () => {
    for (const t of talks) t.destroy();
    await s?.close();
  });

  it('are caught while outside clients hold every connection --smtp-max-connections allows', async () => {
    for (let i = 0; i < 3; i++) {
      const idle = await smtpTalk(s.smtpPort);
      talks.push(idle);
      expect(await idle.reply()).toMatch(/^220 /);
    }
    const beyond = await smtpTalk(s.smtpPort);
    talks.push(beyond);
    expect(await beyond.reply()).toMatch(/^421 .*Too many connected clients/);

    const token = s.seed!.api_key_test!;
    const sent = await s.call('POST', '/v1/emails', {
      token,
      body: { from: 'orders@example.test', to: 'ada@example.org', subject: 'Through', text: 'Hello' },
    });
    expect(sent.status).toBe(202);
    await s.settle();
    expect((await s.call('GET', `/v1/emails/${sent.body.id}`, { token })).body.status).toBe('delivered');
    const caught = await s.admin('GET', '/sandbox/messages');
    expect(caught.body.data.map((m: { message_id: string }) => m.message_id)).toEqual([sent.body.id]);
    // The outside clients keep their connections.
    talks[0]!.write('NOOP\r\n');
    expect(await talks[0]!.reply()).toMatch(/^250 /);
  });
});

describe('a message no mail reader shows whole', () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer();
  });
  afterAll(() => s?.close());

  it('is caught all the same (1,001 parts, 2,000 nested), and its view opens, saying what it leaves out', async () => {
    for (const raw of [manyParts(1_001), nestedParts(2_000)]) {
      const client = await smtpTalk(s.smtpPort);
      try {
        expect(await client.reply()).toMatch(/^220 /);
        client.write(
          'EHLO client.example.test\r\nMAIL FROM:<exports@example.test>\r\nRCPT TO:<ops@example.test>\r\nDATA\r\n',
        );
        for (const code of ['250', '250', '250', '354']) expect((await client.reply()).slice(0, 3)).toBe(code);
        client.write(Buffer.concat([raw, Buffer.from('.\r\n')]));
        expect(await client.reply()).toMatch(/^250 /);
      } finally {
        client.destroy();
      }
    }
    const { data } = (await s.admin('GET', '/sandbox/messages')).body;
    expect(data).toHaveLength(2);
    for (const { id } of data) {
      const view = await s.admin('GET', `/sandbox/messages/${id}`);
      expect(view.status).toBe(200);
      expect(view.body.truncated).toBe(true);
    }
  });
});
