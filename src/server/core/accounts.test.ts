import { describe, expect, it } from 'vitest';
import { HOUR, manualClock, MINUTE, realClock, SECOND } from '../../lib/clock.js';
import { openDb } from '../store/db.js';
import { createRateStore } from '../store/accounts.js';
import { slugify } from './workspaces.js';
import { checkPasswordRules } from './rules/passwords.js';
import { createRateLimits } from './rate-limits.js';
import type { ServiceError } from './errors.js';

describe('slugify', () => {
  it('lowercases ASCII, folds accents, collapses other characters to one dash and trims', () => {
    expect(slugify('  Acme Ünïcorns — R&D!! ')).toBe('acme-unicorns-r-d');
    expect(slugify('!!!')).toBe('workspace');
    expect(slugify('a'.repeat(80)).length).toBe(63);
  });
});

describe('password rules', () => {
  it('only length and the breach list: 12 characters, any composition', async () => {
    await expect(checkPasswordRules('short-pw')).rejects.toMatchObject({ code: 'password_too_short' });
    await expect(checkPasswordRules('password1234')).rejects.toMatchObject({ code: 'password_breached' });
    await expect(checkPasswordRules('PASSWORD1234')).rejects.toMatchObject({ code: 'password_breached' });
    await expect(checkPasswordRules('aaaaaaaaaaaaq')).resolves.toBeUndefined();
  });
});

describe('sliding windows on the service clock', () => {
  it('refuses when full with Retry-After until the oldest counted event leaves; moving the clock frees it', () => {
    const { db } = openDb({ memory: true });
    const clock = manualClock(1_000_000);
    const w = createRateLimits(createRateStore(db), clock);
    const limit = { bucket: 'b', limit: 2, windowMs: MINUTE };
    w.hit('b');
    clock.advance(10_000);
    w.hit('b');
    let err: ServiceError | undefined;
    try {
      w.check(limit);
    } catch (e) {
      err = e as ServiceError;
    }
    expect(err?.code).toBe('rate_limited');
    expect(err?.extra.retryAfterSeconds).toBe(50);
    clock.advance(50_000);
    expect(() => w.check(limit)).not.toThrow();
    w.clear('b');
    expect(createRateStore(db).count('b', 0, Number.MAX_SAFE_INTEGER).n).toBe(0);
  });

  const refusal = (f: () => void): number | undefined => {
    try {
      f();
    } catch (e) {
      return (e as ServiceError).extra.retryAfterSeconds;
    }
    return undefined;
  };

  it('keeps its Retry-After when the wall clock steps back, and frees the window when its time has passed', () => {
    const { db } = openDb({ memory: true });
    let wall = Date.UTC(2026, 7, 1, 12);
    let elapsed = 0;
    const w = createRateLimits(createRateStore(db), realClock({ wall: () => wall, elapsed: () => elapsed }));
    const limit = { bucket: 'b', limit: 1, windowMs: MINUTE };
    w.hit('b');
    elapsed += 20 * SECOND;
    wall += 20 * SECOND;
    expect(refusal(() => w.check(limit))).toBe(40);
    wall -= HOUR;
    expect(refusal(() => w.check(limit))).toBe(40);
    elapsed += 40 * SECOND;
    expect(refusal(() => w.check(limit))).toBeUndefined();
  });

  it('does not count events stamped after the present, which a run whose clock was ahead left', () => {
    const { db } = openDb({ memory: true });
    const rates = createRateStore(db);
    const clock = manualClock(1_000_000);
    rates.add('b', 1_000_000 + HOUR);
    const w = createRateLimits(rates, clock);
    expect(refusal(() => w.check({ bucket: 'b', limit: 1, windowMs: MINUTE }))).toBeUndefined();
    w.hit('b');
    expect(refusal(() => w.check({ bucket: 'b', limit: 1, windowMs: MINUTE }))).toBe(60);
  });
});
