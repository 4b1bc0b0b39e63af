import { describe, expect, it } from 'vitest';
import { isLoopbackHost } from '../../../lib/loopback.js';
import { dotStuffer, lineReader, MAX_LINE, messageNumber, topOf } from './wire.js';

/** The stuffed bytes of `raw` fed in pieces of `size` bytes, as text. */
function stuffed(raw: string, size: number): string {
  const s = dotStuffer();
  const bytes = Buffer.from(raw, 'latin1');
  const out: Buffer[] = [];
  for (let i = 0; i < bytes.length; i += size) out.push(s.push(bytes.subarray(i, i + size)));
  out.push(s.end());
  return Buffer.concat(out).toString('latin1');
}

describe('dotStuffer', () => {
  const raw = 'Subject: x\r\n\r\n.one\r\nmid.dle\r\n..two\r\n.\r\nlast';
  const want = 'Subject: x\r\n\r\n..one\r\nmid.dle\r\n...two\r\n..\r\nlast\r\n.\r\n';

  it('doubles a leading dot on every line, closes the last line and ends with "." alone, however the bytes are cut', () => {
    for (const size of [1, 2, 3, 5, 7, 64, 10_000]) expect(stuffed(raw, size), `pieces of ${size}`).toBe(want);
  });

  it('turns a bare LF into CRLF (a CR split from its LF by a piece boundary is kept one CR)', () => {
    for (const size of [1, 2, 4, 100]) {
      expect(stuffed('a\nb\r\n.c\n\n', size)).toBe('a\r\nb\r\n..c\r\n\r\n.\r\n');
      expect(stuffed('a\r', size)).toBe('a\r\n.\r\n');
    }
  });

  it('a message ending in CRLF gets the "." line alone; an empty one only the "."', () => {
    expect(stuffed('a\r\n', 10)).toBe('a\r\n.\r\n');
    expect(stuffed('', 10)).toBe('.\r\n');
  });

  it('keeps bytes that are not ASCII as they are', () => {
    const bytes = Buffer.from([0xff, 0x00, 0x2e, 0x0d, 0x0a, 0x2e, 0x80]);
    const s = dotStuffer();
    expect([...Buffer.concat([s.push(bytes), s.end()])]).toEqual([
      0xff, 0x00, 0x2e, 0x0d, 0x0a, 0x2e, 0x2e, 0x80, 0x0d, 0x0a, 0x2e, 0x0d, 0x0a,
    ]);
  });
});

describe('topOf', () => {
  const msg = Buffer.from('A: 1\r\nB: 2\r\n\r\nl1\r\nl2\r\nl3\r\n');
  it('is the header block, the blank line and the first n lines of the body', () => {
    expect(topOf(msg, 0).toString()).toBe('A: 1\r\nB: 2\r\n\r\n');
    expect(topOf(msg, 2).toString()).toBe('A: 1\r\nB: 2\r\n\r\nl1\r\nl2\r\n');
    expect(topOf(msg, 3).toString()).toBe(msg.toString());
    expect(topOf(msg, 99).toString()).toBe(msg.toString());
  });
  it('is the whole message when it has no body, and takes LF line ends and an unended last line', () => {
    expect(topOf(Buffer.from('A: 1\r\nB: 2'), 0).toString()).toBe('A: 1\r\nB: 2');
    expect(topOf(Buffer.from('A: 1\n\nx\ny'), 1).toString()).toBe('A: 1\n\nx\n');
    expect(topOf(Buffer.from('A: 1\n\nx\ny'), 2).toString()).toBe('A: 1\n\nx\ny');
  });
});

describe('lineReader', () => {
  it('splits CRLF and LF lines across pieces, keeping an unfinished line for later', () => {
    const r = lineReader();
    r.push(Buffer.from('USER a\r\nPA'));
    expect(r.next()).toBe('USER a');
    expect(r.next()).toBeNull();
    r.push(Buffer.from('SS b c\nNOOP\r'));
    expect(r.next()).toBe('PASS b c');
    expect(r.next()).toBeNull();
    r.push(Buffer.from('\n'));
    expect(r.next()).toBe('NOOP');
  });
  it('overflows past MAX_LINE bytes without a line end; clear() forgets what is unread', () => {
    const r = lineReader();
    r.push(Buffer.alloc(MAX_LINE, 0x41));
    expect(r.overflow()).toBe(false);
    r.push(Buffer.from('A'));
    expect(r.overflow()).toBe(true);
    r.clear();
    expect(r.overflow()).toBe(false);
    expect(r.next()).toBeNull();
  });
});

describe('messageNumber, and the loopback rule a password in the clear meets', () => {
  it('takes decimal digits only', () => {
    expect(messageNumber('12')).toBe(12);
    expect(messageNumber('0')).toBe(0);
    for (const bad of [undefined, '', '-1', '+1', '1x', '1.0', ' 1', '1234567890'])
      expect(messageNumber(bad)).toBeNull();
  });
  it('knows the loopback addresses, IPv4 mapped too (a socket without an address is read as "")', () => {
    for (const a of ['127.0.0.1', '127.1.2.3', '::1', '::ffff:127.0.0.1']) expect(isLoopbackHost(a)).toBe(true);
    for (const a of ['', '10.0.0.1', '::ffff:10.0.0.1', '1127.0.0.1', 'fe80::1']) {
      expect(isLoopbackHost(a)).toBe(false);
    }
  });
});
