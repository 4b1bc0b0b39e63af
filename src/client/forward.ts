// Forwarding an event to a local receiver the way the service delivers it (§6): POST, the raw body, signed with a
// secret, the event id and attempt headers; a failed attempt is tried again a few times.
import { request, type Dispatcher } from 'undici';
import { ATTEMPT_HEADER, EVENT_ID_HEADER, SIGNATURE_HEADER, signWebhook } from '../contract/signature.js';
import { backoffDelay } from './backoff.js';

export interface ForwardOptions {
  url: string;
  /** The event's JSON text, sent byte for byte. */
  body: string;
  eventId: string;
  /** Signs every attempt (`whsec_…`). */
  secret: string;
  userAgent: string;
  /** Attempts in all (default 4). */
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

export const FORWARD_ATTEMPTS = 4;
export const FORWARD_TIMEOUT_MS = 10_000;

/**
 * POSTs one event until the receiver answers 2xx or the attempts run out; resolves with the last attempt. Any other
 * status (a redirect too), a connection error or a timeout is a failure. Each attempt is signed afresh, so its `t`
 * is the time it was sent.
 */
export async function forwardEvent(o: ForwardOptions): Promise<ForwardAttempt> {
  const attempts = o.attempts ?? FORWARD_ATTEMPTS;
  const timeoutMs = o.timeoutMs ?? FORWARD_TIMEOUT_MS;
  for (let n = 1; ; n++) {
    const result = await attemptOnce(o, n, timeoutMs);
    if (result.ok || o.signal?.aborted) return result;
    const retryInMs = n < attempts ? backoffDelay(n - 1) : undefined;
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
  const started = performance.now();
  const timeout = AbortSignal.timeout(timeoutMs);
  const done = (status: number | null, error: string | null): ForwardAttempt => ({
    attempt, ok: error === null, status, error, durationMs: Math.round(performance.now() - started),
  });
  try {
    const res = await request(o.url, {
      method: 'POST',
      dispatcher: o.dispatcher,
      signal: o.signal ? AbortSignal.any([o.signal, timeout]) : timeout,
      headers: {
        'content-type': 'application/json',
        'user-agent': o.userAgent,
        [SIGNATURE_HEADER]: signWebhook({ secret: o.secret, body: o.body }),
        [EVENT_ID_HEADER]: o.eventId,
        [ATTEMPT_HEADER]: String(attempt),
      },
      body: o.body,
    });
    // Only the status matters; the connection goes back to the pool.
    await res.body.dump();
    const s = res.statusCode;
    if (s >= 200 && s < 300) return done(s, null);
    return done(s, s >= 300 && s < 400 ? `redirect (${s}) not followed` : `HTTP ${s}`);
  } catch (err) {
    return done(null, timeout.aborted ? `no response within ${timeoutMs / 1000} s` : describe(err));
  }
}

function describe(err: unknown): string {
  const e = err as Error & { code?: string; cause?: { code?: string } };
  const code = e.code ?? e.cause?.code;
  if (code === 'ECONNREFUSED') return 'connection refused';
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return 'host not found';
  if (code === 'ECONNRESET' || code === 'UND_ERR_SOCKET') return 'connection closed by the receiver';
  return code ? `${code}: ${e.message}` : e.message;
}
