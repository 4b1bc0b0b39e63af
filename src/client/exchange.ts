// One HTTP exchange of the client, with its retries: after a 429 or a 503 (refusals before any work), and after
// another 5xx or a connection error where a retry cannot act twice (a GET, PUT or DELETE, or a send under its
// Idempotency-Key); on API_CALL_BACKOFF's schedule or the answer's Retry-After, each retry told to `onRetry`.
import { IDEMPOTENCY_HEADER } from '../contract/emails.js';
import { API_CALL_BACKOFF, backoffDelay, retryAfterMs, sleep as realSleep } from './backoff.js';
import { ConnectionError, errorCode, ResponseHeaders } from './errors.js';
import { otherScheme } from './other-scheme.js';
import type { CallOptions, ClientOptions } from './options.js';
import { readAll, send } from './transport.js';

/** Failures where the request certainly never reached the service: retrying them cannot do anything twice. */
const NOT_SENT = new Set(['ECONNREFUSED', 'EAI_AGAIN', 'ENETUNREACH', 'EHOSTUNREACH', 'UND_ERR_CONNECT_TIMEOUT']);
/** A name that does not resolve now will not resolve a second later, nor will fetch take a port it refused. */
const HOPELESS = new Set(['ENOTFOUND', 'ERR_BAD_PORT']);

export const DEFAULT_TIMEOUT_MS = 30_000;
export const utf8 = new TextDecoder();

/** A response read whole: its status, headers, text and bytes. */
export interface Exchange {
  status: number;
  headers: ResponseHeaders;
  text: string;
  bytes: Uint8Array;
}

export type ExchangeFn = (
  method: string,
  url: URL,
  headers: Record<string, string>,
  body: string | undefined,
  o: CallOptions,
) => Promise<Exchange>;

/** The client's exchange: `base` is named by the ConnectionError of a service that cannot be reached. */
export function createExchange(opts: ClientOptions, base: string): ExchangeFn {
  const retries = opts.retries ?? API_CALL_BACKOFF.retries;
  const maxRetryAfterMs = opts.maxRetryAfterMs ?? 60_000;
  const wait = opts.sleep ?? realSleep;
  const now = opts.now ?? Date.now;

  /** One HTTP exchange, retried after 429/5xx/connection errors where a retry cannot act twice. */
  return async function exchange(
    method: string,
    url: URL,
    headers: Record<string, string>,
    body: string | undefined,
    o: CallOptions,
  ): Promise<Exchange> {
    const idempotent =
      method === 'GET' || method === 'PUT' || method === 'DELETE' || IDEMPOTENCY_HEADER.toLowerCase() in lower(headers);
    const timeout = o.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    const tries = o.retries ?? retries;
    for (let attempt = 0; ; attempt++) {
      let res: Exchange;
      try {
        const r = await send(
          url,
          { method, headers, body },
          { headersMs: timeout, idleMs: timeout, signal: o.signal, dispatcher: opts.dispatcher },
        );
        const bytes = await readAll(r);
        res = {
          status: r.status,
          headers: new ResponseHeaders(r.headers),
          text: utf8.decode(bytes),
          bytes,
        };
      } catch (err) {
        if (o.signal?.aborted) throw o.signal.reason ?? err;
        const code = errorCode(err) ?? '';
        // A reset or a timeout may come after the service acted: only a request safe to repeat is tried again.
        if (attempt < tries && !HOPELESS.has(code) && (NOT_SENT.has(code) || idempotent)) {
          const delayMs = backoffDelay(API_CALL_BACKOFF, attempt);
          opts.onRetry?.({
            method,
            url: url.href,
            code: code || undefined,
            retry: attempt + 1,
            retries: tries,
            delayMs,
          });
          await wait(delayMs, o.signal);
          continue;
        }
        throw new ConnectionError(base, err, await otherScheme(url, code));
      }
      // 429 and 503 are refusals before any work; another 5xx may come after it, so only a safe request repeats it.
      const retryable = res.status === 429 || res.status === 503 || (res.status >= 500 && idempotent);
      if (attempt < tries && retryable) {
        const delay = retryAfterMs(res.headers.get('retry-after'), now()) ?? backoffDelay(API_CALL_BACKOFF, attempt);
        if (delay <= maxRetryAfterMs) {
          if (opts.onRetry) {
            const code = (parseJson(res.text) as { code?: unknown } | undefined)?.code;
            opts.onRetry({
              method,
              url: url.href,
              status: res.status,
              code: typeof code === 'string' ? code : undefined,
              retry: attempt + 1,
              retries: tries,
              delayMs: delay,
            });
          }
          await wait(delay, o.signal);
          continue;
        }
      }
      return res;
    }
  };
}

export function lower(headers: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v]));
}

export function parseJson(text: string): unknown {
  if (!text) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
