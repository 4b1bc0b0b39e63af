import type { Clock } from '../../lib/clock.js';

export interface BucketState {
  allowed: boolean;
  /** The bucket's size (2 × rate): the most requests at once, and what `remaining` counts down from. */
  limit: number;
  /** Tokens a second it refills at. */
  rate: number;
  remaining: number;
  /** Seconds until the bucket is full again. */
  reset: number;
  /** Seconds until the next token, when refused. */
  retryAfter: number;
}

/**
 * The per-workspace sending bucket: holds 2 × rate tokens and refills at `rate` per second of the service clock's
 * monotonic reading (so under a manual clock it refills only as the clock moves, and a wall clock stepped back
 * does not empty it).
 */
export function createSendRate(rate: number, clock: Clock) {
  const capacity = 2 * rate;
  const buckets = new Map<string, { tokens: number; at: number }>();
  return {
    take(workspaceId: string): BucketState {
      const now = clock.monotonic();
      const b = buckets.get(workspaceId) ?? { tokens: capacity, at: now };
      b.tokens = Math.min(capacity, b.tokens + ((now - b.at) / 1000) * rate);
      b.at = now;
      const allowed = b.tokens >= 1;
      if (allowed) b.tokens -= 1;
      buckets.set(workspaceId, b);
      return {
        allowed,
        limit: capacity,
        rate,
        remaining: Math.floor(b.tokens),
        reset: Math.ceil((capacity - b.tokens) / rate),
        retryAfter: allowed ? 0 : Math.max(1, Math.ceil((1 - b.tokens) / rate)),
      };
    },
  };
}
export type SendRate = ReturnType<typeof createSendRate>;
