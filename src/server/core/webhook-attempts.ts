import type { WebhookAttempt } from '../../contract/webhook-endpoints.js';
import { SECOND, iso } from '../../lib/clock.js';
import type { PostEventResult } from '../../lib/post-event.js';
import type { AccountStore } from '../store/accounts.js';
import type { EventStore } from '../store/events.js';
import type { AttemptRow, EndpointRow, WebhookStore } from '../store/webhooks.js';
import type { Deps, Jobs } from './deps.js';
import { systemMessageIdHeader } from './rules/message-ids.js';
import { WEBHOOK_ATTEMPT_OFFSETS } from './rules/retry-policy.js';
import type { Delivery, EndpointCache, EventBodies } from './webhook-deliveries.js';

/** Everything one attempt needs, read when it starts. */
export interface AttemptPlan {
  /** The delivery's job id: the same for all its attempts. */
  deliveryId: number;
  delivery: Delivery;
  url: string;
  eventType: string;
  /** The delivery body: exactly the event as `GET /v1/events` lists it. */
  body: string;
  /** The secrets that sign it: the current one, then the one before a rotation while it still signs. */
  secrets: string[];
  /** When the attempt started, service clock. */
  at: number;
  /** The same, on the service clock's monotonic reading: what the schedule counts with. */
  started: number;
}

/** What one attempt came to (lib/post-event.ts makes it). */
export type AttemptOutcome = PostEventResult;

/** How long a success is remembered before it is written again (an endpoint taking thousands of events a second). */
const SUCCESS_WRITE_INTERVAL = SECOND;

export function toAttempt(a: AttemptRow): WebhookAttempt {
  return {
    delivery_id: a.delivery_id,
    endpoint_id: a.endpoint_id,
    event_id: a.event_id,
    event_type: a.event_type,
    attempt: a.attempt,
    at: iso(a.at),
    status_code: a.status_code,
    error: a.error,
    duration_ms: a.duration_ms,
    ok: a.ok === 1,
  };
}

/** Tells the owner of an endpoint's workspace that it was disabled for its failures. */
function mailOwner(jobs: Jobs, accounts: AccountStore, e: EndpointRow, lastError: string | null): void {
  const owner = accounts.ownerOf(e.workspace_id);
  if (!owner) return;
  jobs.enqueue('system_mail', {
    message_id: systemMessageIdHeader(),
    to: owner.email,
    subject: `Webhook endpoint disabled: ${e.url}`,
    text:
      `Hello${owner.name ? ` ${owner.name}` : ''},\n\n` +
      `Seven attempts over 24 hours to deliver an event to your webhook endpoint ${e.url} (${e.id}) failed` +
      `${lastError ? `, the last with: ${lastError}` : ''}, and it had no successful delivery in that time. ` +
      `The endpoint is now disabled and receives no further events.\n\n` +
      `Events are still listed by GET /v1/events (or \`svc events list\`). Once the endpoint answers again, enable it ` +
      `with \`svc sandbox webhooks enable ${e.id}\` (POST /sandbox/webhooks/${e.id}/enable); events it missed are ` +
      `sent again only if you ask (POST /sandbox/events/{id}/redeliver).\n`,
  });
}

/**
 * A delivery's attempts, as the webhook worker makes them: what one needs, and what it came to — the seven-attempt
 * schedule, and disabling an endpoint that keeps failing.
 */
export function createWebhookAttempts(
  deps: Pick<Deps, 'clock' | 'jobs' | 'changes'> & {
    store: WebhookStore;
    events: EventStore;
    accounts: AccountStore;
    endpoints: EndpointCache;
    bodies: EventBodies;
    /** Stops the deliveries to an endpoint (webhook-deliveries.ts). */
    stop: (e: EndpointRow) => void;
  },
) {
  const { store, clock, endpoints } = deps;
  // The last success written for each endpoint (see SUCCESS_WRITE_INTERVAL).
  const successWritten = new Map<string, number>();

  return {
    /** What an attempt needs; null when there is nothing to attempt (the endpoint is gone, disabled, or the event is). */
    begin(deliveryId: number, delivery: Delivery): AttemptPlan | null {
      const e = endpoints.get(delivery.endpoint_id);
      if (e?.status !== 'active') return null;
      let event = deps.bodies.get(delivery.event_id);
      if (!event) {
        const row = deps.events.byId(delivery.event_id);
        if (!row) return null;
        event = deps.bodies.remember(row);
      }
      const now = clock.now();
      const secrets = [e.secret];
      if (e.previous_secret && e.previous_secret_expires_at != null && e.previous_secret_expires_at > now)
        secrets.push(e.previous_secret);
      return {
        deliveryId,
        delivery,
        url: e.url,
        eventType: event.type,
        body: event.body,
        secrets,
        at: now,
        started: clock.monotonic(),
      };
    },

    /**
     * Records an attempt, inside the transaction that finishes its job. Answers when the next attempt is due (service
     * clock) with its payload, or nothing: delivered, out of attempts, or the endpoint stopped meanwhile. After the
     * seventh failure, an endpoint with no success since the event's first attempt is disabled and its workspace's
     * owner emailed.
     */
    record(plan: AttemptPlan, outcome: AttemptOutcome): { retryAt: number; payload: Delivery } | void {
      const { delivery } = plan;
      const ok = outcome.error === null;
      store.insertAttempt({
        delivery_id: plan.deliveryId,
        endpoint_id: delivery.endpoint_id,
        event_id: delivery.event_id,
        event_type: plan.eventType,
        attempt: delivery.attempt,
        at: plan.at,
        status_code: outcome.status,
        error: outcome.error,
        duration_ms: outcome.durationMs,
        ok: ok ? 1 : 0,
      });
      deps.changes.notify('webhooks');
      const e = endpoints.get(delivery.endpoint_id);
      if (e?.status !== 'active') return;
      // The schedule and the last success are on the monotonic reading: a step of the wall clock between two attempts
      // neither holds the next one back nor brings it forward.
      const first = delivery.first_attempt_at ?? plan.started;
      const now = clock.now();
      const elapsed = clock.monotonic();
      if (ok) {
        if (elapsed - (successWritten.get(e.id) ?? -Infinity) >= SUCCESS_WRITE_INTERVAL) {
          store.succeeded(e.id, elapsed);
          e.last_success_at = elapsed;
          successWritten.set(e.id, elapsed);
        }
        return;
      }
      const offset = WEBHOOK_ATTEMPT_OFFSETS[delivery.attempt];
      if (offset !== undefined) {
        return {
          retryAt: now + (first + offset - elapsed),
          payload: { ...delivery, attempt: delivery.attempt + 1, first_attempt_at: first },
        };
      }
      // The stored time, not the cached one: it may have been written by another process before a restart.
      const lastSuccess = store.endpoint(e.id)?.last_success_at ?? null;
      if (lastSuccess == null || lastSuccess < first) {
        store.setStatus(e.id, 'disabled_by_failures', now);
        deps.stop(e);
        mailOwner(deps.jobs, deps.accounts, e, outcome.error);
      }
    },

    /** Every delivery attempt of these events, oldest first (a message's timeline in the inbox). */
    attemptsOfEvents: (eventIds: string[]) => store.attemptsOfEvents(eventIds).map(toAttempt),
  };
}
