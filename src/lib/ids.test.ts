import { describe, expect, it } from 'vitest';
import { ID_CHARS } from '../contract/ids.js';
import { newId, timeOf, timeOrderedId, timeOrderedIds } from './ids.js';

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

  it('carries its time', () => {
    for (const ms of [0, 61, 62, 1_700_000_000_000]) expect(timeOf(timeOrderedId('eml', ms))).toBe(ms);
  });
});

describe('timeOrderedIds', () => {
  const t = Date.UTC(2030, 0, 1);

  it('keeps the order ids were made in when the clock steps back, counting on from the last time until it is past', () => {
    const next = timeOrderedIds('eml');
    const made = [next(t), next(t - 3_600_000), next(t - 3_599_999), next(t), next(t + 60_000)];
    expect([...made].sort()).toEqual(made);
    expect(made.map(timeOf)).toEqual([t, t + 1, t + 2, t + 3, t + 60_000]);
  });

  it('keeps the order within one millisecond', () => {
    const next = timeOrderedIds('eml');
    const made = Array.from({ length: 100 }, () => next(t));
    expect([...made].sort()).toEqual(made);
  });

  it('makes ids that sort after the newest of an earlier run, whose clock was ahead', () => {
    const earlier = timeOrderedId('eml', t + 86_400_000);
    const next = timeOrderedIds('eml', earlier);
    expect(next(t) > earlier).toBe(true);
    expect(timeOf(next(t + 2 * 86_400_000))).toBe(t + 2 * 86_400_000);
  });
});
