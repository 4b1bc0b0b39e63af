import type { EventType } from '../../contract/events.js';
import type { WebhookAttempt, WebhookEndpoint } from '../../contract/sandbox.js';
import { newWebhookSecret } from '../../contract/signature.js';
import { DAY, SECOND, iso } from '../../lib/clock.js';
import { newId } from '../../lib/ids.js';
import type { PostEventResult } from '../../lib/post-event.js';
import type { AccountStore } from '../store/accounts.js';
import type { EventRow, EventStore } from '../store/events.js';
import type { AttemptRow, EndpointRow, WebhookStore } from '../store/webhooks.js';
import type { Deps } from './deps.js';
import { fail, invalidField } from './errors.js';
import { toEvent } from './events.js';
import { systemMessageIdHeader } from './message-ids.js';
import { WEBHOOK_ATTEMPT_OFFSETS } from './retry-policy.js';

/** At most five endpoints per workspace (docs/api.md#webhooks). */
export const MAX_ENDPOINTS = 5;
/** How long the secret before a rotation keeps signing beside the new one (service clock). */
export const ROTATION_OVERLAP = DAY;
/** The attempts `GET /sandbox/webhooks` shows per endpoint. */
export const RECENT_ATTEMPTS = 10;

/** The job queue of an endpoint's deliveries: each endpoint has its own, so one that hangs holds up nothing else. */
export const queueOf = (endpointId: string) => `webhook:${endpointId}`;

/** A `webhook` job's payload: one delivery of an event to an endpoint, carried from attempt to attempt. */
export interface Delivery {
  event_id: string;
  endpoint_id: string;
  /** The attempt this run makes, from 1. */
  attempt: number;
  /**
   * When the first attempt was made, on the service clock's monotonic reading (a step of the wall clock does not move
   * it); null before it. The schedule counts from it.
   */
  first_attempt_at: number | null;
}

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
/** Event bodies kept for the attempts to come (each event goes to up to five endpoints, and retries). */
const BODY_CACHE = 20_000;

