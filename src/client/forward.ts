// Forwarding an event to a local receiver the way the service delivers it (docs/api.md#delivery), with the service's own attempt
// (lib/post-event.ts); a failed attempt is tried again a few times.
import type { Dispatcher } from 'undici';
import { postEvent } from '../lib/post-event.js';
import { backoffDelay, FORWARD_BACKOFF } from './backoff.js';

export interface ForwardOptions {
  url: string;
  /** The event's JSON text, sent byte for byte. */
  body: string;
  eventId: string;
  /** Signs every attempt (`whsec_…`). */
  secret: string;
  userAgent: string;
  /** Attempts in all (default FORWARD_BACKOFF's 4). */
  attempts?: number;
  /** An attempt without a response within this long has failed (default 10 s, as the service's deliveries). */
  timeoutMs?: number;
  signal?: AbortSignal;
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
  /** Called after each attempt that failed, with the wait before the next one (undefined after the last). */
  onFailure?(attempt: ForwardAttempt, retryInMs: number | undefined): void;
  dispatcher?: Dispatcher;
}

export interface ForwardAttempt {
  /** From 1; sent as Service-Delivery-Attempt. */
  attempt: number;
  ok: boolean;
  /** The receiver's status; null when none came (connection error, timeout). */
  status: number | null;
  /** Why it failed, in a few words; null on success. */
  error: string | null;
  durationMs: number;
}

export const FORWARD_TIMEOUT_MS = 10_000;

/**
 * POSTs one event until the receiver answers 2xx or the attempts run out; resolves with the last attempt. Any other
 * status (a redirect too), a connection error or a timeout is a failure. Each attempt is signed afresh, so its `t`
 * is the time it was sent.
 */
export async function forwardEvent(o: ForwardOptions): Promise<ForwardAttempt> {
  const attempts = o.attempts ?? FORWARD_BACKOFF.attempts;
  const timeoutMs = o.timeoutMs ?? FORWARD_TIMEOUT_MS;
  for (let n = 1; ; n++) {
    const result = await attemptOnce(o, n, timeoutMs);
    if (result.ok || o.signal?.aborted) return result;
    const retryInMs = n < attempts ? backoffDelay(FORWARD_BACKOFF, n - 1) : undefined;
    o.onFailure?.(result, retryInMs);
    if (retryInMs === undefined) return result;
    try {
      await o.sleep(retryInMs, o.signal);
    } catch {
      return result;
    }
  }
}

async function attemptOnce(o: ForwardOptions, attempt: number, timeoutMs: number): Promise<ForwardAttempt> {
  const r = await postEvent({
    url: o.url,
    body: o.body,
    eventId: o.eventId,
    attempt,
    secret: o.secret,
    userAgent: o.userAgent,
    timeoutMs,
    dispatcher: o.dispatcher,
    signal: o.signal,
  });
  return { attempt, ok: r.error === null, status: r.status, error: r.error, durationMs: r.durationMs };
}
