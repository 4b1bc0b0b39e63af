import type { EventRow, EventStore } from '../store/events.js';
import type { EndpointRow, WebhookStore } from '../store/webhooks.js';
import type { Deps } from './deps.js';
import { fail } from './errors.js';
import { toEvent } from './events.js';

/** The job queue of an endpoint's deliveries: each endpoint has its own, so one that hangs holds up nothing else. */
export const queueOf = (endpointId: string) => `webhook:${endpointId}`;

/**
 * The attempts in flight at once to one endpoint: up to 64, so that a busy endpoint keeps up (bench/README.md,
 * bench:webhooks); other queues take the scheduler's default.
 */
export const queueConcurrency = (queue: string) => (queue.startsWith('webhook:') ? 64 : undefined);

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

/** Event bodies kept for the attempts to come (each event goes to up to five endpoints, and retries). */
const BODY_CACHE = 20_000;

type CachedEndpoint = EndpointRow & { types: Set<string> | null };
export type EndpointCache = ReturnType<typeof createEndpointCache>;

/**
 * Every endpoint by id, and the active ones of each workspace: fanout runs for every event, in its transaction, and
 * every attempt needs its endpoint. Rebuilt from the store after each change to an endpoint (`changed`).
 */
export function createEndpointCache(deps: Pick<Deps, 'changes'> & { store: WebhookStore }) {
  let byId: Map<string, CachedEndpoint> | null = null;
  const active = new Map<string, CachedEndpoint[]>();
  const endpoints = () => {
    if (!byId)
      byId = new Map(
        deps.store.endpoints().map((e) => [e.id, { ...e, types: e.events == null ? null : new Set(e.events) }]),
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
  return {
    get: (id: string) => endpoints().get(id),
    /** The active endpoints of the event's workspace that take its type. */
    targetsOf: (event: EventRow) =>
      activeOf(event.workspace_id).filter((e) => e.types == null || e.types.has(event.type)),
    /** Every change to an endpoint or its attempts is signalled (`webhooks`) for the inbox page, after the commit. */
    changed() {
      byId = null;
      active.clear();
      deps.changes.notify('webhooks');
    },
  };
}

export type EventBodies = ReturnType<typeof createEventBodies>;

/** Bodies of recent events, serialized once for all their deliveries. */
export function createEventBodies() {
  const bodies = new Map<string, { body: string; type: string }>();
  return {
    get: (eventId: string) => bodies.get(eventId),
    remember(event: EventRow) {
      const entry = { body: JSON.stringify(toEvent(event)), type: event.type };
      bodies.set(event.id, entry);
      if (bodies.size > BODY_CACHE) bodies.delete(bodies.keys().next().value!);
      return entry;
    },
  };
}

/** Deliveries of events to endpoints: made when an event is written or redelivered, dropped when an endpoint stops. */
export function createWebhookDeliveries(
  deps: Pick<Deps, 'jobs' | 'commit'> & {
    store: WebhookStore;
    events: EventStore;
    endpoints: EndpointCache;
    bodies: EventBodies;
  },
) {
  const { store, jobs, endpoints } = deps;

  /** A new delivery of an event to an endpoint, its first attempt due now. Call inside a transaction. */
  function deliver(eventId: string, endpointId: string): void {
    const delivery: Delivery = { event_id: eventId, endpoint_id: endpointId, attempt: 1, first_attempt_at: null };
    jobs.enqueue('webhook', delivery, { queue: queueOf(endpointId) });
  }

  return {
    /**
     * The endpoint stops receiving: nothing pending is attempted any more (its queue is dropped), nothing new goes to
     * it.
     */
    stop(e: EndpointRow): void {
      jobs.dropQueue(queueOf(e.id));
      endpoints.changed();
    },

    /** Called for every event, in the transaction that wrote it: one delivery per matching active endpoint. */
    fanout(event: EventRow): void {
      const targets = endpoints.targetsOf(event);
      if (targets.length === 0) return;
      deps.bodies.remember(event);
      for (const e of targets) deliver(event.id, e.id);
    },

    /** POST /sandbox/events/{id}/redeliver: a new delivery to each matching active endpoint, or to the one named. */
    redeliver: (eventId: string, endpointId?: string) =>
      deps.commit(() => {
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
          targets = endpoints.targetsOf(event);
        }
        for (const e of targets) deliver(event.id, e.id);
        return { event_id: event.id, endpoint_ids: targets.map((e) => e.id) };
      }),
  };
}
