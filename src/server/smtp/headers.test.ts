import { simpleParser, type AddressObject } from 'mailparser';
import { describe, expect, it } from 'vitest';
import { parseHeaders } from './headers.js';

const MESSAGES: Record<string, string> = {
  plain: 'From: Shop <orders@example.test>\r\nTo: a@example.com, "B, Person" <b@example.com>\r\nSubject: Your order\r\nMessage-ID: <msg_1@example.test>\r\n\r\nHello',
  encoded:
    'From: =?UTF-8?B?w4lsaXNl?= <elise@example.test>\r\nTo: =?UTF-8?Q?J=C3=BCrgen?= <j@example.com>\r\nCc: c@example.com\r\n' +
    'Subject: =?UTF-8?Q?Gr=C3=BC=C3=9Fe?= aus =?UTF-8?B?S8O2bG4=?=\r\nMessage-ID: msg_2@example.test\r\n\r\nbody',
  folded:
    'From: a@example.com\r\nTo: one@example.com,\r\n two@example.com,\r\n\tthree@example.com\r\nSubject: a long\r\n subject line\r\n' +
    'X-Custom: value\r\nX-Custom: second\r\n\r\n',
  groups: 'From: "Ops" <ops@example.com>\r\nTo: Team: x@example.com, y@example.com;, z@example.com\r\nSubject:\r\n\r\nbody',
  'no message-id, LF only': 'From: lf@example.com\nTo: r@example.com\nSubject: lf\n\nbody\n',
  'utf-8 raw': 'From: Zoë <zoe@example.com>\r\nTo: ü@exämple.com\r\nSubject: Привет\r\n\r\nbody',
  'headers only': 'From: x@example.com\r\nSubject: nothing else',
};

const addresses = (f: AddressObject | AddressObject[] | undefined): string[] => {
  const out: string[] = [];
  const walk = (vs: AddressObject['value']) => vs.forEach((v) => (v.address && out.push(v.address), v.group && walk(v.group)));
  (Array.isArray(f) ? f : f ? [f] : []).forEach((a) => walk(a.value));
  return out;
};

describe('parseHeaders: the sink’s header-only parse', () => {
  for (const [name, source] of Object.entries(MESSAGES)) {
    it(`reads ${name} exactly as mailparser's full parse does`, async () => {
      const raw = Buffer.from(source, 'utf8');
      const full = await simpleParser(raw);
      const mine = parseHeaders(raw);
      expect(mine.messageId).toBe(full.messageId ?? null);
      expect(mine.subject).toBe(full.subject ?? null);
      expect(mine.from).toBe(full.from?.text ?? null);
      expect(mine.to).toEqual(addresses(full.to));
      expect(mine.cc).toEqual(addresses(full.cc));
      expect(mine.lines.map((l) => `${l.name}:${l.value}`)).toEqual(
        full.headerLines.map((h) => {
          const i = h.line.indexOf(':');
          return `${h.line.slice(0, i)}:${h.line.slice(i + 1).replace(/\r?\n[ \t]/g, ' ').trim()}`;
        }),
      );
    });
  }

  it('decodes what a person reads: encoded words, display names and groups', () => {
    const enc = parseHeaders(Buffer.from(MESSAGES.encoded!));
    expect(enc.subject).toBe('Grüße aus Köln');
    expect(enc.from).toBe('"Élise" <elise@example.test>');
    expect(enc.messageId).toBe('<msg_2@example.test>');
    expect(parseHeaders(Buffer.from(MESSAGES.groups!)).to).toEqual(['x@example.com', 'y@example.com', 'z@example.com']);
    expect(parseHeaders(Buffer.from(MESSAGES.folded!)).lines.filter((l) => l.name === 'X-Custom').map((l) => l.value)).toEqual([
      'value',
      'second',
    ]);
  });
});
