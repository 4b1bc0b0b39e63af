// Webhook attempts (`webhook` jobs, one queue per endpoint): POST the event, signed (lib/post-event.ts), and record
// what happened. The rules — which attempt is next and when, disabling an endpoint — live in core/webhook-attempts.ts.
import type { Dispatcher } from 'undici';
import { loadUndici } from '../../lib/undici.js';
import { postEvent } from '../../lib/post-event.js';
import type { JobPayloads } from '../core/rules/job-kinds.js';
import type { Webhooks } from '../core/webhooks.js';
import type { JobHandler } from '../core/scheduler.js';

/** docs/api.md#delivery: an attempt that has not answered in 10 s has failed. */
export const ATTEMPT_TIMEOUT_MS = 10_000;

/** The connection pool of the webhook attempts, made by the first attempt (undici is loaded then), closed with the server. */
export interface WebhookAgent {
  dispatcher(): Promise<Dispatcher>;
  close(): Promise<void>;
}

/** One connection pool for every endpoint: kept-alive connections per receiver, and a receiver that hangs ties up only its own. */
export function createWebhookAgent(timeoutMs = ATTEMPT_TIMEOUT_MS): WebhookAgent {
  let agent: Promise<Dispatcher> | undefined;
  return {
    dispatcher: () =>
      (agent ??= loadUndici().then(
        ({ Agent }) => new Agent({ connections: 64, keepAliveTimeout: 4_000, connect: { timeout: timeoutMs } }),
      )),
    close: async () => {
      await (await agent)?.close();
    },
  };
}

export function webhookWorker(deps: {
  webhooks: Webhooks;
  agent: WebhookAgent;
  userAgent: string;
  timeoutMs?: number;
}): JobHandler<JobPayloads['webhook']> {
  const timeoutMs = deps.timeoutMs ?? ATTEMPT_TIMEOUT_MS;
  return async (delivery, job) => {
    const plan = deps.webhooks.begin(job.id, delivery);
    if (!plan) return;
    // `t` is wall-clock time even under a manual service clock: it is about the freshness of this request.
    const outcome = await postEvent({
      url: plan.url,
      body: plan.body,
      eventId: delivery.event_id,
      attempt: delivery.attempt,
      secret: plan.secrets,
      userAgent: deps.userAgent,
      timeoutMs,
      dispatcher: await deps.agent.dispatcher(),
    });
    // The attempt is recorded in the transaction that finishes the job (one commit an attempt).
    return { finish: () => deps.webhooks.record(plan, outcome) };
  };
}
