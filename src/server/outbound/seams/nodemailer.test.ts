// The nodemailer seam: the one-pass writer (nodemailer-fast.ts) and nodemailer's own build write the same bytes, and the
// seam takes nodemailer's build by itself when nodemailer is not the one pinned.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import MailComposer from 'nodemailer/lib/mail-composer';
import type Mail from 'nodemailer/lib/mailer/index.js';
import * as qp from 'nodemailer/lib/qp';
import { describe, expect, it } from 'vitest';
import { stockForced } from '../../seams/choose.js';
import { NODEMAILER_PINNED, mimePath, selectMime, writeStock } from './nodemailer.js';
import { writeMime as writeInOnePass } from './nodemailer-fast.js';

// A fixed boundary, Message-ID and date make a build a function of the message alone.
const fixed = (mail: Mail.Options): Mail.Options => ({
  baseBoundary: 'fixedboundary',
  messageId: '<msg_seam@example.test>',
  date: new Date('2026-11-23T10:00:00Z'),
  from: 'Shop <orders@example.test>',
  to: ['someone@example.net'],
  subject: 'Your order',
  ...mail,
});

const binary = (n: number) => Buffer.from(Array.from({ length: n }, (_, i) => (i * 131 + (i >> 7)) % 256));
const long = 'Grüße, a line of text that goes on. 日本語 🙂\n'.repeat(4_000);

const cases: [string, Mail.Options, (Buffer[] | undefined)[]?][] = [
  ['text', { text: 'Thanks for your order.' }],
  [
    'html and text',
    { subject: 'Grüße 🙂', text: 'Thanks.\r\n.dot\r\n', html: '<p>Thanks for your order.</p>'.repeat(60) },
  ],
  ['a long text as a string', { text: long }],
  ['a long text as its bytes', { text: Buffer.from(long) }],
  [
    'attachments: binary, text, inline, message/rfc822, empty',
    {
      text: 'See attached.',
      html: '<p><img src="cid:logo"></p>',
      headers: { 'X-Svc-Tags': 'category=receipt' },
      attachments: [
        { filename: 'receipt.pdf', content: binary(3000), contentType: 'application/pdf' },
        {
          filename: 'notes.txt',
          content: Buffer.from('line one\r\nline two   \r\nGrüße\r\n'),
          contentType: 'text/plain',
        },
        { filename: 'logo.png', content: binary(8), contentType: 'image/png', cid: 'logo' },
        { filename: 'fwd.eml', content: Buffer.from('Subject: fwd\r\n\r\nHi\r\n'), contentType: 'message/rfc822' },
        { filename: 'empty.bin', content: Buffer.alloc(0), contentType: 'application/octet-stream' },
      ],
    },
  ],
  [
    'attachments given in pieces',
    {
      text: 'Two files',
      attachments: [
        { filename: 'data.bin', contentType: 'application/octet-stream' },
        { filename: 'fwd.eml', contentType: 'message/rfc822' },
      ],
    },
    [
      [binary(1000), binary(1), binary(57), binary(4000)],
      [Buffer.from('Subject: fwd\r\n'), Buffer.from('\r\nHi\r\n')],
    ],
  ],
];

describe('the nodemailer seam writes', () => {
  for (const [name, mail, pieces] of cases) {
    for (const crlf of [false, true]) {
      it(`${name}${crlf ? ', every line ending in CRLF,' : ''} byte for byte alike on both paths`, async () => {
        const fast = await writeInOnePass(fixed(mail), pieces, crlf, crlf ? 2048 : 0);
        const stock = await writeStock(fixed(mail), pieces, crlf, 0);
        expect(fast.mime.length).toBeGreaterThan(0);
        expect(fast.mime.toString('latin1')).toBe(stock.mime.toString('latin1'));
        // The room asked for is kept before the message: the signature goes there without a copy.
        expect(fast.room).toBe(crlf ? 2048 : 0);
        expect(fast.mime.byteOffset).toBeGreaterThanOrEqual(fast.room);
      });
    }
  }
});

describe('the choice of path', () => {
  const lib = { version: NODEMAILER_PINNED, MailComposer, qp };

  it('is the version package.json and the lock pin exactly', () => {
    const installed = createRequire(import.meta.url)('nodemailer/package.json').version as string;
    // After an upgrade: run these tests against the new version, then move the seam's pin (or leave the stock path).
    expect(installed, 'the version nodemailer-fast.ts is written for').toBe(NODEMAILER_PINNED);
    const pkg = JSON.parse(readFileSync(new URL('../../../../package.json', import.meta.url), 'utf8'));
    expect(pkg.dependencies.nodemailer).toBe(installed);
    const lock = JSON.parse(readFileSync(new URL('../../../../package-lock.json', import.meta.url), 'utf8'));
    expect(lock.packages[''].dependencies.nodemailer).toBe(installed);
  });

  it('is the fast path for the nodemailer pinned, with every private part the one-pass writer reads', () => {
    expect(selectMime(lib, {})).toEqual({ path: 'fast', why: `nodemailer ${NODEMAILER_PINNED}, as pinned` });
  });

  it('is the stock path, by itself, for another version of nodemailer', () => {
    expect(selectMime({ ...lib, version: '10.7.0' }, {})).toEqual({
      path: 'stock',
      why: `nodemailer 10.7.0 is installed; the fast path is written for ${NODEMAILER_PINNED}`,
    });
  });

  it('is the stock path, by itself, for the pinned version without a private part it reads', () => {
    // A composer whose tree keeps its processing steps elsewhere; a tree whose nodes build their headers otherwise.
    class Moved extends MailComposer {
      override compile() {
        const root = super.compile();
        delete (root as unknown as Record<string, unknown>)._processFuncs;
        return root;
      }
    }
    expect(selectMime({ ...lib, MailComposer: Moved }, {}).why).toMatch(/lacks MimeNode#_processFuncs$/);
    class Renamed extends MailComposer {
      override compile() {
        const root = super.compile();
        Object.defineProperty(root, 'buildHeaders', { value: undefined });
        return root;
      }
    }
    expect(selectMime({ ...lib, MailComposer: Renamed }, {}).why).toMatch(/lacks MimeNode#buildHeaders$/);
    expect(selectMime({ ...lib, qp: { ...qp, Encoder: undefined } }, {}).why).toMatch(/lacks qp\.Encoder$/);
    expect(selectMime({ ...lib, qp: undefined }, {}).path).toBe('stock');
    expect(selectMime({ ...lib, MailComposer: undefined }, {}).why).toMatch(/lacks lib\/mail-composer$/);
  });

  it('is the stock path whenever SVC_STOCK_SEAMS is set', () => {
    expect(selectMime(lib, { SVC_STOCK_SEAMS: 'true' }).path).toBe('stock');
  });

  it('in this process is the one its environment asks for', () => {
    expect(mimePath().path).toBe(stockForced(process.env, ['nodemailer']) ? 'stock' : 'fast');
  });
});
