// Big messages on their way to the sink: they arrive whole and signed, several sent at once all arrive though the
// delivery path holds only so many bytes of messages at a time (a 4 MiB budget here), and one larger than that whole
// budget waits for the others and then goes alone; while it waits it is still queued, and can be cancelled. A message
// stored before attachments' bytes were kept apart from its row is delivered with its attachment.
import Database from 'better-sqlite3';
import { simpleParser } from 'mailparser';
import { isUtf8 } from 'node:buffer';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { caughtDetail, caughtOf, getMessage, mail, rcpt, send, sendOk } from './emails-helpers.js';

const BUDGET = 4 * 1024 * 1024;

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer({ sendRate: 10_000, deliveryBudgetBytes: BUDGET });
});
afterAll(() => s.close());

/** A send with one attachment of `bytes` random bytes; resolves with the message id and the bytes. */
async function sendBig(bytes: number, over: Record<string, unknown> = {}) {
  const content = randomBytes(bytes);
  const accepted = await sendOk(
    s,
    mail({ attachments: [{ filename: 'export.bin', content: content.toString('base64') }], ...over }),
  );
  return { id: accepted.id, content };
}

/** The attachment of the caught message of /v1 message `id`, as the sink's parser decodes it. */
async function caughtAttachment(id: string): Promise<Buffer> {
  const [caught] = await caughtOf(s, id);
  expect(caught, `${id} was caught`).toBeDefined();
  const res = await fetch(`${s.origin}/sandbox/messages/${caught.id}/attachments/0`, {
    headers: { authorization: `Bearer ${s.adminToken}` },
  });
  expect(res.status).toBe(200);
  return Buffer.from(await res.arrayBuffer());
}

