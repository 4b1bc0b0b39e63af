import { describe, expect, it } from 'vitest';
import { HOUR, manualClock, realClock, SECOND } from '../../lib/clock.js';
import { createSendRate } from './send-rate.js';

describe('the sending bucket', () => {
  it('holds twice the rate and refills at the rate per second of the service clock', () => {
    const clock = manualClock(1_000_000);
    const bucket = createSendRate(2, clock);
    for (let i = 0; i < 4; i++) expect(bucket.take('ws_a').allowed).toBe(true);
    expect(bucket.take('ws_a')).toMatchObject({ allowed: false, retryAfter: 1, remaining: 0 });
    expect(bucket.take('ws_b').allowed).toBe(true);
    clock.advance(SECOND / 2);
    expect(bucket.take('ws_a').allowed).toBe(true);
  });

  it('is not emptied by a wall clock stepped back: a send waits for its token, not for the clock to catch up', () => {
    let wall = Date.UTC(2026, 7, 1, 12);
    let elapsed = 0;
    const bucket = createSendRate(1, realClock({ wall: () => wall, elapsed: () => elapsed }));
    expect(bucket.take('ws_a').allowed).toBe(true);
    expect(bucket.take('ws_a').allowed).toBe(true);
    expect(bucket.take('ws_a')).toMatchObject({ allowed: false, retryAfter: 1 });
    wall -= HOUR;
    expect(bucket.take('ws_a')).toMatchObject({ allowed: false, retryAfter: 1 });
    elapsed += SECOND;
    wall += SECOND;
    expect(bucket.take('ws_a').allowed).toBe(true);
  });
});
