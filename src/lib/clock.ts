/**
 * The service clock. Every rule of the service reads it (core never calls Date.now()), so `--clock manual` moves all
 * of them; only transport concerns use the wall clock (a webhook signature's `t`) or the process's own time (job
 * leases, timeouts).
 */
export interface Clock {
  readonly mode: 'real' | 'manual';
  /** Milliseconds since the epoch on the service clock. */
  now(): number;
  /**
   * Milliseconds on a reading that never goes back, for intervals (rate limits and their windows, a job's delay):
   * under the real clock it starts at the wall clock's time and then moves by a monotonic source, so a wall clock
   * stepped (an NTP correction, a restored VM) leaves every interval as long as it was; under a manual clock it is the
   * service clock, which only moves forward.
   */
  monotonic(): number;
}

export interface ManualClock extends Clock {
  readonly mode: 'manual';
  set(ms: number): void;
  advance(ms: number): void;
}

/** Where the real clock reads time: the wall clock and a monotonic source, each in milliseconds. */
export interface TimeSources {
  wall(): number;
  /** Milliseconds from any origin that never go back (performance.now()). */
  elapsed(): number;
}

const systemTime: TimeSources = { wall: () => Date.now(), elapsed: () => performance.now() };

/** The service clock on this machine's time; `sources` replace it in tests (a wall clock to step back). */
export function realClock(sources: TimeSources = systemTime): Clock {
  const origin = sources.wall() - sources.elapsed();
  return { mode: 'real', now: () => sources.wall(), monotonic: () => origin + sources.elapsed() };
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
    monotonic: () => t,
    set(ms) {
      t = ms;
    },
    advance(ms) {
      t += ms;
    },
  };
}

/**
 * A time on the service clock (`now() + delay`) as the same delay from now on the monotonic reading, where a later step
 * of the wall clock does not move it. The same time under a manual clock.
 */
export function onMonotonic(clock: Clock, at: number): number {
  return clock.monotonic() + (at - clock.now());
}

/** UTC ISO 8601 with `Z` and millisecond precision. */
export function iso(ms: number): string {
  return new Date(ms).toISOString();
}

export const SECOND = 1000;
export const MINUTE = 60 * SECOND;
export const HOUR = 60 * MINUTE;
export const DAY = 24 * HOUR;
