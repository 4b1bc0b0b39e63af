// The chaos rules on `/v1` (core/chaos.ts decides which rule answers a request; this is what the answer does): first,
// before the route reads a byte of the body or looks at the credential, so a request it answers has done nothing (a
// send refused with 503 created no message).
import type { Context, Hono } from 'hono';
import { ServiceError } from '../core/errors.js';
import { chaosCode, type Chaos, type ChaosHit } from '../core/chaos.js';
import { problemResponse } from './problem.js';
import { type Env, incomingOf } from './request.js';

/**
 * Puts every `/v1` request to the chaos rules: one that matches answers, resets the connection or holds the request
 * back (until `stopped` aborts) before it goes on; the request's `chaos` variable says which rule and what it did.
 */
export function useChaos(app: Hono<Env>, chaos: Pick<Chaos, 'http'>, origin: () => string, stopped?: AbortSignal) {
  app.use('/v1/*', async (c, next) => {
    const hit = chaos.http(c.req.method, c.req.path);
    if (!hit) return next();
    const answer = chaosAnswer(c, hit, origin());
    c.set('chaos', { index: hit.index, did: answer.did });
    if (answer.response) return answer.response;
    await holdBack(answer.delayMs!, stopped, c.req.raw.signal);
    await next();
  });
}

/**
 * What a chaos rule does to a request: a Problem of its status (`Retry-After` on 429 and 503, 1 s unless the rule gives
 * another), a delay before the request is handled as usual, or the connection reset under it.
 */
function chaosAnswer(
  c: Context<Env>,
  hit: ChaosHit,
  origin: string,
): { did: string; response?: Response; delayMs?: number } {
  const a = hit.action;
  if ('delay_ms' in a) return { did: `delayed ${a.delay_ms} ms`, delayMs: a.delay_ms };
  const rule = `chaos rule ${hit.index}`;
  const requestId = c.get('requestId');
  if ('reset' in a) {
    const socket = incomingOf(c)?.socket;
    if (socket) {
      // A TCP reset, not a close: the client sees the connection fail under its request, as when a peer crashes.
      socket.resetAndDestroy();
      return { did: 'reset', response: new Response(null, { status: 500 }) };
    }
    const err = new ServiceError(
      'internal_error',
      `The ${rule} drops the connection, and this request came without one.`,
    );
    return { did: 'reset', response: problemResponse(err, requestId, origin) };
  }
  // An SMTP rule's action (chaos.http never answers with one): the request goes on.
  if (!('status' in a)) return { did: 'nothing', delayMs: 0 };
  const status = a.status;
  const headers: Record<string, string> = {};
  const retryAfter = a.retry_after ?? (status === 429 || status === 503 ? 1 : undefined);
  if (retryAfter !== undefined) headers['Retry-After'] = String(retryAfter);
  if (status === 401) headers['WWW-Authenticate'] = 'Bearer';
  const err = new ServiceError(
    chaosCode(status),
    `The sandbox's ${rule} answered this request with ${status} on purpose, before it was handled; ` +
      'clear the rules with `svc sandbox chaos clear` (DELETE /sandbox/chaos), or see them with `svc sandbox chaos list`.',
    { status },
  );
  return { did: `answered ${status}`, response: problemResponse(err, requestId, origin, headers) };
}

/** Waits `ms`, or less when the server stops or the client goes away (the request then goes on, and ends as usual). */
function holdBack(ms: number, ...signals: (AbortSignal | undefined)[]): Promise<void> {
  const signal = AbortSignal.any(signals.filter((s): s is AbortSignal => s !== undefined));
  // An abort ends the wait early; it is no failure of the request. The global timer, which a test's fake timers replace.
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const end = () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', end);
      resolve();
    };
    const timer = setTimeout(end, ms);
    signal.addEventListener('abort', end);
  });
}
