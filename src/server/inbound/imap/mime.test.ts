import { describe, expect, it } from 'vitest';
import { fetchResponse, parseFetchItems } from './fetch.js';
import { bodyStructure, envelope, parseMime, searchableBody, sectionBytes } from './mime.js';
import { Tokens, tokenize } from './parser.js';
import { matcher, parseSearch } from './search.js';

const INNER = [
  'From: Carol <carol@example.test>',
  'Subject: inner',
  'Content-Type: multipart/mixed; boundary="in"',
  '',
  '--in',
  'Content-Type: text/plain',
  '',
  'inner text',
  '--in',
  'Content-Type: image/png',
  'Content-Transfer-Encoding: base64',
  '',
  'iVBORw0K',
  '--in--',
  '',
].join('\r\n');

const MSG = Buffer.from(
  [
    'From: "Shop, Inc." <orders@example.test>',
    'To: Bob <bob@example.test>, team: ann@example.test, cy@example.test;',
    'Subject: =?utf-8?B?UmVjZWlwdCDinJM=?=',
    'Date: Wed, 02 Dec 2026 10:00:00 +0000',
    'Message-ID: <m1@example.test>',
    'MIME-Version: 1.0',
    'Content-Type: multipart/mixed; boundary="out"',
    '',
    'preamble',
    '--out',
    'Content-Type: multipart/alternative; boundary=alt',
    '',
    '--alt',
    'Content-Type: text/plain; charset=utf-8',
    'Content-Transfer-Encoding: quoted-printable',
    '',
    'Caf=C3=A9 total: 12 =E2=82=AC',
    '--alt',
    'Content-Type: text/html; charset=utf-8',
    '',
    '<p>Caf&eacute;</p>',
    '--alt--',
    '',
    '--out',
    'Content-Type: message/rfc822',
    '',
    INNER,
    '--out',
    'Content-Type: application/pdf',
    "Content-Disposition: attachment; filename*=utf-8''r%C3%A9sum%C3%A9.pdf",
    'Content-Transfer-Encoding: base64',
    '',
    'JVBERi0x',
    '--out--',
    'epilogue',
    '',
  ].join('\r\n'),
);

const str = (v: string | Buffer) => v.toString();

describe('the MIME structure of a message', () => {
  const root = parseMime(MSG);

  it('writes ENVELOPE with the raw subject, groups and the sender defaulting to From', () => {
    expect(str(envelope(root.fields))).toBe(
      '("Wed, 02 Dec 2026 10:00:00 +0000" "=?utf-8?B?UmVjZWlwdCDinJM=?=" (("Shop, Inc." NIL "orders" "example.test")) ' +
        '(("Shop, Inc." NIL "orders" "example.test")) (("Shop, Inc." NIL "orders" "example.test")) ' +
        '(("Bob" NIL "bob" "example.test")(NIL NIL "team" NIL)(NIL NIL "ann" "example.test")(NIL NIL "cy" "example.test")(NIL NIL NIL NIL)) ' +
        'NIL NIL NIL "<m1@example.test>")',
    );
  });

  it('writes BODYSTRUCTURE: nested multiparts, a message/rfc822 part with its envelope, an RFC 2231 file name', () => {
    const bs = str(bodyStructure(root, true));
    expect(bs).toMatch(/^\(\(\("TEXT" "PLAIN" \("CHARSET" "utf-8"\) NIL NIL "QUOTED-PRINTABLE" 29 1 NIL NIL NIL NIL\)/);
    expect(bs).toContain('"ALTERNATIVE" ("BOUNDARY" "alt") NIL NIL NIL)');
    expect(bs).toContain('("MESSAGE" "RFC822" NIL NIL NIL "7BIT" ');
    expect(bs).toContain('("IMAGE" "PNG" NIL NIL NIL "BASE64" 8 NIL NIL NIL NIL) "MIXED"');
    expect(bs).toContain(
      '("APPLICATION" "PDF" NIL NIL NIL "BASE64" 8 NIL ("ATTACHMENT" ("FILENAME" "=?utf-8?B?csOpc3Vtw6kucGRm?=")) NIL NIL)',
    );
    expect(bs).toMatch(/ "MIXED" \("BOUNDARY" "out"\) NIL NIL NIL\)$/);
    // BODY: the same without the extension data.
    expect(str(bodyStructure(root, false))).not.toContain('BOUNDARY');
  });

  it('finds each section by its part number', () => {
    const sec = (path: number[], what = '', fields: string[] = []) =>
      str(sectionBytes(root, MSG, { path, what: what as '', fields }));
    expect(sec([])).toBe(MSG.toString());
    expect(sec([1, 1])).toBe('Caf=C3=A9 total: 12 =E2=82=AC');
    expect(sec([1, 2], 'MIME')).toBe('Content-Type: text/html; charset=utf-8\r\n\r\n');
    expect(sec([2])).toBe(INNER);
    expect(sec([2], 'HEADER')).toMatch(/^From: Carol.*\r\n\r\n$/s);
    expect(sec([2], 'TEXT')).toMatch(/^--in\r\n/);
    expect(sec([2, 1])).toBe('inner text');
    expect(sec([2, 2])).toBe('iVBORw0K');
    expect(sec([3])).toBe('JVBERi0x');
    expect(sec([9])).toBe('');
    expect(sec([], 'HEADER.FIELDS', ['subject', 'message-id'])).toBe(
      'Subject: =?utf-8?B?UmVjZWlwdCDinJM=?=\r\nMessage-ID: <m1@example.test>\r\n\r\n',
    );
    expect(sec([], 'HEADER.FIELDS.NOT', ['from', 'to', 'subject', 'date', 'message-id'])).toBe(
      'MIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary="out"\r\n\r\n',
    );
  });

  it('answers a FETCH with sections, a partial range and the size', () => {
    const items = parseFetchItems(new Tokens(tokenize(Buffer.from('(UID BODY.PEEK[1.1]<0.4> RFC822.SIZE)\r\n'))), true);
    const res = fetchResponse(
      { seq: 3, uid: 42, size: 0, receivedAt: 0, flags: ['\\Seen'], source: MSG },
      items,
    ).toString();
    expect(res).toBe(`* 3 FETCH (UID 42 BODY[1.1]<0> {4}\r\nCaf= RFC822.SIZE ${MSG.length})\r\n`);
  });

  it('searches decoded text: the subject’s encoded word and the quoted-printable body', () => {
    expect(searchableBody(root)).toContain('Café total: 12 €');
    const match = (q: string) =>
      matcher(
        parseSearch(new Tokens(tokenize(Buffer.from(`${q}\r\n`)))),
        1,
        1,
      )({
        seq: 1,
        uid: 1,
        seen: false,
        deleted: false,
        size: MSG.length,
        receivedAt: Date.UTC(2026, 11, 2, 10),
        source: () => MSG,
      });
    expect(match('SUBJECT "receipt ✓"')).toBe(true);
    expect(match('BODY café')).toBe(true);
    expect(match('TEXT carol')).toBe(true);
    expect(match('HEADER Message-ID m1@')).toBe(true);
    expect(match('OR SUBJECT nope NOT UNSEEN')).toBe(false);
    expect(match('SENTON 2-Dec-2026 ON 2-Dec-2026 SINCE 1-Dec-2026 BEFORE 3-Dec-2026 1:* UID 1')).toBe(true);
    expect(match('(LARGER 10 SMALLER 5)')).toBe(false);
  });
});
