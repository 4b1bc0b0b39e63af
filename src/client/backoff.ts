// The client side's retry schedules, one place for each (the server's are in server/core/rules/retry-policy.ts): an API
// call, an event forwarded to a local receiver, and `svc webhooks listen` reconnecting. Each wait doubles from
// `baseMs` up to `maxMs`, half of it random so that clients failing together do not retry together.

/** A doubling wait between tries: from `baseMs` up to `maxMs`. */
export interface Backoff {
  baseMs: number;
  maxMs: number;
}

/**
 * An API call after a 429, a 5xx or a connection error, where a retry cannot act twice (ClientOptions.retries, 3 by
 * default): 0.5, 1 and 2 s (at most 8 s), so a command rides out a server's restart or a moment's overload and still
 * answers within seconds when the service is really down. A `Retry-After` the service gives takes the place of the wait.
 */
export const API_CALL_BACKOFF: Backoff & { retries: number } = { baseMs: 500, maxMs: 8_000, retries: 3 };

/**
 * An event forwarded to a local receiver (`svc webhooks listen --forward-to`): 4 attempts, 0.5, 1 and 2 s apart, so a
 * receiver that is restarting (a dev server reloading) gets the event a moment later, and one that is down does not
 * hold up the events behind it for long; the service's own deliveries keep their 24-hour schedule.
 */
export const FORWARD_BACKOFF: Backoff & { attempts: number } = { baseMs: 500, maxMs: 8_000, attempts: 4 };

/**
 * `svc webhooks listen` reconnecting after the service failed it: for as long as it runs, 0.5 s doubling to 5 s, so
 * events are flowing again within seconds of a local server's restart.
 */
export const RECONNECT_BACKOFF: Backoff = { baseMs: 500, maxMs: 5_000 };

/** The wait before retry `attempt` (0 for the first retry) of a schedule. */
export function backoffDelay(schedule: Backoff, attempt: number, random = Math.random): number {
  const ceiling = Math.min(schedule.maxMs, schedule.baseMs * 2 ** attempt);
  return Math.round(ceiling / 2 + (random() * ceiling) / 2);
}

/** `Retry-After` as milliseconds: delay-seconds or an HTTP-date (RFC 9110 section 10.2.3); undefined when absent or malformed. */
export function retryAfterMs(value: string | null | undefined, now = Date.now()): number | undefined {
  if (!value) return undefined;
  if (/^\d+$/.test(value.trim())) return Number(value.trim()) * 1000;
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

/** Resolves after `ms`, or rejects with the signal's reason when it aborts first. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