describe('big messages', () => {
  it('a 3 MB attachment arrives byte for byte, in a message whose DKIM signature passes', async () => {
    const big = await sendBig(3 * 1024 * 1024 + 1, { text: 'The export is attached.\nThree lines\nof text.\n' });
    await s.settle();
    expect((await getMessage(s, big.id)).status).toBe('delivered');
    const detail = await caughtDetail(s, big.id);
    expect(detail.dkim).toBe('pass');
    expect(detail.text).toBe('The export is attached.\nThree lines\nof text.\n');
    expect(detail.attachments).toEqual([
      { filename: 'export.bin', content_type: 'application/octet-stream', size: big.content.length, content_id: null },
    ]);
    expect((await caughtAttachment(big.id)).equals(big.content)).toBe(true);
  });

  it('a 2 MB text and HTML, every JSON escape and characters past Latin-1 in them, are stored and arrive as sent; sent again they replay, changed they conflict', async () => {
    // Strings this long are read from the request as their UTF-8 bytes, never as strings (docs/api.md).
    const line = 'quote " backslash \\ tab \t ctrl \u0001 café € 🙂 \u2028 <b>&amp;</b>\n';
    const text = line.repeat(Math.ceil((2 * 1024 * 1024) / line.length));
    const html = `<p>${text.replaceAll('\n', '<br>')}</p>`;
    const dataDir = mkdtempSync(join(tmpdir(), 'svc-long-text-'));
    const own = await startTestServer({ dataDir });
    try {
      const body = mail({ text, html });
      const headers = { 'Idempotency-Key': `long-text-${rcpt()}` };
      const first = await sendOk(own, body, { headers });
      const again = await send(own, body, { headers });
      expect(again.status, again.text).toBe(202);
      expect(again.body.id).toBe(first.id);
      const changed = await send(own, { ...body, text: `${text}.` }, { headers });
      expect(changed.status, changed.text).toBe(409);
      // Stored as text, its first MiB in its column and the rest in pieces, each cut where a character begins.
      const db = new Database(join(dataDir, 'svc.sqlite'), { readonly: true });
      const types = db.prepare('SELECT typeof(text) AS t, typeof(html) AS h FROM messages WHERE id = ?');
      expect(types.get(first.id)).toEqual({ t: 'text', h: 'text' });
      const whole = (part: 'text' | 'html') => {
        const head = db.prepare(`SELECT CAST(${part} AS BLOB) FROM messages WHERE id = ?`).pluck().get(first.id);
        const pieces = db
          .prepare('SELECT bytes FROM message_text_pieces WHERE message_id = ? AND part = ? ORDER BY n')
          .pluck()
          .all(first.id, part) as Buffer[];
        expect(pieces.length, part).toBeGreaterThan(0);
        for (const p of [head as Buffer, ...pieces]) expect(isUtf8(p), `a piece of the ${part}`).toBe(true);
        return Buffer.concat([head as Buffer, ...pieces]).toString('utf8');
      };
      expect(whole('text') === text, 'the stored text').toBe(true);
      expect(whole('html') === html, 'the stored HTML').toBe(true);
      db.close();
      await own.settle();
      expect((await getMessage(own, first.id)).status).toBe('delivered');
      const [caught] = await caughtOf(own, first.id);
      const res = await fetch(`${own.origin}/sandbox/messages/${caught.id}/raw`, {
        headers: { authorization: `Bearer ${own.adminToken}` },
      });
      const parsed = await simpleParser(Buffer.from(await res.arrayBuffer()));
      expect(parsed.text === text, 'the text arrived as sent').toBe(true);
      expect(parsed.html === html, 'the HTML arrived as sent').toBe(true);
    } finally {
      await own.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('six 2 MB messages sent at once all arrive whole: none is failed or left behind by the budget they share', async () => {
    const sent = await Promise.all(Array.from({ length: 6 }, () => sendBig(2 * 1024 * 1024)));
    await s.settle();
    for (const m of sent) {
      const got = await getMessage(s, m.id);
      expect(got.status, JSON.stringify(got.events)).toBe('delivered');
      expect((await caughtAttachment(m.id)).equals(m.content)).toBe(true);
    }
  });

  describe('a message larger than the whole budget', () => {
    let files: Server;
    let release: () => void = () => {};
    let requested: Promise<void>;
    const pdf = randomBytes(100_000);

    beforeAll(async () => {
      let arrived: () => void;
      requested = new Promise((resolve) => (arrived = resolve));
      const held = new Promise<void>((resolve) => (release = resolve));
      // Answers only when told: the message fetching from it holds its room in the budget meanwhile.
      files = createServer((_req, res) => {
        arrived();
        void held.then(() => res.end(pdf));
      });
      await new Promise<void>((resolve) => files.listen(0, '127.0.0.1', resolve));
    });
    afterAll(async () => {
      release();
      await new Promise<void>((resolve) => files.close(() => resolve()));
    });

    it('waits for the messages ahead of it, then goes alone; one waiting behind it can still be cancelled', async () => {
      const url = `http://127.0.0.1:${(files.address() as AddressInfo).port}/statement.pdf`;
      const first = await sendOk(s, mail({ attachments: [{ filename: 'statement.pdf', url }] }));
      const firstDone = s.settle();
      await requested;
      // 6 MB of attachment (8 MB as sent) against a 4 MiB budget, then another behind it.
      const huge = await sendBig(6 * 1024 * 1024);
      const to = rcpt();
      const behind = await sendBig(1024 * 1024, { to });
      const rest = s.settle();
      expect((await getMessage(s, huge.id)).status).toBe('queued');
      const cancelled = await s.call('POST', `/v1/emails/${behind.id}/cancel`, { token: s.seed!.api_key_test });
      expect(cancelled.status, cancelled.text).toBe(200);
      release();
      await Promise.all([firstDone, rest]);

      expect((await getMessage(s, first.id)).status).toBe('delivered');
      expect((await caughtDetail(s, first.id)).attachments[0].size).toBe(pdf.length);
      expect((await getMessage(s, huge.id)).status).toBe('delivered');
      expect((await caughtAttachment(huge.id)).equals(huge.content)).toBe(true);
      expect((await getMessage(s, behind.id)).status).toBe('cancelled');
      expect(await caughtOf(s, behind.id)).toEqual([]);
      // The server takes new mail and delivers it as before.
      const after = await send(s, mail({ text: 'and after' }));
      expect(after.status).toBe(202);
      await s.settle();
      expect((await getMessage(s, after.body.id)).status).toBe('delivered');
    });
  });
});

describe('a message stored before attachment bytes were kept apart (base64 in the row)', () => {
  let dataDir: string;
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  it('is delivered after the upgrade with its attachment', async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'svc-legacy-attachment-'));
    const content = randomBytes(300_000);
    const before = await startTestServer({ dataDir });
    const key = before.seed!.api_key_test;
    const { now } = (await before.admin('GET', '/sandbox/clock')).body as { now: string };
    const at = new Date(Date.parse(now) + 3600_000).toISOString();
    const r = await before.call('POST', '/v1/emails', {
      token: key,
      body: mail({ scheduled_at: at, attachments: [{ filename: 'old.bin', content: content.toString('base64') }] }),
    });
    expect(r.status, r.text).toBe(202);
    await before.close();

    // As the row was written before: the attachment's base64 in its JSON, nothing in attachment_chunks.
    const db = new Database(join(dataDir, 'svc.sqlite'));
    const row = db.prepare('SELECT attachments FROM messages WHERE id = ?').get(r.body.id) as { attachments: string };
    const [described] = JSON.parse(row.attachments) as Record<string, unknown>[];
    db.prepare('UPDATE messages SET attachments = ? WHERE id = ?').run(
      JSON.stringify([{ ...described, content: content.toString('base64') }]),
      r.body.id,
    );
    expect(db.prepare('DELETE FROM attachment_chunks WHERE message_id = ?').run(r.body.id).changes).toBeGreaterThan(0);
    db.close();

    const after = await startTestServer({ dataDir });
    try {
      await after.advance(2 * 3600);
      expect((await getMessage(after, r.body.id, key)).status).toBe('delivered');
      const [caught] = await caughtOf(after, r.body.id);
      const res = await fetch(`${after.origin}/sandbox/messages/${caught.id}/attachments/0`, {
        headers: { authorization: `Bearer ${after.adminToken}` },
      });
      expect(Buffer.from(await res.arrayBuffer()).equals(content)).toBe(true);
    } finally {
      await after.close();
    }
  });
});
