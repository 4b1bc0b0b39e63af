// The service's rate limits on attempts (the sending bucket is send-rate.ts's): signup, login, SMTP AUTH, verification
// resends and domain verifications, each a sliding window of counted attempts.
import { ServiceError } from './errors.js';
import type { RateStore } from '../store/accounts.js';
import { type Clock, MINUTE } from '../../lib/clock.js';

/** At most `limit` attempts counted in `bucket` within `windowMs`. */
export interface RateLimit {
  bucket: string;
  limit: number;
  windowMs: number;
}

/** The failed logins of one client address that are let through in any 15 minutes: sign-in's, and SMTP AUTH's. */
export const FAILED_LOGINS_PER_ADDRESS = { limit: 30, windowMs: 15 * MINUTE };

/**
 * Sliding windows on the service clock's monotonic reading (a wall clock stepped back does not hold them full):
 * login throttle, signup, resend and verify limits. The counted events are stored, so a window outlives a restart;
 * one stamped after the present comes from a run whose clock was ahead of this one's and is not counted.
 */
export function createRateLimits(rates: RateStore, clock: Clock) {
  return {
    /** Throws 429 `rate_limited`, with the seconds until a window has room again, when any window is full. Counts nothing. */
    check(...limits: RateLimit[]): void {
      const now = clock.monotonic();
      let retryAfter = 0;
      for (const l of limits) {
        const { n, oldest } = rates.count(l.bucket, now - l.windowMs, now);
        if (n >= l.limit && oldest != null) {
          retryAfter = Math.max(retryAfter, Math.max(1, Math.ceil((oldest + l.windowMs - now) / 1000)));
        }
      }
      if (retryAfter > 0) {
        throw new ServiceError('rate_limited', `Too many attempts; try again in ${retryAfter} seconds.`, {
          retryAfterSeconds: retryAfter,
        });
      }
    },
    hit(...buckets: string[]): void {
      const now = clock.monotonic();
      for (const b of buckets) rates.add(b, now);
    },
    clear(...buckets: string[]): void {
      for (const b of buckets) rates.clear(b);
    },
  };
}
export type RateLimits = ReturnType<typeof createRateLimits>;
