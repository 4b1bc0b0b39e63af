import MailComposer from 'nodemailer/lib/mail-composer';
import type Mail from 'nodemailer/lib/mailer/index.js';
import { generateKeyPairSync } from 'node:crypto';
import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { buildMime, composeSigned } from './compose.js';
import { dkimSign } from './dkim-sign.js';

// A fixed boundary, Message-ID and date make nodemailer's output a function of the message alone, so the one-pass
// writer can be compared with nodemailer's own streaming build byte for byte.
const fixed = (mail: Mail.Options): Mail.Options => ({
  baseBoundary: 'fixedboundary',
  messageId: '<msg_test@example.test>',
  date: new Date('2026-11-23T10:00:00Z'),
  from: 'Shop <orders@example.test>',
  to: ['someone@example.net'],
  subject: 'Your order',
  ...mail,
});

const nodemailerBuild = (mail: Mail.Options) => new MailComposer(fixed(mail)).compile().build();

/** A deterministic mix of ASCII, whitespace at line ends, dots, long lines, Latin-1, CJK and emoji. */
function mixedText(seed: number, length: number): string {
  const pieces = [
    'word ',
    'a.b ',
    '\r\n',
    '\n',
    '.\r\n',
    ' \t\r\n',
    'x'.repeat(90),
    'Grüße ',
    '日本語 ',
    '🙂',
    '=3D ',
    '\t',
    'end ',
  ];
  let s = '';
  let x = seed;
  while (s.length < length) {
    x = (x * 1103515245 + 12345) % 2 ** 31;
    s += pieces[x % pieces.length];
  }
  return s;
}

const cases: [string, Mail.Options][] = [
  ['plain ASCII text', { text: 'Thanks for your order.' }],
  ['html and text alternatives', { text: 'Thanks.', html: '<p>Thanks for your order.</p>'.repeat(60) }],
  ['html only', { html: '<p>Hello</p>' }],
  [
    'non-ASCII subject, text and html',
    { subject: 'Grüße, 日本 🙂', text: 'Grüße aus Köln 🙂', html: '<p>日本語のメール</p>' },
  ],
  [
    'long lines, trailing whitespace, leading dots',
    { text: `${'a'.repeat(200)} \r\n.start\r\nend\t\r\n\r\n`, html: `<p>${'b '.repeat(120)}</p>  \n` },
  ],
  ['text ending without a line break', { text: 'no newline at the end' }],
  ['text ending with a carriage return', { text: 'ends with CR\r' }],
  [
    'attachments: binary, text, inline, empty',
    {
      text: 'See attached.',
      html: '<p><img src="cid:logo"></p>',
      attachments: [
        {
          filename: 'receipt.pdf',
          content: Buffer.from(Array.from({ length: 3000 }, (_, i) => (i * 37) % 256)),
          contentType: 'application/pdf',
        },
        {
          filename: 'notes.txt',
          content: Buffer.from('line one\r\nline two   \r\nGrüße\r\n'),
          contentType: 'text/plain',
        },
        {
          filename: 'logo.png',
          content: Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 1, 2, 3]),
          contentType: 'image/png',
          cid: 'logo',
        },
        { filename: 'empty.bin', content: Buffer.alloc(0), contentType: 'application/octet-stream' },
      ],
    },
  ],
  [
    'custom headers, reply-to, cc and bcc',
    {
      cc: ['Copy <copy@example.net>'],
      bcc: ['hidden@example.net'],
      replyTo: ['support@example.test'],
      headers: { 'X-Entity-Ref-ID': 'abc-123', 'X-Svc-Tags': 'category=receipt; user=J%C3%BCrgen' },
      text: 'Hello',
    },
  ],
  ...Array.from({ length: 12 }, (_, i): [string, Mail.Options] => [
    `mixed content #${i}`,
    { text: mixedText(i + 1, 300 + i * 150), html: `<p>${mixedText(i + 100, 500 + i * 200)}</p>` },
  ]),
];

