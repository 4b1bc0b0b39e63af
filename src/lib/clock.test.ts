import { describe, expect, it } from 'vitest';
import { HOUR, manualClock, realClock, SECOND } from './clock.js';

/** Time sources whose wall clock can be stepped apart from the time that passes. */
function steppable(start = Date.UTC(2026, 7, 1, 12)) {
  let wall = start;
  let elapsed = 5_000;
  return {
    sources: { wall: () => wall, elapsed: () => elapsed },
    pass(ms: number) {
      wall += ms;
      elapsed += ms;
    },
    step(ms: number) {
      wall += ms;
    },
  };
}

describe('the real clock', () => {
  it('reads the wall clock, and measures intervals on a reading that a wall clock stepped back does not move back', () => {
    const t = steppable();
    const clock = realClock(t.sources);
    expect(clock.now()).toBe(Date.UTC(2026, 7, 1, 12));
    expect(clock.monotonic()).toBe(clock.now());
    t.pass(2 * SECOND);
    const before = clock.monotonic();
    t.step(-HOUR);
    expect(clock.now()).toBe(Date.UTC(2026, 7, 1, 11, 0, 2));
    expect(clock.monotonic()).toBe(before);
    t.pass(SECOND);
    expect(clock.monotonic() - before).toBe(SECOND);
  });

  it('on this machine, never reads an interval backwards', () => {
    const clock = realClock();
    const a = clock.monotonic();
    expect(clock.monotonic()).toBeGreaterThanOrEqual(a);
    expect(Math.abs(clock.monotonic() - Date.now())).toBeLessThan(HOUR);
  });
});

describe('the manual clock', () => {
  it('measures intervals on the service clock itself', () => {
    const clock = manualClock(1_000_000);
    clock.advance(90 * SECOND);
    expect(clock.monotonic()).toBe(1_090_000);
    expect(clock.now()).toBe(1_090_000);
  });
});
