// One webhook attempt as docs/api.md#delivery describes it, for both senders: the service's delivery worker and
// `svc webhooks listen --forward-to`. POST the event's raw body, signed, with the event id and attempt headers; a 2xx
// within the timeout is a success, anything else (a redirect too, not followed) a failure described in a few words.
import type { Dispatcher } from 'undici';
import { loadUndici } from './undici.js';
import { ATTEMPT_HEADER, EVENT_ID_HEADER, SIGNATURE_HEADER, signWebhook } from '../contract/signature.js';

export interface PostEventOptions {
  url: string;
  /** The event's JSON text, sent byte for byte. */
  body: string;
  eventId: string;
  /** From 1; sent as Service-Delivery-Attempt. */
  attempt: number;
  /** Signs the request (several during a rotation, the new one first); `t` is the wall clock at sending. */
  secret: string | readonly string[];
  userAgent: string;
  /** An attempt without a response within this long has failed. */
  timeoutMs: number;
  dispatcher?: Dispatcher;
  signal?: AbortSignal;
}

export interface PostEventResult {
  /** The receiver's status; null when none came (connection error, timeout). */
  status: number | null;
  /** Why it failed; null on a 2xx. */
  error: string | null;
  durationMs: number;
}

export async function postEvent(o: PostEventOptions): Promise<PostEventResult> {
  const started = performance.now();
  const timeout = AbortSignal.timeout(o.timeoutMs);
  const done = (status: number | null, error: string | null): PostEventResult => ({
    status,
    error,
    durationMs: Math.round(performance.now() - started),
  });
  try {
    // undici (a hundred modules) is loaded by the first attempt, not with the server or the command line.
    const { request } = await loadUndici();
    const res = await request(o.url, {
      method: 'POST',
      dispatcher: o.dispatcher,
      signal: o.signal ? AbortSignal.any([o.signal, timeout]) : timeout,
      headers: {
        'content-type': 'application/json',
        'user-agent': o.userAgent,
        [SIGNATURE_HEADER]: signWebhook({ secret: o.secret, body: o.body }),
        [EVENT_ID_HEADER]: o.eventId,
        [ATTEMPT_HEADER]: String(o.attempt),
      },
      body: o.body,
    });
    // The receiver's answer is not read beyond its status; the connection goes back to the pool.
    await res.body.dump();
    const s = res.statusCode;
    if (s >= 200 && s < 300) return done(s, null);
    return done(s, s >= 300 && s < 400 ? `redirect (${s}) not followed` : `HTTP ${s}`);
  } catch (err) {
    return done(null, timeout.aborted ? `no response within ${o.timeoutMs / 1000} s` : describe(err));
  }
}

/** What went wrong, in a few words a person reading the attempt log understands. */
function describe(err: unknown): string {
  const e = err as Error & { code?: string; cause?: { code?: string } };
  const code = e.code ?? e.cause?.code;
  if (code === 'ECONNREFUSED') return 'connection refused';
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return 'host not found';
  if (code === 'ECONNRESET' || code === 'UND_ERR_SOCKET') return 'connection closed by the receiver';
  return code ? `${code}: ${e.message}` : e.message;
}
