// The mailparser seam: mailparser's header code run directly (mailparser-fast.ts) reads a header block as mailparser's
// own parse of it does, and the seam takes mailparser's parse by itself when mailparser is not the one pinned.
import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { MailParser } from 'mailparser';
import { describe, expect, it } from 'vitest';
import { headerBlock } from '../../core/rules/caught-body.js';
import { stockForced } from '../../seams/choose.js';
import { type HeaderFields, MAILPARSER_PINNED, headersPath, readStock, selectHeaders } from './mailparser.js';
import { missingParts, readHeaderFields } from './mailparser-fast.js';

const DIR = fileURLToPath(new URL('../../../../fixtures/mail/', import.meta.url));
const blocks: [string, Buffer][] = [
  ...readdirSync(DIR)
    .filter((f) => f.endsWith('.eml'))
    .map((f): [string, Buffer] => [f, headerBlock(readFileSync(DIR + f))]),
  [
    'line feeds alone, folded fields, a field twice, a signature',
    Buffer.from(
      'DKIM-Signature: v=1; a=rsa-sha256; d=example.test;\n s=svc1; b=abc\nFrom: =?UTF-8?B?w4lsaXNl?= <elise@example.test>\n' +
        'To: a@example.test,\n\tb@example.test\nTo: c@example.test\nCc: Team: x@example.test, y@example.test;\n' +
        'Subject: =?ISO-8859-1?Q?Gr=FC=DFe?= aus\n  =?UTF-8?Q?K=C3=B6ln?=\nMessage-ID: msg_3@example.test\n\n',
    ),
  ],
  ['no blank line after the fields', Buffer.from('Subject: cut short\r\nFrom: a@example.test\r\n')],
  ['no fields it stores', Buffer.from('X-Only: this\r\n\r\n')],
];

const PARSED_FIELDS = ['message-id', 'subject', 'from', 'to', 'cc'];
const stored = (h: HeaderFields) => ({
  lines: h.lines.map(({ key, line }) => ({ key, line })),
  fields: PARSED_FIELDS.map((k) => [k, h.fields.get(k)]),
});

describe('mailparser as mailparser-fast.ts knows it', () => {
  it('is the version the seam pins, and package.json and the lock pin it exactly', () => {
    const require = createRequire(import.meta.url);
    expect((require('mailparser/package.json') as { version: string }).version).toBe(MAILPARSER_PINNED);
    const pkg = require('../../../../package.json') as { dependencies: Record<string, string> };
    expect(pkg.dependencies.mailparser).toBe(MAILPARSER_PINNED);
    const lock = require('../../../../package-lock.json') as {
      packages: Record<string, { dependencies: Record<string, string> }>;
    };
    expect(lock.packages['']!.dependencies.mailparser).toBe(MAILPARSER_PINNED);
  });

  it('has the processHeaders the fast path calls', () => expect(missingParts(MailParser)).toBeNull());

  for (const [name, block] of blocks) {
    it(`reads ${name} on both paths alike`, async () => {
      const fast = readHeaderFields(block);
      const stock = await readStock(block);
      expect(stored(fast)).toEqual(stored(stock));
      expect(fast.lines.length).toBeGreaterThan(0);
    });
  }
});

describe('the choice of path', () => {
  const lib = { version: MAILPARSER_PINNED, MailParser };

  it('is the fast path for the mailparser pinned, with the private method the fast path uses', () => {
    expect(selectHeaders(lib, {})).toEqual({ path: 'fast', why: `mailparser ${MAILPARSER_PINNED}, as pinned` });
  });

  it('is the stock path, by itself, for another version of mailparser', () => {
    expect(selectHeaders({ ...lib, version: '3.10.0' }, {})).toEqual({
      path: 'stock',
      why: `mailparser 3.10.0 is installed; the fast path is written for ${MAILPARSER_PINNED}`,
    });
    expect(selectHeaders({ ...lib, version: null }, {}).path).toBe('stock');
  });

  it('is the stock path, by itself, for the pinned version without processHeaders, or with one that decodes otherwise', () => {
    class Gone extends MailParser {}
    Object.defineProperty(Gone.prototype, 'processHeaders', { value: undefined });
    expect(selectHeaders({ ...lib, MailParser: Gone }, {}).why).toMatch(/lacks MailParser\.prototype\.processHeaders$/);
    class Other extends MailParser {
      processHeaders(): unknown[] {
        return [];
      }
    }
    expect(selectHeaders({ ...lib, MailParser: Other }, {}).why).toMatch(
      /lacks MailParser#processHeaders as it decodes/,
    );
    expect(selectHeaders({ ...lib, MailParser: undefined }, {}).path).toBe('stock');
  });

  it('is the stock path whenever SVC_STOCK_SEAMS is set', () => {
    expect(selectHeaders(lib, { SVC_STOCK_SEAMS: '1' })).toEqual({ path: 'stock', why: 'SVC_STOCK_SEAMS is set' });
  });

  it('in this process is the one its environment asks for', () => {
    expect(headersPath().path).toBe(stockForced(process.env, ['mailparser']) ? 'stock' : 'fast');
  });
});
