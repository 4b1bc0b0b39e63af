import { describe, expect, it } from 'vitest';
import {
  CommandReader,
  decodeMailboxName,
  encodeMailboxName,
  imapString,
  inSet,
  parseSequenceSet,
  type ReaderEvent,
  tagOf,
  Tokens,
  tokenize,
} from './parser.js';

const feed = (r: CommandReader, ...chunks: string[]): ReaderEvent[] => chunks.flatMap((c) => r.push(Buffer.from(c)));
const text = (evs: ReaderEvent[]) =>
  evs.map((e) =>
    e.type === 'command' ? `CMD ${e.data.toString()}` : e.type === 'continue' ? '+' : `${e.tag} ${e.status} ${e.text}`,
  );

describe('CommandReader', () => {
  it('joins a command split across reads, and splits two in one read', () => {
    const r = new CommandReader();
    expect(text(feed(r, 'a1 NO', 'OP\r\na2 CAPA'))).toEqual(['CMD a1 NOOP\r\n']);
    expect(text(feed(r, 'BILITY\r\n'))).toEqual(['CMD a2 CAPABILITY\r\n']);
  });

  it('asks for a synchronizing literal with "+", takes a LITERAL+ one without, and keeps the command whole', () => {
    const r = new CommandReader();
    expect(text(feed(r, 'a LOGIN {3}\r\n'))).toEqual(['+']);
    expect(text(feed(r, 'bob {5+}\r\npa\r\ns\r\n'))).toEqual(['CMD a LOGIN {3}\r\nbob {5+}\r\npa\r\ns\r\n']);
  });

  it('skips a line over the cap as it arrives and answers it BAD with its tag, then goes on', () => {
    const r = new CommandReader(undefined, 100);
    const evs = feed(r, `t1 NOOP ${'x'.repeat(80)}`, 'y'.repeat(80), 'z\r\nt2 NOOP\r\n');
    expect(text(evs)).toEqual(['t1 BAD Command line too long (the limit is 100 bytes)', 'CMD t2 NOOP\r\n']);
  });

  it('refuses a literal past the cap: without "+" for a synchronizing one, dropping the bytes of a LITERAL+ one', () => {
    const r = new CommandReader(undefined, 100);
    expect(text(feed(r, 'a LOGIN {500}\r\n'))).toEqual(['a BAD Literal too large (a command may hold 100 bytes)']);
    expect(
      text(feed(r, `b LOGIN {500+}\r\n${'q'.repeat(300)}`, `${'q'.repeat(200)} {2+}\r\nzz\r\nc NOOP\r\n`)),
    ).toEqual(['b BAD Literal too large (a command may hold 100 bytes)', 'CMD c NOOP\r\n']);
  });

  it('lets the session refuse a literal (APPEND) before it is sent', () => {
    const r = new CommandReader((head) => (/APPEND/.test(head) ? { status: 'NO', text: 'no APPEND' } : null));
    expect(text(feed(r, 'x APPEND INBOX {10}\r\ny NOOP\r\n'))).toEqual(['x NO no APPEND', 'CMD y NOOP\r\n']);
  });
});

describe('tokenize', () => {
  it('reads atoms, quoted strings with escapes, literals, lists, sections and partial ranges', () => {
    const toks = tokenize(
      Buffer.from('a FETCH 1:* (BODY.PEEK[HEADER.FIELDS (Subject "X-A")]<0.100> "q\\"s\\\\" {3}\r\nabc)\r\n'),
    );
    expect(toks).toEqual([
      { t: 'atom', v: 'a' },
      { t: 'atom', v: 'FETCH' },
      { t: 'atom', v: '1:*' },
      { t: '(' },
      { t: 'atom', v: 'BODY.PEEK' },
      { t: '[' },
      { t: 'atom', v: 'HEADER.FIELDS' },
      { t: '(' },
      { t: 'atom', v: 'Subject' },
      { t: 'string', v: 'X-A', literal: false },
      { t: ')' },
      { t: ']' },
      { t: 'partial', v: '0.100' },
      { t: 'string', v: 'q"s\\', literal: false },
      { t: 'string', v: 'abc', literal: true },
      { t: ')' },
    ]);
  });

  it('refuses an unterminated string and a literal shorter than announced', () => {
    expect(() => tokenize(Buffer.from('a LOGIN "x\r\n'))).toThrow(/Line break inside a quoted string/);
    expect(() => tokenize(Buffer.from('a LOGIN {9}\r\nab'))).toThrow(/shorter than announced/);
  });

  it('reads astrings and nstrings', () => {
    const t = new Tokens(tokenize(Buffer.from('x "y" NIL\r\n')));
    expect(t.astring()).toBe('x');
    expect(t.astring()).toBe('y');
    expect(t.nstring()).toBeNull();
    expect(t.done).toBe(true);
  });

  it('finds the tag of a command it cannot parse', () => {
    expect(tagOf(Buffer.from('a4 LOGIN "x\r\n'))).toBe('a4');
    expect(tagOf(Buffer.from(')))\r\n'))).toBe('*');
    expect(tagOf(Buffer.from('+x NOOP\r\n'))).toBe('*');
  });
});

describe('sequence sets', () => {
  it('parses ranges in either order and * as the largest', () => {
    const set = parseSequenceSet('2,4:7,9:*,12:10');
    expect(set).toEqual([
      [2, 2],
      [4, 7],
      [9, Number.POSITIVE_INFINITY],
      [10, 12],
    ]);
    expect([1, 2, 3, 5, 8, 9, 20].filter((n) => inSet(set, n, 20))).toEqual([2, 5, 9, 20]);
    // 100:* with 50 the largest is 50:100.
    expect(inSet(parseSequenceSet('100:*'), 50, 50)).toBe(true);
  });
  it('refuses 0 and anything not a set', () => {
    expect(() => parseSequenceSet('0:3')).toThrow();
    expect(() => parseSequenceSet('1,,2')).toThrow();
    expect(() => parseSequenceSet('a')).toThrow();
  });
});

describe('output', () => {
  it('quotes what is safe and makes a literal of the rest', () => {
    expect(imapString('a "b" \\c')).toBe('"a \\"b\\" \\\\c"');
    expect(imapString(null)).toBe('NIL');
    expect(imapString('é\r\n').toString()).toBe('{4}\r\né\r\n');
  });
  it('writes and reads mailbox names in modified UTF-7', () => {
    expect(encodeMailboxName('Büro & Co')).toBe('B&APw-ro &- Co');
    expect(decodeMailboxName('B&APw-ro &- Co')).toBe('Büro & Co');
    expect(decodeMailboxName(encodeMailboxName('日本語 team'))).toBe('日本語 team');
  });
});
