// A seeded fuzz of what the sink takes and the inbox shows (docs/local-server.md#what-the-sink-takes-and-what-the-inbox-shows-of-it):
// random MIME messages — nested multiparts up to past 1,000 parts, every transfer encoding (and unknown ones),
// charsets real and made up, odd dispositions and file names, embedded messages, header blocks up to past 1 MiB in
// the message and in its parts, long lines, bare LF and CR, bytes that are not text, missing boundaries and closing
// delimiters — are handed to the sink over real SMTP, and random sends go through POST /v1/emails and the server's
// own delivery. Everything caught is then read back through every view: the message, its HTML, its raw source, each
// attachment it lists (of hundreds, a sample) and one past them. The sink answers 250 or refuses with a reply that names a limit; no view
// ever answers 5xx. `FUZZ_SEED=n` replays another run.
import nodemailer from 'nodemailer';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { manyParts, bigHeaderBlock, bigPartHeader, bigText } from '../helpers/mime.js';
import { prng } from '../helpers/prng.js';

const SEED = Number(process.env.FUZZ_SEED ?? 20260801);
const SMTP_MESSAGES = 40;
const API_SENDS = 30;

type Random = ReturnType<typeof prng>;

const WORDS = ['order', 'café', 'naïve', '日本語', 'Grüße', '€', 'line', '=3D', '=', '.', '..', '\t', ' ', '🙂'];
const TYPES = [
  'text/plain',
  'text/html',
  'text/csv',
  'application/octet-stream',
  'application/pdf',
  'image/png',
  'message/delivery-status',
  'message/rfc822',
  'text/calendar',
  'x-made/up',
  '',
  'text',
  'multipart/weird',
];
const ENCODINGS = [
  '',
  '7bit',
  '8bit',
  'binary',
  'base64',
  'quoted-printable',
  'QUOTED-PRINTABLE',
  'x-uuencode',
  'bogus',
];
const CHARSETS = ['', 'utf-8', 'iso-8859-1', 'windows-1252', 'shift_jis', 'iso-2022-jp', 'koi8-r', 'x-no-such-charset'];
const DISPOSITIONS = [
  '',
  'inline',
  'attachment',
  'attachment; filename="a.txt"',
  'form-data',
  "INLINE; filename*=utf-8''%E2%82%AC.txt",
];

/** Text of about `n` characters: words, line breaks of every kind, now and then a line far over 998 characters. */
function text(r: Random, n: number): string {
  let out = '';
  while (out.length < n) {
    out += r.pick(WORDS);
    out += r.chance(0.1) ? r.pick(['\r\n', '\n', '\r', '\r\n.\r\n', '\r\n\r\n']) : ' ';
    if (r.chance(0.001)) out += 'y'.repeat(r.int(5000));
    // Markup that made HTML readers take seconds: openings never closed, tags nested a hundred thousand deep.
    if (r.chance(0.0005)) out += r.pick(['<style', '<!--', '<div>', '<a', '<title']).repeat(r.int(60_000));
  }
  return out;
}

function body(r: Random, n: number, encoding: string): string {
  if (r.chance(0.15)) return r.bytes(n).toString('latin1'); // not text at all, whatever it claims
  const t = text(r, n);
  if (encoding.toLowerCase() === 'base64') {
    const b64 = Buffer.from(t).toString('base64');
    return r.chance(0.2) ? b64 : (b64.match(/.{1,76}/g) ?? []).join('\r\n');
  }
  if (encoding.toLowerCase() === 'quoted-printable')
    return t.replace(/[^\x20-\x7e\r\n]/g, (c) => `=${c.charCodeAt(0).toString(16).toUpperCase().padStart(2, '0')}`);
  return t;
}

/** A header field of about `n` bytes, folded or one long line. */
function field(r: Random, n: number): string {
  const value = 'h'.repeat(n);
  return `X-Fuzz-${r.int(1000)}: ${r.chance(0.5) ? (value.match(/.{1,76}/g) ?? ['']).join('\r\n ') : value}\r\n`;
}

/** The extra header fields of an entity: a few, rarely a huge one. */
function extras(r: Random): string {
  let out = '';
  for (let i = r.int(3); i > 0; i--) out += field(r, r.size(2000));
  if (r.chance(0.04)) out += field(r, 900_000 + r.int(400_000));
  if (r.chance(0.02)) out += 'this line has no colon\r\n';
  return out;
}

