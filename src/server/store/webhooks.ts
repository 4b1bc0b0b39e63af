import type { Db } from './db.js';

/** A webhook endpoint as stored; `events`, the types it takes (null: all), is JSON text in its column. */
export interface EndpointRow {
  id: string;
  workspace_id: string;
  url: string;
  events: string[] | null;
  secret: string;
  previous_secret: string | null;
  previous_secret_expires_at: number | null;
  status: 'active' | 'disabled_by_failures';
  created_at: number;
  disabled_at: number | null;
  /**
   * The last success written (core/webhook-attempts.ts), on the service clock's monotonic reading, as the attempt
   * schedule is.
   */
  last_success_at: number | null;
}

export interface AttemptRow {
  id?: number;
  delivery_id: number;
  endpoint_id: string;
  event_id: string;
  event_type: string;
  attempt: number;
  at: number;
  status_code: number | null;
  error: string | null;
  duration_ms: number;
  ok: 0 | 1;
}

type StoredEndpoint = Omit<EndpointRow, 'events'> & { events: string | null };
const decode = (e: StoredEndpoint): EndpointRow => ({
  ...e,
  events: e.events == null ? null : (JSON.parse(e.events) as string[]),
});

export function createWebhookStore(db: Db) {
  return {
    insertEndpoint(endpoint: EndpointRow): void {
      const e: StoredEndpoint = {
        ...endpoint,
        events: endpoint.events == null ? null : JSON.stringify(endpoint.events),
      };
      db.prepare(
        `INSERT INTO webhook_endpoints (id, workspace_id, url, events, secret, previous_secret, previous_secret_expires_at, status,
           created_at, disabled_at, last_success_at)
         VALUES (@id, @workspace_id, @url, @events, @secret, @previous_secret, @previous_secret_expires_at, @status, @created_at,
           @disabled_at, @last_success_at)`,
      ).run(e);
    },
    endpoint(id: string): EndpointRow | undefined {
      const e = db.prepare('SELECT * FROM webhook_endpoints WHERE id = ?').get(id) as StoredEndpoint | undefined;
      return e && decode(e);
    },
    /** A workspace's endpoints, oldest first; every workspace's when none is given. */
    endpoints: (workspaceId?: string): EndpointRow[] =>
      (
        (workspaceId
          ? db
              .prepare('SELECT * FROM webhook_endpoints WHERE workspace_id = ? ORDER BY created_at, id')
              .all(workspaceId)
          : db.prepare('SELECT * FROM webhook_endpoints ORDER BY created_at, id').all()) as StoredEndpoint[]
      ).map(decode),
    countEndpoints: (workspaceId: string) =>
      (
        db.prepare('SELECT COUNT(*) AS n FROM webhook_endpoints WHERE workspace_id = ?').get(workspaceId) as {
          n: number;
        }
      ).n,
    deleteEndpoint: (id: string) => db.prepare('DELETE FROM webhook_endpoints WHERE id = ?').run(id).changes === 1,
    rotateSecret: (id: string, secret: string, previousExpiresAt: number) =>
      void db
        .prepare(
          'UPDATE webhook_endpoints SET previous_secret = secret, previous_secret_expires_at = ?, secret = ? WHERE id = ?',
        )
        .run(previousExpiresAt, secret, id),
    /** A seed file's endpoint as it names it again: its event types and secret (no rotation overlap). */
    reseedEndpoint: (id: string, e: Pick<EndpointRow, 'events' | 'secret'>) =>
      void db
        .prepare(
          `UPDATE webhook_endpoints SET events = ?, secret = ?,
             previous_secret = CASE WHEN secret = ? THEN previous_secret ELSE NULL END,
             previous_secret_expires_at = CASE WHEN secret = ? THEN previous_secret_expires_at ELSE NULL END
           WHERE id = ?`,
        )
        .run(e.events == null ? null : JSON.stringify(e.events), e.secret, e.secret, e.secret, id),
    /** Sets the status; true when it changed. */
    setStatus: (id: string, status: EndpointRow['status'], at: number) =>
      db
        .prepare(
          `UPDATE webhook_endpoints SET status = ?, disabled_at = CASE WHEN ? = 'active' THEN NULL ELSE ? END WHERE id = ? AND status != ?`,
        )
        .run(status, status, at, id, status).changes === 1,
    succeeded: (id: string, at: number) =>
      void db.prepare('UPDATE webhook_endpoints SET last_success_at = ? WHERE id = ?').run(at, id),

    insertAttempt: (a: AttemptRow) =>
      void db
        .prepare(
          `INSERT INTO webhook_attempts (delivery_id, endpoint_id, event_id, event_type, attempt, at, status_code, error, duration_ms, ok)
           VALUES (@delivery_id, @endpoint_id, @event_id, @event_type, @attempt, @at, @status_code, @error, @duration_ms, @ok)`,
        )
        .run(a),
    /** An endpoint's latest attempts, newest first. */
    recentAttempts: (endpointId: string, limit: number) =>
      db
        .prepare('SELECT * FROM webhook_attempts WHERE endpoint_id = ? ORDER BY id DESC LIMIT ?')
        .all(endpointId, limit) as AttemptRow[],
    /** Every attempt to deliver these events, oldest first (a message's timeline). */
    attemptsOfEvents: (eventIds: string[]) =>
      eventIds.length === 0
        ? []
        : (db
            .prepare('SELECT * FROM webhook_attempts WHERE event_id IN (SELECT value FROM json_each(?)) ORDER BY id')
            .all(JSON.stringify(eventIds)) as AttemptRow[]),
    /** The events of the attempts recorded after attempt `id`, in order, with their ids (the inbox's live stream). */
    attemptedAfter: (id: number, limit: number) =>
      db.prepare('SELECT id, event_id FROM webhook_attempts WHERE id > ? ORDER BY id LIMIT ?').all(id, limit) as {
        id: number;
        event_id: string;
      }[],
    /** The id of the newest attempt (0 for none). */
    lastAttemptId: () =>
      (db.prepare('SELECT coalesce(max(id), 0) AS id FROM webhook_attempts').get() as { id: number }).id,
  };
}
export type WebhookStore = ReturnType<typeof createWebhookStore>;
