// Everything the sink takes can be read (docs/local-server.md#what-the-sink-takes-and-the-inbox-shows): messages past
// what mail readers take, sent over real SMTP, are refused with a reply naming the limit (a header block over 1 MiB)
// or kept and shown as far as the views go (more than 500 MIME parts, a part's header block over 1 MiB, a text or
// HTML over 1 MiB), each view saying what it left out, the raw source whole.
import nodemailer from 'nodemailer';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { bigHeaderBlock, bigPartHeader, bigText, manyParts } from '../helpers/mime.js';

let s: TestServer;

/** Sends a raw message over SMTP; resolves with the sink's reply to it, or rejects with its refusal. */
async function sendRaw(raw: Buffer): Promise<string> {
  const t = nodemailer.createTransport({ host: '127.0.0.1', port: s.smtpPort, secure: false, ignoreTLS: true });
  try {
    const info = await t.sendMail({ envelope: { from: 'exports@example.test', to: ['ops@example.test'] }, raw });
    return info.response;
  } finally {
    t.close();
  }
}

/** The one caught message's id. */
async function onlyId(): Promise<string> {
  const r = await s.admin('GET', '/sandbox/messages');
  expect(r.status).toBe(200);
  expect(r.body.data).toHaveLength(1);
  return r.body.data[0].id;
}

/** Every view of a caught message: the message (read twice: parsed, then as kept), its raw source, its HTML. */
async function views(id: string) {
  const first = await s.admin('GET', `/sandbox/messages/${id}`);
  const again = await s.admin('GET', `/sandbox/messages/${id}`);
  expect(first.status, first.text).toBe(200);
  expect(again.body).toEqual(first.body);
  const raw = await fetch(`${s.origin}/sandbox/messages/${id}/raw`, {
    headers: { authorization: `Bearer ${s.adminToken}` },
  });
  expect(raw.status).toBe(200);
  const html = await s.admin('GET', `/sandbox/messages/${id}/html`);
  return { m: first.body, raw: Buffer.from(await raw.arrayBuffer()), html };
}

const attachment = (id: string, n: number) => s.admin('GET', `/sandbox/messages/${id}/attachments/${n}`);

beforeAll(async () => {
  s = await startTestServer();
});
afterAll(() => s?.close());
beforeEach(async () => {
  expect((await s.admin('DELETE', '/sandbox/messages')).status).toBe(204);
});

describe('more MIME parts than mail readers take (1,200)', () => {
  it('is caught, and its view shows the first 500 parts, says so, and downloads each attachment it lists', async () => {
    const sent = manyParts(1_200);
    expect(await sendRaw(sent)).toMatch(/^250 /);
    const id = await onlyId();
    const { m, raw, html } = await views(id);
    expect(raw.equals(sent)).toBe(true);
    expect(m.text).toBe('The first part of 1200.');
    // The message and its multipart/mixed are one part, the text another: 498 of the 1,199 attachments.
    expect(m.attachments).toHaveLength(498);
    expect(m.attachments[497]).toEqual({
      filename: 'row-498.csv',
      content_type: 'text/csv',
      size: 7,
      content_id: null,
    });
    expect(m.truncated).toBe(true);
    expect(m.omitted).toEqual([
      'The message has more than 500 MIME parts: the view shows the first 500 (the message itself and multipart containers count). The raw source has all of it.',
    ]);
    expect(html.status).toBe(404);
    for (const [n, body] of [
      [0, 'row,1'],
      [497, 'row,498'],
    ] as const) {
      const a = await attachment(id, n);
      expect(a.status).toBe(200);
      expect(a.text).toBe(body);
      expect(a.headers.get('content-disposition')).toContain(`row-${n + 1}.csv`);
    }
    expect((await attachment(id, 498)).status).toBe(404);
  });
});

describe('a header block over 1 MiB', () => {
  it('of the message itself is refused with 552 naming the limit, and nothing is kept', async () => {
    await expect(sendRaw(bigHeaderBlock(1_100_000))).rejects.toMatchObject({
      responseCode: 552,
      response: expect.stringMatching(
        /^552 Message header block is \d+ bytes; this sink takes header blocks of at most 1048576 bytes \(1 MiB\)/,
      ),
    });
    // Just under the limit is caught and read whole.
    expect(await sendRaw(bigHeaderBlock(1_000_000))).toMatch(/^250 /);
    const { m } = await views(await onlyId());
    expect(m.headers.find((h: { name: string }) => h.name === 'X-Big').value).toHaveLength(
      1_000_000 + Math.ceil(1_000_000 / 76) - 1,
    );
    expect(m.text).toBe('A body.\n');
    expect(m.truncated).toBe(false);
  });

  it("of one of its parts is caught; the view leaves that part's longest fields out and says so", async () => {
    const sent = bigPartHeader(1_100_000);
    expect(await sendRaw(sent)).toMatch(/^250 /);
    const id = await onlyId();
    const { m, raw } = await views(id);
    expect(raw.equals(sent)).toBe(true);
    expect(m.text).toBe('See the attachment.');
    expect(m.attachments).toEqual([{ filename: 'notes.txt', content_type: 'text/plain', size: 10, content_id: null }]);
    expect(m.omitted).toEqual([
      'A part has a header block over 1 MiB: its longest fields are left out of the view. The raw source has all of it.',
    ]);
    expect((await attachment(id, 0)).text).toBe('The notes.');
  });
});

describe('a text and an HTML of 3 MB', () => {
  it("are shown to their first 1 MiB (as sent), cut at a line's end; the view says so; the raw source is whole", async () => {
    const sent = bigText(3_000_000);
    expect(await sendRaw(sent)).toMatch(/^250 /);
    const id = await onlyId();
    const { m, raw, html } = await views(id);
    expect(raw.equals(sent)).toBe(true);
    expect(m.truncated).toBe(true);
    expect(m.omitted).toEqual([
      'The text is longer than the view shows: its first 1 MiB is shown. The raw source has all of it.',
      'The HTML is longer than the view shows: its first 1 MiB is shown. The raw source has all of it.',
    ]);
    expect(m.text).toMatch(/shipped\n$/);
    const lines = (m.text as string).trimEnd().split('\n');
    expect(lines[0]).toBe('line 0: café total 0 shipped');
    // Whole lines, up to about 1 MiB of the quoted-printable text.
    expect(lines.at(-1)).toBe(`line ${lines.length - 1}: café total ${(lines.length - 1) * 7} shipped`);
    expect(m.text.length).toBeGreaterThan(900_000);
    expect(m.text.length).toBeLessThan(1024 * 1024);
    expect(html.status).toBe(200);
    expect(html.text).toMatch(/^<base target="_blank"><p>line 0: café total 0 shipped<\/p>/);
    expect(html.text.length).toBeLessThan(1024 * 1024 + 100);
    // The search index has the start of the text.
    const found = await s.admin('GET', '/sandbox/messages?q=shipped');
    expect(found.body.data.map((x: { id: string }) => x.id)).toEqual([id]);
  });
});