let boundaries = 0;
/** One MIME entity (header fields, a blank line, a body) `depth` levels down. */
function entity(r: Random, depth: number): string {
  const multipart = depth < 4 && r.chance(depth === 0 ? 0.6 : 0.25);
  if (multipart) {
    const b = `=_b${boundaries++}_${r.int(1e6)}`;
    const subtype = r.pick(['mixed', 'alternative', 'related', 'digest', 'x-odd']);
    const n = r.chance(0.05) ? 600 + r.int(700) : r.int(6);
    let out = `Content-Type: multipart/${subtype}${r.chance(0.05) ? '' : `; boundary="${b}"`}\r\n${extras(r)}\r\n`;
    if (r.chance(0.2)) out += `${text(r, r.size(500))}\r\n`; // a preamble
    for (let i = 0; i < n; i++) out += `--${b}\r\n${n > 50 ? small(r, i) : entity(r, depth + 1)}\r\n`;
    if (!r.chance(0.1)) out += `--${b}--\r\n`; // now and then no closing delimiter
    if (r.chance(0.1)) out += text(r, r.size(300)); // an epilogue
    return out;
  }
  const type = r.pick(TYPES);
  const encoding = r.pick(ENCODINGS);
  const charset = r.pick(CHARSETS);
  const disposition = r.pick(DISPOSITIONS);
  let head = '';
  if (type)
    head += `Content-Type: ${type}${charset ? `; charset=${charset}` : ''}${r.chance(0.2) ? '; name="=?utf-8?B?w6lt?="' : ''}\r\n`;
  if (encoding) head += `Content-Transfer-Encoding: ${encoding}\r\n`;
  if (disposition) head += `Content-Disposition: ${disposition}\r\n`;
  if (r.chance(0.2)) head += `Content-ID: <part${r.int(100)}@fuzz>\r\n`;
  if (type === 'message/rfc822' && r.chance(0.7)) return `${head}\r\n${message(r, depth + 1)}`;
  return `${head}${extras(r)}\r\n${body(r, r.size(depth === 0 ? 1_500_000 : 100_000), encoding)}`;
}

/** A small leaf, for multiparts of hundreds of parts. */
function small(r: Random, i: number): string {
  return `Content-Type: ${r.pick(['text/plain', 'text/csv', 'image/png'])}; name="p${i}"\r\nContent-Disposition: ${r.pick(['inline', 'attachment'])}; filename="p${i}"\r\n\r\n${text(r, r.size(200))}`;
}

/** A whole message: its own header fields, then an entity. */
function message(r: Random, depth = 0): string {
  const id = `<fuzz-${r.int(1e9)}@example.test>`;
  return (
    `From: ${r.pick(['Fuzz <fuzz@example.test>', '=?utf-8?Q?F=C3=BCzz?= <f@example.test>', 'broken <<>>', ''])}\r\n` +
    `To: ops@example.test${r.chance(0.2) ? ', undisclosed-recipients:;' : ''}\r\n` +
    `Subject: ${r.pick(['fuzz', '=?utf-8?B?8J+Zgg==?=', text(r, r.size(300)).replace(/[\r\n]/g, ' ')])}\r\n` +
    `Message-ID: ${id}\r\nMIME-Version: 1.0\r\n${depth === 0 && r.chance(0.5) ? 'DKIM-Signature: v=1; a=rsa-sha256; d=example.test; s=x; b=AAAA; bh=AAAA\r\n' : ''}` +
    entity(r, depth)
  );
}

let s: TestServer;
const admin = (path: string) => fetch(`${s.origin}${path}`, { headers: { authorization: `Bearer ${s.adminToken}` } });

/** Every view of a caught message; each answer below 500, and the ones that must be there, there. */
async function readEveryView(id: string, label: string): Promise<void> {
  const m = await admin(`/sandbox/messages/${id}`);
  expect(m.status, `${label}: the message`).toBe(200);
  const view = (await m.json()) as { size: number; attachments: unknown[]; truncated: boolean; omitted: string[] };
  expect(view.truncated, label).toBe(view.omitted.length > 0);
  const raw = await admin(`/sandbox/messages/${id}/raw`);
  expect(raw.status, `${label}: raw`).toBe(200);
  expect((await raw.arrayBuffer()).byteLength, `${label}: raw`).toBe(view.size);
  const html = await admin(`/sandbox/messages/${id}/html`);
  expect([200, 404], `${label}: html`).toContain(html.status);
  await html.arrayBuffer();
  // Each attachment and one past them; of a message listing hundreds (each download reads the message again), the
  // first 20, ten others and the last.
  const count = view.attachments.length;
  const which =
    count <= 50
      ? Array.from({ length: count + 1 }, (_, n) => n)
      : [
          ...Array.from({ length: 20 }, (_, n) => n),
          ...Array.from({ length: 10 }, (_, k) => 20 + Math.floor(((count - 21) * k) / 10)),
          count - 1,
          count,
        ];
  for (const n of which) {
    const a = await admin(`/sandbox/messages/${id}/attachments/${n}`);
    expect(a.status, `${label}: attachment ${n} of ${view.attachments.length}`).toBe(
      n < view.attachments.length ? 200 : 404,
    );
    await a.arrayBuffer();
  }
}

/** The newest caught message's id. */
async function newest(): Promise<string> {
  const r = await s.admin('GET', '/sandbox/messages?limit=1');
  expect(r.status).toBe(200);
  return r.body.data[0].id;
}

