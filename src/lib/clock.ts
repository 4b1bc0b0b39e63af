/**
 * The service clock. Every rule of the service reads it (core never calls Date.now()), so `--clock manual` moves all
 * of them; only transport concerns use the wall clock: job leases, timeouts, a webhook signature's `t`.
 */
export interface Clock {
  readonly mode: 'real' | 'manual';
  /** Milliseconds since the epoch on the service clock. */
  now(): number;
}

export interface ManualClock extends Clock {
  readonly mode: 'manual';
  set(ms: number): void;
  advance(ms: number): void;
}

export function realClock(): Clock {
  return { mode: 'real', now: () => Date.now() };
}

/**
 * A clock that moves only when told to. Starts at `start`, by default the real time: never earlier, so work a
 * previous run left due (a restart on the same data) is still due.
 */
export function manualClock(start = Date.now()): ManualClock {
  let t = start;
  return {
    mode: 'manual',
    now: () => t,
    set(ms) {
      t = ms;
    },
    advance(ms) {
      t += ms;
    },
  };
}

/** UTC ISO 8601 with `Z` and millisecond precision. */
export function iso(ms: number): string {
  return new Date(ms).toISOString();
}

export const SECOND = 1000;
export const MINUTE = 60 * SECOND;
export const HOUR = 60 * MINUTE;
export const DAY = 24 * HOUR;
