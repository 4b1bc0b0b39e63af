// When the server tries again, and when it gives up: the one place for every retry schedule of the service and for
// what a receiving server's answer means for a message. The scheduler (core/scheduler.ts), the delivery worker
// (workers/delivery.ts), the simulated outcomes (core/delivery.ts), webhook deliveries (core/webhook-attempts.ts) and
// the Problems of a full disk (core/errors.ts) read them here.
import { DAY, HOUR, MINUTE, SECOND } from '../../../lib/clock.js';

/**
 * Attempts of a job whose handler keeps throwing (a delivery that meets a 4xx or no connection, a domain check whose
 * lookup fails): enough to ride out a receiving server's restart or a short outage, about 17 minutes in all, without
 * keeping a message `queued` for hours when its receiver is gone for good.
 */
export const JOB_MAX_ATTEMPTS = 10;

/**
 * How long after its `attempts`-th attempt threw a job runs again: 2 s, 4 s, 8 s, … doubling (at most an hour), so a
 * failure that passes at once costs little and one that lasts is not hammered; null after the last attempt
 * (JOB_MAX_ATTEMPTS): the job is then dropped, its `exhausted` hook run.
 */
export function jobRetryDelay(attempts: number): number | null {
  return attempts >= JOB_MAX_ATTEMPTS ? null : Math.min(2 ** attempts * SECOND, HOUR);
}

/**
 * How long work that found no room on the disk waits before it tries again, and what a client refused for it is told
 * (`Retry-After`): long enough for an operator (or retention) to free space, short enough that writes resume soon
 * after. A full disk is nobody's fault: a job waits without using up an attempt, and a message is never failed for it.
 */
export const DISK_FULL_WAIT_MS = 30 * SECOND;

/** The reply code the sink answers when its disk is full (RFC 3463's 4.3.1, "mail system full"). */
export const DISK_FULL_SMTP_CODE = 452;

/**
 * How long a simulated deferral (the `softbounce` and `defer` simulator mailboxes) waits before its recipient's next
 * attempt: the order of a real provider's first retry, and what `email.deferred`'s `next_attempt_at` shows.
 */
export const SIMULATED_DEFERRAL_MS = 5 * MINUTE;

/**
 * When each attempt of a webhook delivery is due, measured from the first (docs/api.md#retries-and-disabling): seven
 * attempts over 24 hours, the first retries close together for a receiver that blinked, the last a day on for one
 * that is down for a deploy or a night; an endpoint that fails them all (with no success meanwhile) is disabled.
 */
export const WEBHOOK_ATTEMPT_OFFSETS: readonly number[] = [
  0,
  30 * SECOND,
  2 * MINUTE,
  10 * MINUTE,
  HOUR,
  6 * HOUR,
  DAY,
];

/** What a hand-over that failed means for the message (handOverFailure). */
export type HandOverFailure =
  /** The receiving server's final answer: the message ends `failed`. */
  | 'final'
  /** The sink's disk is full: the message waits for space (DISK_FULL_WAIT_MS) without using up an attempt. */
  | 'disk-full'
  /** A temporary refusal or no connection: the message is deferred to the job's next attempt (jobRetryDelay). */
  | 'deferred';

/**
 * The delivery failure policy: a 5xx is the receiving server's final answer (RFC 5321 section 4.2.1); the sink's 452
 * says its disk is full; anything else (another 4xx, no connection at all) may pass, and is tried again.
 */
export function handOverFailure(responseCode: number | undefined, fromSink: boolean): HandOverFailure {
  if (responseCode !== undefined && responseCode >= 500) return 'final';
  if (responseCode === DISK_FULL_SMTP_CODE && fromSink) return 'disk-full';
  return 'deferred';
}
