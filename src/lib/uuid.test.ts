import { describe, expect, it } from 'vitest';
import { randomUuid } from './uuid.js';

const V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe('randomUuid', () => {
  it('is a version 4 UUID, a new one each call', () => {
    const ids = Array.from({ length: 1000 }, () => randomUuid());
    for (const id of ids) expect(id).toMatch(V4);
    expect(new Set(ids).size).toBe(1000);
  });

  it("is Web Crypto's where the system's random source cannot be read", () => {
    const ids = Array.from({ length: 100 }, () => randomUuid('/nonexistent/urandom'));
    for (const id of ids) expect(id).toMatch(V4);
    expect(new Set(ids).size).toBe(100);
  });

  it('takes its bits from the source it reads', () => {
    // A source of zeros gives the zero UUID with only the version and variant bits set.
    expect(randomUuid('/dev/zero')).toBe('00000000-0000-4000-8000-000000000000');
  });
});
