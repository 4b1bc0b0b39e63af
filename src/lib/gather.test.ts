import { describe, expect, it } from 'vitest';
import { gather } from './gather.js';

describe('gather', () => {
  const bytes = Buffer.from(Array.from({ length: 1000 }, (_, i) => i % 251));
  const pieces = (b: Buffer) => [b.subarray(0, 1), b.subarray(1, 400), b.subarray(400, 401), b.subarray(401)];

  it('gives back every byte added, in order, whatever was declared: exactly, less, more or nothing', () => {
    for (const declared of [1000, 0, 1, 399, 401, 5000]) {
      const g = gather(declared);
      for (const p of pieces(bytes)) g.add(p);
      expect(g.bytes().equals(bytes), `declared ${declared}`).toBe(true);
    }
  });

  it('passes only the pieces it keeps as pieces through `keep`', () => {
    const kept: number[] = [];
    const g = gather(401, (p) => (kept.push(p.length), p));
    for (const p of pieces(bytes)) g.add(p);
    expect(g.bytes().equals(bytes)).toBe(true);
    expect(kept).toEqual([599]);
  });
});
