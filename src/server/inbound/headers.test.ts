import { simpleParser, type AddressObject } from 'mailparser';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parseHeaders } from './headers.js';

// Every raw message of fixtures/mail, by file name.
const DIR = fileURLToPath(new URL('../../../fixtures/mail/', import.meta.url));
const MESSAGES: Record<string, string> = Object.fromEntries(
  readdirSync(DIR)
    .filter((f) => f.endsWith('.eml'))
    .map((f) => [f.replace(/\.eml$/, ''), readFileSync(join(DIR, f), 'utf8')]),
);

const addresses = (f: AddressObject | AddressObject[] | undefined): string[] => {
  const out: string[] = [];
  const walk = (vs: AddressObject['value']): void => {
    for (const v of vs) {
      if (v.address) out.push(v.address);
      if (v.group) walk(v.group);
    }
  };
  for (const a of Array.isArray(f) ? f : f ? [f] : []) walk(a.value);
  return out;
};

describe('parseHeaders: the sink’s header-only parse', () => {
  it('has the fixtures to compare', () => expect(Object.keys(MESSAGES).length).toBeGreaterThanOrEqual(7));

  for (const [name, source] of Object.entries(MESSAGES)) {
    it(`reads ${name} exactly as mailparser's full parse does`, async () => {
      const raw = Buffer.from(source, 'utf8');
      const full = await simpleParser(raw);
      const mine = await parseHeaders(raw);
      expect(mine.messageId).toBe(full.messageId ?? null);
      expect(mine.subject).toBe(full.subject ?? null);
      expect(mine.from).toBe(full.from?.text ?? null);
      expect(mine.to).toEqual(addresses(full.to));
      expect(mine.cc).toEqual(addresses(full.cc));
      expect(mine.lines.map((l) => `${l.name}:${l.value}`)).toEqual(
        full.headerLines.map((h) => {
          const i = h.line.indexOf(':');
          return `${h.line.slice(0, i)}:${h.line
            .slice(i + 1)
            .replace(/\r?\n[ \t]/g, ' ')
            .trim()}`;
        }),
      );
    });
  }

  it('tells a signed header block from one without a DKIM-Signature, whatever the body says', async () => {
    const signed =
      'DKIM-Signature: v=1; a=rsa-sha256; d=example.test; s=svc1; b=abc\r\nFrom: a@example.test\r\n\r\nHi\r\n';
    expect((await parseHeaders(Buffer.from(signed))).signed).toBe(true);
    expect(
      (await parseHeaders(Buffer.from('From: a@example.test\r\n\r\nDKIM-Signature: in the body\r\n'))).signed,
    ).toBe(false);
    for (const source of Object.values(MESSAGES)) expect((await parseHeaders(Buffer.from(source))).signed).toBe(false);
  });

  it('decodes what a person reads: encoded words, display names and groups', async () => {
    const enc = await parseHeaders(Buffer.from(MESSAGES['encoded-words']!));
    expect(enc.subject).toBe('Grüße aus Köln');
    expect(enc.from).toBe('"Élise" <elise@example.test>');
    expect(enc.messageId).toBe('<msg_2@example.test>');
    expect((await parseHeaders(Buffer.from(MESSAGES.groups!))).to).toEqual([
      'x@example.com',
      'y@example.com',
      'z@example.com',
    ]);
    expect(
      (await parseHeaders(Buffer.from(MESSAGES.folded!))).lines
        .filter((l) => l.name === 'X-Custom')
        .map((l) => l.value),
    ).toEqual(['value', 'second']);
  });
});
