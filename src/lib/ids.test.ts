import { describe, expect, it } from 'vitest';
import { ID_CHARS } from '../contract/ids.js';
import { newId, timeOrderedId } from './ids.js';

describe('timeOrderedId', () => {
  it('is shaped like every other id: the prefix and 24 base62 characters', () => {
    const id = timeOrderedId('eml');
    expect(id).toMatch(new RegExp(`^eml_[0-9A-Za-z]{${ID_CHARS}}$`));
    expect(id.length).toBe(newId('eml').length);
  });

  it('sorts in the order of the times it was made, whatever its random part', () => {
    const times = [0, 1, 61, 62, 3_843, 1_700_000_000_000, 1_700_000_000_001, 1_800_000_000_000];
    const ids = times.map((ms) => timeOrderedId('eml', ms));
    expect([...ids].reverse().sort()).toEqual(ids);
  });

  it('is unique within one millisecond', () => {
    const ids = new Set(Array.from({ length: 1_000 }, () => timeOrderedId('eml', 1_700_000_000_000)));
    expect(ids.size).toBe(1_000);
  });
});
