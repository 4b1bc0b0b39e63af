import { describe, expect, it } from 'vitest';
import { prng } from '../../../test/helpers/prng.js';
import { LONG_STRING_BYTES, parseJson } from './long-strings.js';

const MEMBERS = ['text', 'html'];

/** What parseJson makes of `json`, with the members it took as bytes read back as strings. */
function parsedAsStrings(json: string): { value: unknown; taken: string[] } {
  const { value, bytes } = parseJson(Buffer.from(json), MEMBERS);
  const out = { ...(value as Record<string, unknown>) };
  for (const [name, b] of Object.entries(bytes)) {
    expect(out[name], `${name} is '' in the value`).toBe('');
    out[name] = b.toString('utf8');
  }
  return { value: out, taken: Object.keys(bytes) };
}

/** A long text with every kind of character and escape JSON has, and raw UTF-8 past Latin-1. */
function longText(): string {
  const line = 'quote " backslash \\ slash / controls \b\f\r\t\u0001\u001f é € 🙂 \u2028 end\n';
  return line.repeat(Math.ceil((LONG_STRING_BYTES * 1.2) / line.length));
}

describe('parseJson', () => {
  it('gives a long text and HTML as the UTF-8 of the strings JSON.parse gives, the rest as JSON.parse does', () => {
    const body = {
      from: 'a@example.test',
      to: ['b@example.net', '"{[quoted]}" <c@example.net>'],
      attachments: [{ filename: 'a "b" {c}.txt', content: 'eyJ9XQ==' }],
      headers: { 'X-A': '\\"}' },
      text: longText(),
      html: `<p>${'caf\u00e9 \ud83d\ude00 '.repeat(200_000)}</p>`,
      tags: [],
    };
    for (const json of [JSON.stringify(body), JSON.stringify(body, null, 2), ` \n\t${JSON.stringify(body)}\r\n `]) {
      const { value, taken } = parsedAsStrings(json);
      expect(taken.sort()).toEqual(['html', 'text']);
      expect(value).toEqual(JSON.parse(json));
    }
  });

  it('decodes \\u escapes, surrogate pairs among them, and writes a lone surrogate as U+FFFD', () => {
    const escaped = `"${'\\u00e9\\u20ac\\ud83d\\ude00\\u0041\\/'.repeat(50_000)}x\\ud83d\\u0041\\ude00\\uDBFF"`;
    const { bytes } = parseJson(Buffer.from(`{"text":${escaped}}`), MEMBERS);
    expect(bytes.text!.toString('utf8')).toBe(`${'é€😀A/'.repeat(50_000)}x\ufffdA\ufffd\ufffd`);
  });

  it('leaves to JSON.parse a short text, a member named twice (however its name is written), a body not an object', () => {
    const long = JSON.stringify(longText());
    for (const json of [
      `{"text":"short","html":"<p>short</p>","pad":${long}}`,
      `{"text":${long},"text":"the last one counts"}`,
      `{"t\\u0065xt":${long},"text":"the last one counts"}`,
      `[{"text":${long}}]`,
      `{"other":${long}}`,
    ]) {
      const { value, bytes } = parseJson(Buffer.from(json), MEMBERS);
      expect(bytes).toEqual({});
      expect(value).toEqual(JSON.parse(json));
    }
    expect(parsedAsStrings(`{"t\\u0065xt":${long}}`).taken).toEqual(['text']);
  });

  it('throws as JSON.parse does for a body that is not JSON, the long strings in it or elsewhere', () => {
    const long = JSON.stringify(longText());
    for (const json of [
      `{"text":${long},}`,
      `{"text":${long}} trailing`,
      `{"text":${long},"to":[1,}`,
      `{"text":${long} "html":"x"}`,
      `{"text":${long}`,
      `{"text":${long.slice(0, -1)}`,
    ]) {
      expect(() => JSON.parse(json)).toThrow(SyntaxError);
      expect(() => parseJson(Buffer.from(json), MEMBERS), json.slice(-30)).toThrow(SyntaxError);
    }
    for (const bad of ['\u0000', '\n', '\\x', '\\u12G4', '\\u12"']) {
      const json = `{"text":"${'a'.repeat(LONG_STRING_BYTES)}${bad}"}`;
      expect(() => JSON.parse(json)).toThrow(SyntaxError);
      expect(() => parseJson(Buffer.from(json), MEMBERS), JSON.stringify(bad)).toThrow(SyntaxError);
    }
  });

  it('reads any object of random members as JSON.parse does (seeded)', () => {
    const random = prng(7).int;
    const alphabet = ['a', ' ', '"', '\\', '/', '\n', '\u0007', 'é', '€', '🙂', '{', '}', '[', ']', ':', ','];
    const short = (n: number) => Array.from({ length: n }, () => alphabet[random(alphabet.length)]).join('');
    // A long string is a random stretch repeated: as varied where it is cut up, and quicker to make.
    const str = (n: number) => (n <= 4096 ? short(n) : short(4096).repeat(Math.ceil(n / 4096)));
    const value = (depth: number): unknown => {
      switch (random(depth > 2 ? 4 : 6)) {
        case 0:
          return str(random(20));
        case 1:
          return random(1000) - 500;
        case 2:
          return [true, false, null][random(3)];
        case 3:
          return random(2) ? str(LONG_STRING_BYTES / 4 + random(1000)) : str(3);
        case 4:
          return Array.from({ length: random(4) }, () => value(depth + 1));
        default:
          return Object.fromEntries(Array.from({ length: random(4) }, () => [str(random(6)), value(depth + 1)]));
      }
    };
    let taken = 0;
    for (let round = 0; round < 20; round++) {
      const body: Record<string, unknown> = {};
      for (const name of ['a', 'text', 'b', 'html', 'c']) {
        if (!random(3)) continue;
        body[name] =
          MEMBERS.includes(name) && random(2) ? str(LONG_STRING_BYTES / 2 + random(LONG_STRING_BYTES)) : value(0);
      }
      const json = JSON.stringify(body, null, random(2) ? 1 : undefined);
      const parsed = parsedAsStrings(json);
      expect(parsed.value).toEqual(JSON.parse(json));
      taken += parsed.taken.length;
    }
    expect(taken).toBeGreaterThan(5);
  });
});
