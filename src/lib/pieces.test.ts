import { isUtf8 } from 'node:buffer';
import { describe, expect, it } from 'vitest';
import { cutPieces, joinPieces } from './pieces.js';

describe('cutPieces and joinPieces', () => {
  it('cut bytes into views of at most the size, and join them back whole', () => {
    const bytes = Buffer.from(Array.from({ length: 10_000 }, (_, i) => i % 251));
    const pieces = cutPieces(bytes, 4096);
    expect(pieces.map((p) => p.length)).toEqual([4096, 4096, 1808]);
    // Views, not copies.
    expect(pieces.every((p) => p.buffer === bytes.buffer)).toBe(true);
    const [head, ...rest] = pieces;
    const joined = joinPieces(head!, 10_000 - 4096, rest);
    expect(joined.equals(bytes)).toBe(true);
  });

  it('cut UTF-8 where a character begins, so that each piece is UTF-8', () => {
    const text = 'é€🙂a'.repeat(1000);
    const pieces = cutPieces(Buffer.from(text), 101, true);
    expect(pieces.every((p) => p.length <= 101 && isUtf8(p))).toBe(true);
    expect(pieces.map((p) => p.toString('utf8')).join('')).toBe(text);
    // Cut at any byte instead, a character is split.
    expect(cutPieces(Buffer.from(text), 101).some((p) => !isUtf8(p))).toBe(true);
  });

  it('give an empty value as one empty piece', () => {
    expect(cutPieces(Buffer.alloc(0))).toEqual([Buffer.alloc(0)]);
  });
});
