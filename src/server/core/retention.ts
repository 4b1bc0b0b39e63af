import { DAY, HOUR, MINUTE } from '../../lib/clock.js';
import type { RetentionStore } from '../store/retention.js';
import type { Deps } from './deps.js';
import { IDEMPOTENCY_WINDOW } from './idempotency.js';
import { RECENT_ATTEMPTS } from './webhooks.js';

/** What `svc serve` keeps: caught messages by count and by age (null: no limit), the age applying to `/v1` history too. */
export interface RetentionPolicy {
  maxMessages: number | null;
  /** Milliseconds of service clock. */
  maxAge: number | null;
}

/** The recurring job that runs the passes, in a queue of its own: a backlog of deliveries never holds it back. */
export const RETENTION_JOB = 'retention';
export const RETENTION_QUEUE = 'retention';

/** Passes run this often on the service clock, and sooner when caught mail piles up (see `caught`). */
export const RETENTION_INTERVAL = MINUTE;
/**
 * A pass removes at most this many caught messages, and at most CAUGHT_BATCH_BYTES of their sources (one at least):
 * freeing a source reads each of its pages, so the bytes bound what one pass holds the database for.
 */
const CAUGHT_BATCH = 200;
const CAUGHT_BATCH_BYTES = 32 * 1024 * 1024;
/** Rows of each other kind a pass removes at most; fewer `/v1` messages, each of which goes with its events. */
const BATCH = 500;
const MESSAGE_BATCH = 200;
/**
 * Webhook attempts are shown under the events of caught `/v1` mail; every event of a caught message is at most
 * minutes older than its catch (a delivery retries for 17 minutes), so attempts made this long before the oldest
 * caught message kept can no longer be shown there.
 */
const ATTEMPTS_BEFORE_OLDEST_CAUGHT = HOUR;
/** Rate windows count at most the last hour (login throttle, signup, resend and verify limits); a day is ample. */
const RATE_EVENTS_KEPT = DAY;

/**
 * Retention: what ages out of the data directory, removed a batch at a time by a recurring job, so the database
 * stops growing. Caught mail beyond `maxMessages` or older than `maxAge` goes first, oldest first; with `maxAge`, the
 * `/v1` messages and events older than it too. Webhook attempts go once nothing shows them, idempotency records
 * once their 24 hours are over, rate windows after a day.
 */
export function createRetention(
  deps: Pick<Deps, 'commit' | 'clock' | 'jobs' | 'log'> & { store: RetentionStore },
  policy: RetentionPolicy,
) {
  const { store, clock, commit, jobs } = deps;
  // A pass is asked for early after this many catches, so the sink overshoots its limit by 5 % at most between passes.
  const slack = policy.maxMessages == null ? Infinity : Math.max(1, Math.ceil(policy.maxMessages / 20));
  let caughtSincePass = 0;
  let job: number | null = null;

  /** One pass, in the caller's transaction; `more` when some kind had more to remove than a batch. */
  function prune(now: number): { caught: string[]; more: boolean } {
    const cut = policy.maxAge == null ? null : now - policy.maxAge;
    const found = store.agedCaught(policy.maxMessages, cut, CAUGHT_BATCH);
    let bytes = 0;
    let n = 0;
    for (const { size } of found) {
      if (n > 0 && bytes + size > CAUGHT_BATCH_BYTES) break;
      bytes += size;
      n++;
    }
    const victims = found.slice(0, n);
    if (victims.length) store.deleteCaught(victims.map((v) => v.seq));
    let more = n < found.length || found.length === CAUGHT_BATCH;
    if (cut != null) {
      if (store.deleteAgedMessages(cut, MESSAGE_BATCH) === MESSAGE_BATCH) more = true;
      if (store.deleteAgedUnlinkedEvents(cut, BATCH) === BATCH) more = true;
    }
    const shown = Math.min(store.oldestCaughtAt() ?? now, now) - ATTEMPTS_BEFORE_OLDEST_CAUGHT;
    if (store.deleteAgedAttempts(shown, BATCH, RECENT_ATTEMPTS) === BATCH) more = true;
    if (store.deleteAgedIdempotency(now - IDEMPOTENCY_WINDOW, BATCH) === BATCH) more = true;
    // Rate windows count on the clock's monotonic reading (core/rate-limits.ts).
    if (store.deleteAgedRateEvents(clock.monotonic() - RATE_EVENTS_KEPT, BATCH) === BATCH) more = true;
    return { caught: victims.map((v) => v.id), more };
  }

  return {
    policy,

    /** At start: the recurring job is written if missing and made due now, so a lower limit applies at once. */
    schedule(): void {
      job = jobs.ensure(RETENTION_JOB, {}, RETENTION_QUEUE);
      jobs.hasten(job, RETENTION_QUEUE);
    },

    /** The sink caught a message: every `slack` catches the next pass is made due now. */
    caught(): void {
      if (++caughtSincePass < slack || job === null) return;
      caughtSincePass = 0;
      const id = job;
      commit(() => jobs.hasten(id, RETENTION_QUEUE)).catch((err: unknown) =>
        deps.log.warn('could not bring the retention pass forward; it runs at its time', { error: String(err) }),
      );
    },

    /**
     * One pass, committed: the ids of the caught messages removed, and when the next pass is due (now when a batch was
     * full, so a backlog goes in steps with the API served between them).
     */
    async pass(): Promise<{ caught: string[]; next: number }> {
      caughtSincePass = 0;
      const now = clock.now();
      const { caught, more } = await commit(() => prune(now));
      return { caught, next: more ? now : now + RETENTION_INTERVAL };
    },
  };
}
export type Retention = ReturnType<typeof createRetention>;
