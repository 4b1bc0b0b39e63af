import { SERVICE_VERSION } from '../../contract/common.js';
import type { Event, EventsQuery } from '../../contract/events.js';
import { iso, type Clock } from '../../lib/clock.js';
import type { Changes } from '../../lib/changes.js';
import { newId } from '../../lib/ids.js';
import type { EventRow, EventStore } from '../store/events.js';
import { unknownCursor } from './errors.js';

/** An event as listed and as delivered to webhooks (docs/api.md#events; the delivery body of docs/api.md#delivery). */
export function toEvent(row: EventRow): Event {
  return {
    id: row.id,
    type: row.type,
    created_at: iso(row.created_at),
    api_version: row.api_version,
    data: row.data,
  };
}

/**
 * The events outbox: raising events (inside the transaction of the change that caused them, which also enqueues their
 * webhook deliveries through `fanout`) and reading them as a stream, with a long poll.
 */
export function createEvents(deps: {
  store: EventStore;
  clock: Clock;
  changes: Changes;
  fanout: (row: EventRow) => void;
}) {
  const { store, changes } = deps;

  function page(workspaceId: string, afterSeq: number, q: EventsQuery) {
    const limit = q.limit ?? 20;
    const rows = store.list(workspaceId, { limit, afterSeq, types: q.type });
    return { data: rows.slice(0, limit).map(toEvent), has_more: rows.length > limit };
  }

  return {
    /**
     * A message's timeline, oldest first, as GET /v1/emails/{id} and the sandbox's message view show it: each event
     * with its detail (the data without the fields every event of the message repeats).
     */
    timeline(messageId: string): { id: string; type: string; occurred_at: string; detail: Record<string, unknown> }[] {
      return store.ofMessage(messageId).map((e) => {
        const { message_id: _m, from: _f, subject: _s, tags: _t, ...detail } = e.data;
        return { id: e.id, type: e.type, occurred_at: iso(e.created_at), detail };
      });
    },

    /** The workspace's outbox rows after `afterSeq`, oldest first (one more than `limit` when more follow). */
    outbox(workspaceId: string, opts: { limit: number; afterSeq?: number }): EventRow[] {
      return store.list(workspaceId, opts);
    },

    emit(workspaceId: string, type: string, data: Record<string, unknown>, messageId: string | null = null): string {
      const row: Omit<EventRow, 'seq'> = {
        id: newId('evt'),
        workspace_id: workspaceId,
        type,
        message_id: messageId,
        data,
        api_version: SERVICE_VERSION,
        created_at: deps.clock.now(),
      };
      const seq = store.insert(row);
      deps.fanout({ ...row, seq });
      changes.notify(`events:${workspaceId}`);
      changes.notify('events');
      return row.id;
    },

    /**
     * GET /events: the workspace's events after `after`, oldest first. With `wait`, when there is none yet, the request
     * is held until an event of the workspace commits (woken by the change signal, not by polling) or `wait` seconds
     * pass; a server shutting down (or a client going away: `signal`) answers at once.
     */
    async list(workspaceId: string, q: EventsQuery, signal?: AbortSignal) {
      const afterSeq = q.after === undefined ? 0 : (store.seqOf(workspaceId, q.after) ?? unknownCursor());
      let result = page(workspaceId, afterSeq, q);
      const deadline = performance.now() + (q.wait ?? 0) * 1000;
      for (;;) {
        const left = deadline - performance.now();
        if (result.data.length > 0 || left <= 0) return result;
        // An event of another type (or one rolled back) wakes it too: it looks again and, finding nothing, waits on.
        if (!(await changes.next(`events:${workspaceId}`, left, signal))) return page(workspaceId, afterSeq, q);
        result = page(workspaceId, afterSeq, q);
      }
    },
  };
}
export type Events = ReturnType<typeof createEvents>;