function toAttempt(a: AttemptRow): WebhookAttempt {
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

/**
 * Webhook endpoints and the delivery of events to them: which endpoints an event goes to (in the transaction that
 * wrote it), the seven-attempt schedule, disabling an endpoint that keeps failing, rotation and redelivery.
 */
export function createWebhooks(deps: Deps & { store: WebhookStore; events: EventStore; accounts: AccountStore }) {
  const { store, clock, commit, jobs } = deps;
  // Every endpoint by id, and the active ones of each workspace: fanout runs for every event, in its transaction,
  // and every attempt needs its endpoint. Rebuilt from the store after each change to an endpoint.
  let byId: Map<string, EndpointRow & { types: Set<string> | null }> | null = null;
  const active = new Map<string, (EndpointRow & { types: Set<string> | null })[]>();
  const endpoints = () => {
    if (!byId)
      byId = new Map(
        store.endpoints().map((e) => [e.id, { ...e, types: e.events == null ? null : new Set(e.events) }]),
      );
    return byId;
  };
  const activeOf = (workspaceId: string) => {
    let list = active.get(workspaceId);
    if (!list)
      active.set(
        workspaceId,
        (list = [...endpoints().values()].filter((e) => e.workspace_id === workspaceId && e.status === 'active')),
      );
    return list;
  };
  // Every change to an endpoint or its attempts is signalled (`webhooks`) for the inbox page, after the commit.
  const changed = () => {
    byId = null;
    active.clear();
    deps.changes.notify('webhooks');
  };
  // Bodies of recent events, serialized once for all their deliveries.
  const bodies = new Map<string, { body: string; type: string }>();
  const remember = (event: EventRow) => {
    const entry = { body: JSON.stringify(toEvent(event)), type: event.type };
    bodies.set(event.id, entry);
    if (bodies.size > BODY_CACHE) bodies.delete(bodies.keys().next().value!);
    return entry;
  };
  // The last success written for each endpoint (see SUCCESS_WRITE_INTERVAL).
  const successWritten = new Map<string, number>();

  function view(e: EndpointRow): WebhookEndpoint {
    const overlap = e.previous_secret_expires_at != null && e.previous_secret_expires_at > clock.now();
    return {
      id: e.id,
      workspace_id: e.workspace_id,
      url: e.url,
      events: e.events,
      secret: e.secret,
      status: e.status,
      created_at: iso(e.created_at),
      disabled_at: e.disabled_at == null ? null : iso(e.disabled_at),
      previous_secret_expires_at: overlap ? iso(e.previous_secret_expires_at!) : null,
      recent_attempts: store.recentAttempts(e.id, RECENT_ATTEMPTS).map(toAttempt),
    };
  }

  const endpointOr404 = (id: string) => store.endpoint(id) ?? fail('not_found', 'No webhook endpoint has this id.');

  /** A new delivery of an event to an endpoint, its first attempt due now. Call inside a transaction. */
  function deliver(eventId: string, endpointId: string): void {
    const delivery: Delivery = { event_id: eventId, endpoint_id: endpointId, attempt: 1, first_attempt_at: null };
    jobs.enqueue('webhook', delivery, undefined, queueOf(endpointId));
  }

  /** The endpoint stops receiving: nothing pending is attempted any more (its queue is dropped), nothing new goes to it. */
  function stop(e: EndpointRow): void {
    jobs.dropQueue(queueOf(e.id));
    changed();
  }

  function mailOwner(e: EndpointRow, lastError: string | null): void {
    const owner = deps.accounts.ownerOf(e.workspace_id);
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

  return {
    /** Called for every event, in the transaction that wrote it: one delivery per matching active endpoint. */
    fanout(event: EventRow): void {
      const targets = activeOf(event.workspace_id).filter((e) => e.types == null || e.types.has(event.type));
      if (targets.length === 0) return;
      remember(event);
      for (const e of targets) deliver(event.id, e.id);
    },

    /** POST /sandbox/webhooks. */
    create(input: { workspace_id: string; url: string; events?: EventType[] }): Promise<WebhookEndpoint> {
      let url: URL | null = null;
      try {
        url = new URL(input.url);
      } catch {
        // reported below
      }
      if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:')) {
        throw invalidField(
          'url',
          'must be an absolute http:// or https:// URL, such as http://127.0.0.1:3000/webhooks',
        );
      }
      return commit(() => {
        if (!deps.accounts.workspaceById(input.workspace_id)) fail('not_found', 'No workspace has this id.');
        if (store.countEndpoints(input.workspace_id) >= MAX_ENDPOINTS) {
          fail(
            'endpoint_limit_reached',
            `A workspace has at most ${MAX_ENDPOINTS} webhook endpoints; remove one first.`,
          );
        }
        const row: EndpointRow = {
          id: newId('whk'),
          workspace_id: input.workspace_id,
          url: input.url,
          events: input.events ? [...new Set(input.events)] : null,
          secret: newWebhookSecret(),
          previous_secret: null,
          previous_secret_expires_at: null,
          status: 'active',
          created_at: clock.now(),
          disabled_at: null,
          last_success_at: null,
        };
        store.insertEndpoint(row);
        changed();
        return view(row);
      });
    },

    /** GET /sandbox/webhooks: a workspace's endpoints (or every one), with their recent attempts. */
    list: (workspaceId?: string) => store.endpoints(workspaceId).map(view),
    /** GET /sandbox/webhooks: the endpoints (of one workspace, or all) and the names of their workspaces. */
    listing(workspaceId?: string) {
      const data = store.endpoints(workspaceId).map(view);
      const workspaces = [...new Set(data.map((e) => e.workspace_id))].map((id) => ({
        id,
        name: deps.accounts.workspaceById(id)?.name ?? id,
      }));
      return { data, workspaces };
    },

    /** DELETE /sandbox/webhooks/{id}: gone at once, with whatever was still to be delivered to it. */
    remove: (id: string) =>
      commit(() => {
        const e = endpointOr404(id);
        stop(e);
        store.deleteEndpoint(id);
      }),

    /** A new secret; the old one signs beside it for ROTATION_OVERLAP of service clock. */
    rotateSecret: (id: string) =>
      commit(() => {
        endpointOr404(id);
        store.rotateSecret(id, newWebhookSecret(), clock.now() + ROTATION_OVERLAP);
        changed();
        return view(store.endpoint(id)!);
      }),

    /** Active again (a disabled endpoint); what it missed is not sent again unless redelivered. */
    enable: (id: string) =>
      commit(() => {
        endpointOr404(id);
        if (store.setStatus(id, 'active', clock.now())) changed();
        return view(store.endpoint(id)!);
      }),

    /** POST /sandbox/events/{id}/redeliver: a new delivery to each matching active endpoint, or to the one named. */
    redeliver: (eventId: string, endpointId?: string) =>
      commit(() => {
        const event = deps.events.byId(eventId) ?? fail('not_found', 'No event has this id.');
        let targets: EndpointRow[];
        if (endpointId) {
          const e = store.endpoint(endpointId);
          if (!e || e.workspace_id !== event.workspace_id)
            fail('not_found', "No webhook endpoint of this event's workspace has this id.");
          if (e!.status !== 'active')
            fail('conflict', 'This endpoint is disabled; enable it first (POST /sandbox/webhooks/{id}/enable).');
          targets = [e!];
        } else {
          targets = activeOf(event.workspace_id).filter((e) => e.types == null || e.types.has(event.type));
        }
        for (const e of targets) deliver(event.id, e.id);
        return { event_id: event.id, endpoint_ids: targets.map((e) => e.id) };
      }),

    /** What an attempt needs; null when there is nothing to attempt (the endpoint is gone, disabled, or the event is). */
    begin(deliveryId: number, delivery: Delivery): AttemptPlan | null {
      const e = endpoints().get(delivery.endpoint_id);
      if (e?.status !== 'active') return null;
      let event = bodies.get(delivery.event_id);
      if (!event) {
        const row = deps.events.byId(delivery.event_id);
        if (!row) return null;
        event = remember(row);
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
      const e = endpoints().get(delivery.endpoint_id);
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
        stop(e);
        mailOwner(e, outcome.error);
      }
    },

    /** Every delivery attempt of these events, oldest first (a message's timeline in the inbox). */
    attemptsOfEvents: (eventIds: string[]) => store.attemptsOfEvents(eventIds).map(toAttempt),
  };
}
export type Webhooks = ReturnType<typeof createWebhooks>;
