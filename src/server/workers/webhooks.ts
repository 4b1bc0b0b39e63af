// Webhook attempts (`webhook` jobs, one queue per endpoint): POST the event, signed, and record what happened. The
// rules — which attempt is next and when, disabling an endpoint — live in core/webhooks.ts.
import { Agent, request, type Dispatcher } from 'undici';
import { ATTEMPT_HEADER, EVENT_ID_HEADER, SIGNATURE_HEADER, signWebhook } from '../../contract/signature.js';
import type { AttemptOutcome, Delivery, Webhooks } from '../core/webhooks.js';
import type { JobHandler } from './scheduler.js';

/** §6 / decisions.md "delivery": an attempt that has not answered in 10 s has failed. */
export const ATTEMPT_TIMEOUT_MS = 10_000;

/** One connection pool for every endpoint: kept-alive connections per receiver, and a receiver that hangs ties up only its own. */
export function createWebhookAgent(timeoutMs = ATTEMPT_TIMEOUT_MS): Dispatcher {
  return new Agent({ connections: 64, keepAliveTimeout: 4_000, connect: { timeout: timeoutMs } });
}

/** What went wrong, in a few words a person reading the attempt log understands. */
function describe(err: unknown, timeoutMs: number): string {
  const e = err as Error & { code?: string; cause?: { code?: string; message?: string } };
  if (e.name === 'TimeoutError' || e.name === 'AbortError') return `no response within ${timeoutMs / 1000} s`;
  const code = e.code ?? e.cause?.code;
  if (code === 'ECONNREFUSED') return 'connection refused';
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return 'host not found';
  if (code === 'ECONNRESET' || code === 'UND_ERR_SOCKET') return 'connection closed by the receiver';
  return code ? `${code}: ${e.message}` : e.message;
}

export function webhookWorker(deps: { webhooks: Webhooks; agent: Dispatcher; userAgent: string; timeoutMs?: number }): JobHandler {
  const timeoutMs = deps.timeoutMs ?? ATTEMPT_TIMEOUT_MS;
  return async (delivery: Delivery, job) => {
    const plan = deps.webhooks.begin(job.id, delivery);
    if (!plan) return;
    // `t` is wall-clock time even under a manual service clock: it is about the freshness of this request.
    const signature = signWebhook({ secret: plan.secrets, body: plan.body, timestamp: Math.floor(Date.now() / 1000) });
    const started = performance.now();
    const outcome: AttemptOutcome = { statusCode: null, error: null, durationMs: 0 };
    try {
      const res = await request(plan.url, {
        method: 'POST',
        dispatcher: deps.agent,
        signal: AbortSignal.timeout(timeoutMs),
        headers: {
          'content-type': 'application/json',
          'user-agent': deps.userAgent,
          [SIGNATURE_HEADER]: signature,
          [EVENT_ID_HEADER]: delivery.event_id,
          [ATTEMPT_HEADER]: String(delivery.attempt),
        },
        body: plan.body,
      });
      outcome.statusCode = res.statusCode;
      // The receiver's answer is not read beyond its status; the connection goes back to the pool.
      await res.body.dump();
      if (res.statusCode >= 300 && res.statusCode < 400) outcome.error = `redirect (${res.statusCode}) not followed`;
      else if (res.statusCode < 200 || res.statusCode >= 300) outcome.error = `HTTP ${res.statusCode}`;
    } catch (err) {
      outcome.error = describe(err, timeoutMs);
    }
    outcome.durationMs = Math.round(performance.now() - started);
    // The attempt is recorded in the transaction that finishes the job (one commit an attempt).
    return { finish: () => deps.webhooks.record(plan, outcome) };
  };
}