describe('buildMime', () => {
  it.each(cases)('writes %s exactly as nodemailer does', async (_name, mail) => {
    const mime = await buildMime(fixed(mail));
    expect(mime.toString('latin1')).toBe((await nodemailerBuild(mail)).toString('latin1'));
  });

  // nodemailer's encoder takes quoted-printable 64 KiB at a time; a text past that, and past 128 KiB given as its
  // bytes (as the delivery hands a long text over), must still come out as nodemailer writes the string.
  const longTexts: [string, string][] = [
    ...Array.from({ length: 6 }, (_, i): [string, string] => [
      `mixed, lines ending in LF or CRLF, ${70_000 + i * 61_000} characters`,
      mixedText(i + 7, 70_000 + i * 61_000).replace(/\r\n/g, i % 2 ? '\n' : '\r\n'),
    ]),
    ['mostly not Latin (base64)', '日本語のメールです。\n'.repeat(30_000)],
    // Where nodemailer's count tips: Latin letters against controls and characters past ASCII (an emoji counts twice).
    ['as many letters as emoji halves (base64)', 'ab🙂 '.repeat(40_000)],
    ['one letter more (quoted-printable)', 'abc🙂 '.repeat(40_000)],
    ['letters, controls and accents even (base64)', 'ab\u0001é\n'.repeat(60_000)],
    ['one line of 300,000 characters, spaces in it', 'word '.repeat(60_000)],
  ];
  it.each(longTexts)(
    'writes a long text (%s) as nodemailer does, from the string and from its bytes',
    async (_, text) => {
      const expected = (await nodemailerBuild({ text })).toString('latin1');
      expect((await buildMime(fixed({ text }))).toString('latin1')).toBe(expected);
      expect((await buildMime(fixed({ text: Buffer.from(text) }))).toString('latin1')).toBe(expected);
    },
  );

  it('leaves Bcc out of the headers', async () => {
    const mime = (await buildMime(fixed({ bcc: ['hidden@example.net'], text: 'x' }))).toString();
    expect(mime).not.toMatch(/hidden@example\.net/);
  });

  it('builds a message whose content is a stream with nodemailer itself', async () => {
    const mail = (): Mail.Options => ({
      text: 'Streamed attachment',
      attachments: [
        { filename: 'data.csv', content: Readable.from([Buffer.from('a,b\r\n1,2\r\n')]), contentType: 'text/csv' },
      ],
    });
    const mime = await buildMime(fixed(mail()));
    expect(mime.toString('latin1')).toBe((await nodemailerBuild(mail())).toString('latin1'));
    expect(mime.toString()).toMatch(/filename=data\.csv/);
  });
});

describe('composeSigned', () => {
  const { privateKey } = generateKeyPairSync('rsa', {
    modulusLength: 2048,
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
    publicKeyEncoding: { type: 'spki', format: 'pem' },
  });
  const key = { domainName: 'example.test', keySelector: 'svc1', privateKey };
  const T = 1_767_225_600;

  it.each(cases)('signs %s into the bytes of nodemailer’s build, signed', async (_name, mail) => {
    const signed = await composeSigned({ mail: fixed(mail), key, signTime: T });
    expect(signed.toString('latin1')).toBe(dkimSign(await nodemailerBuild(mail), key, T).toString('latin1'));
  });

  it('signs a long text given as its bytes into the bytes of nodemailer’s build of the string, signed', async () => {
    const text = mixedText(3, 400_000).replace(/\r\n/g, '\n');
    const signed = await composeSigned({ mail: fixed({ text: Buffer.from(text) }), key, signTime: T });
    expect(signed.toString('latin1')).toBe(dkimSign(await nodemailerBuild({ text }), key, T).toString('latin1'));
  });

  it('writes attachments given in pieces as the same attachments given whole, whatever the pieces’ sizes', async () => {
    const bytes = Buffer.from(Array.from({ length: 10_000 }, (_, i) => (i * 131 + (i >> 7)) % 256));
    const csv = Buffer.from('a,b\r\n1,2\r\n'.repeat(300));
    const whole: Mail.Options = {
      text: 'Two files',
      attachments: [
        { filename: 'data.bin', content: bytes, contentType: 'application/octet-stream' },
        { filename: 'table.csv', content: csv, contentType: 'text/csv' },
        { filename: 'empty.bin', content: Buffer.alloc(0), contentType: 'application/octet-stream' },
      ],
    };
    const expected = dkimSign(await nodemailerBuild(whole), key, T).toString('latin1');
    const split = (b: Buffer, sizes: number[]) => {
      const out: Buffer[] = [];
      let at = 0;
      for (const n of sizes) out.push(b.subarray(at, (at += n)));
      return [...out, b.subarray(at)].filter((p) => p.length);
    };
    for (const sizes of [[], [57 * 100], [1], [2, 2, 2], [1000, 1, 57, 4000], [9_998, 1]]) {
      const mail = { ...whole, attachments: whole.attachments!.map((a) => ({ ...a, content: undefined })) };
      const pieces = [
        split(bytes, sizes),
        split(
          csv,
          sizes.map((n) => n % 500),
        ),
        [],
      ];
      const signed = await composeSigned({ mail: fixed(mail), pieces, key, signTime: T });
      expect(signed.toString('latin1'), `pieces of ${sizes.join(', ')}`).toBe(expected);
    }
  });
});