beforeAll(async () => {
  s = await startTestServer({ sendRate: 10_000 });
});
afterAll(() => s?.close());

describe(`the inbox reads back whatever the sink took (seed ${SEED})`, () => {
  it('over SMTP: the messages that broke it, then random ones; each is caught or refused naming a limit, and every view of what was caught answers', {
    timeout: 300_000,
  }, async () => {
    const r = prng(SEED);
    const t = nodemailer.createTransport({
      host: '127.0.0.1',
      port: s.smtpPort,
      secure: false,
      ignoreTLS: true,
      pool: true,
    });
    const known: [string, Buffer][] = [
      ['1,200 parts', manyParts(1_200)],
      ['a 1.1 MB header block', bigHeaderBlock(1_100_000)],
      ['a part with a 1.1 MB header block', bigPartHeader(1_100_000)],
      ['a 3 MB text and HTML', bigText(3_000_000)],
    ];
    const cases = [
      ...known,
      ...Array.from(
        { length: SMTP_MESSAGES },
        (_, i) => [`random ${i}`, Buffer.from(message(r), 'latin1')] as [string, Buffer],
      ),
    ];
    let caught = 0;
    let refused = 0;
    try {
      for (const [label, raw] of cases) {
        const answer = await t
          .sendMail({ envelope: { from: 'fuzz@example.test', to: ['ops@example.test'] }, raw })
          .then(
            (info) => info.response as string,
            (err: { response?: string }) => err.response ?? String(err),
          );
        if (answer.startsWith('250 ')) {
          caught++;
          await readEveryView(await newest(), label);
        } else {
          refused++;
          // The one refusal of content: a header block past what readers take, said with the limit.
          expect(answer, label).toMatch(
            /^552 Message header block is \d+ bytes; this sink takes header blocks of at most 1048576 bytes/,
          );
        }
      }
    } finally {
      t.close();
    }
    // The run exercised both answers.
    expect(caught).toBeGreaterThan(SMTP_MESSAGES / 2);
    expect(refused).toBeGreaterThan(0);
  });

  it('through POST /v1/emails: each send is accepted or refused with a 4xx, and every view of what was delivered answers', {
    timeout: 300_000,
  }, async () => {
    const r = prng(SEED + 1);
    const key = s.seed!.api_key_test;
    let accepted = 0;
    for (let i = 0; i < API_SENDS; i++) {
      const headers: Record<string, string> = {};
      for (let h = r.int(4); h > 0; h--)
        headers[`X-Fuzz-${r.int(1000)}`] = 'v'.repeat(r.chance(0.2) ? 990 + r.int(20) : r.size(500));
      if (r.chance(0.1)) headers['X-Huge'] = 'v'.repeat(1_100_000);
      const attachments = Array.from({ length: r.chance(0.4) ? r.int(4) : 0 }, (_, n) => ({
        filename: r.pick([`file-${n}.bin`, 'résumé.pdf', 'a'.repeat(200), 'inline.png']),
        content: r.bytes(r.size(200_000)).toString('base64'),
        ...(r.chance(0.5) ? { content_type: r.pick(TYPES.filter(Boolean)) } : {}),
        ...(r.chance(0.2) ? { content_id: `img${n}` } : {}),
      }));
      const send = {
        from: 'Fuzz <fuzz@example.test>',
        to: `fuzz-${i}@dest.example`,
        subject: text(r, r.size(200)).replace(/[\r\n]/g, ' '),
        ...(r.chance(0.8) ? { text: text(r, r.size(r.chance(0.1) ? 2_500_000 : 50_000)) } : {}),
        ...(r.chance(0.5)
          ? { html: `<p>${text(r, r.size(r.chance(0.1) ? 2_500_000 : 50_000))}</p><img src="cid:img0">` }
          : {}),
        ...(r.chance(0.3) ? {} : { text: 'plain' }),
        ...(Object.keys(headers).length ? { headers } : {}),
        ...(attachments.length ? { attachments } : {}),
      };
      const res = await s.call('POST', '/v1/emails', { token: key, body: send });
      expect(res.status, `send ${i}: ${res.text.slice(0, 300)}`).toBeLessThan(500);
      if (res.status !== 202) {
        expect(res.status, `send ${i}`).toBeGreaterThanOrEqual(400);
        continue;
      }
      accepted++;
      await s.settle();
      const m = await s.call('GET', `/v1/emails/${res.body.id}`, { token: key });
      expect(m.status).toBe(200);
      expect(m.body.status, `send ${i}`).toBe('delivered');
      const listed = await s.admin('GET', `/sandbox/messages?to=fuzz-${i}@dest.example`);
      expect(listed.body.data, `send ${i}`).toHaveLength(1);
      await readEveryView(listed.body.data[0].id, `send ${i}`);
    }
    expect(accepted).toBeGreaterThan(API_SENDS / 2);
  });
});
