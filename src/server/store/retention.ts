import type { Db } from './db.js';

/** A caught message as the retention pass weighs it. */
export interface CaughtVictim {
  seq: number;
  id: string;
  size: number;
}

/**
 * What ages out, and its removal, a batch at a time: caught mail (with its source, parsed parts and search entry),
 * `/v1` messages with their events, events of no message, webhook attempts, expired idempotency records and rate
 * windows. Every query walks an index or a bounded head of its table from the oldest row, so a batch costs what it
 * removes, not the size of what stays.
 */
export function createRetentionStore(db: Db) {
  // The caught messages older than the `keep`-th newest (OFFSET keep - 1), oldest first; none while the sink holds fewer.
  const beyondCount = db.prepare(
    `SELECT seq, id, size FROM sink_messages
     WHERE seq < (SELECT seq FROM sink_messages ORDER BY seq DESC LIMIT 1 OFFSET ?)
     ORDER BY seq LIMIT ?`,
  );
  // The oldest rows by seq (the order they were caught in), of which those received before the cut go: a clock that
  // went back leaves a younger message among them, which stays without holding the others back.
  const olderThan = db.prepare(
    'SELECT seq, id, size FROM (SELECT seq, id, size, received_at FROM sink_messages ORDER BY seq LIMIT ?) WHERE received_at < ?',
  );
  const oldestCaught = db.prepare('SELECT received_at AS at FROM sink_messages ORDER BY seq LIMIT 1');

  // Webhook deliveries are the jobs of the endpoints' queues (`webhook:<id>`): a range of the jobs' queue index.
  const WEBHOOK_QUEUES = `queue >= 'webhook:' AND queue < 'webhook;'`;
  // Ids that jobs still name: a message a delivery or a simulated outcome will read, an event a webhook delivery will
  // send. IS NOT NULL: one NULL in the list would make every NOT IN unknown, and nothing would go.
  const JOB_MESSAGES = `SELECT json_extract(payload, '$.message_id') FROM jobs WHERE json_extract(payload, '$.message_id') IS NOT NULL`;
  const JOB_EVENTS = `SELECT json_extract(payload, '$.event_id') FROM jobs WHERE ${WEBHOOK_QUEUES} AND json_extract(payload, '$.event_id') IS NOT NULL`;
  // An event some listener may still be resting on: the newest of its type in its workspace.
  const newestOfType = (e: string) =>
    `NOT EXISTS (SELECT 1 FROM events n WHERE n.workspace_id = ${e}.workspace_id AND n.type = ${e}.type AND n.seq > ${e}.seq)`;
  const agedMessages = db.prepare(
    `SELECT m.id FROM messages m
     WHERE m.created_at < @before
       AND m.status NOT IN ('scheduled', 'queued', 'sending')
       AND m.id NOT IN (${JOB_MESSAGES})
       AND NOT EXISTS (
         SELECT 1 FROM events e WHERE e.message_id = m.id
           AND (e.created_at >= @before OR e.id IN (${JOB_EVENTS}) OR ${newestOfType('e')}))
     ORDER BY m.created_at LIMIT @limit`,
  );
  const deleteMessageEvents = db.prepare('DELETE FROM events WHERE message_id IN (SELECT value FROM json_each(?))');
  const deleteMessages = db.prepare('DELETE FROM messages WHERE id IN (SELECT value FROM json_each(?))');
  const agedUnlinkedEvents = db.prepare(
    `DELETE FROM events WHERE seq IN (
       SELECT e.seq FROM events e
       WHERE e.message_id IS NULL AND e.created_at < @before AND e.id NOT IN (${JOB_EVENTS}) AND NOT ${newestOfType('e')}
       ORDER BY e.created_at LIMIT @limit)`,
  );

  // Attempts are looked for among the oldest `window` rows (ids follow time): an attempt an endpoint still shows or a
  // delivery still retrying stays at the head, and the window is made wide enough to reach past those.
  const agedAttempts = db.prepare(
    `DELETE FROM webhook_attempts WHERE id IN (
       SELECT a.id FROM (SELECT id, endpoint_id, delivery_id, at FROM webhook_attempts ORDER BY id LIMIT @window) a
       WHERE a.at < @before
         AND a.delivery_id NOT IN (SELECT id FROM jobs WHERE ${WEBHOOK_QUEUES})
         AND NOT (
           EXISTS (SELECT 1 FROM webhook_endpoints w WHERE w.id = a.endpoint_id)
           AND NOT EXISTS (
             SELECT 1 FROM webhook_attempts n WHERE n.endpoint_id = a.endpoint_id AND n.id > a.id ORDER BY n.id LIMIT 1 OFFSET @recent - 1))
       LIMIT @limit)`,
  );
  const attemptWindow = db.prepare(
    `SELECT (SELECT COUNT(*) FROM webhook_endpoints) AS endpoints, (SELECT COUNT(*) FROM jobs WHERE ${WEBHOOK_QUEUES}) AS deliveries`,
  );
  const agedIdempotency = db.prepare(
    'DELETE FROM idempotency_keys WHERE rowid IN (SELECT rowid FROM idempotency_keys WHERE created_at < ? ORDER BY created_at LIMIT ?)',
  );
  const agedRateEvents = db.prepare(
    'DELETE FROM rate_events WHERE rowid IN (SELECT rowid FROM rate_events WHERE at < ? LIMIT ?)',
  );

  return {
    /**
     * The oldest caught messages that go: beyond the newest `keep` (null: no count limit), or received before
     * `before` (null: no age limit); at most `limit`, oldest first.
     */
    agedCaught(keep: number | null, before: number | null, limit: number): CaughtVictim[] {
      const byCount = keep == null ? [] : (beyondCount.all(keep - 1, limit) as CaughtVictim[]);
      const byAge = before == null ? [] : (olderThan.all(limit, before) as CaughtVictim[]);
      if (byAge.length === 0) return byCount;
      const all = new Map<number, CaughtVictim>();
      for (const v of [...byCount, ...byAge]) all.set(v.seq, v);
      return [...all.values()].sort((a, b) => a.seq - b.seq).slice(0, limit);
    },
    /** Removes caught messages with their content and search entries. */
    deleteCaught(seqs: number[]): void {
      const list = JSON.stringify(seqs);
      db.prepare('DELETE FROM sink_messages WHERE seq IN (SELECT value FROM json_each(?))').run(list);
      db.prepare('DELETE FROM sink_content WHERE seq IN (SELECT value FROM json_each(?))').run(list);
      db.prepare('DELETE FROM sink_search WHERE rowid IN (SELECT value FROM json_each(?))').run(list);
    },
    /** When the oldest caught message still kept was received; null when the sink is empty. */
    oldestCaughtAt: () => (oldestCaught.get() as { at: number } | undefined)?.at ?? null,

    /**
     * Removes up to `limit` `/v1` messages created before `before`, with their events, and answers how many. A message
     * stays while it waits or is being sent, while a job still names it or one of its events, while any of its events
     * is younger than the cut, and while one of its events is its workspace's newest of that type.
     */
    deleteAgedMessages(before: number, limit: number): number {
      const ids = (agedMessages.all({ before, limit }) as { id: string }[]).map((r) => r.id);
      if (ids.length === 0) return 0;
      const list = JSON.stringify(ids);
      deleteMessageEvents.run(list);
      deleteMessages.run(list);
      return ids.length;
    },
    /** Removes up to `limit` events of no message created before `before` (the same rules as a message's events). */
    deleteAgedUnlinkedEvents: (before: number, limit: number): number =>
      agedUnlinkedEvents.run({ before, limit }).changes,

    /**
     * Removes up to `limit` webhook attempts made before `before`, except an endpoint's `recent` newest and the attempts
     * of deliveries still being retried.
     */
    deleteAgedAttempts(before: number, limit: number, recent: number): number {
      const { endpoints, deliveries } = attemptWindow.get() as { endpoints: number; deliveries: number };
      const window = limit + endpoints * recent + deliveries * 7;
      return agedAttempts.run({ before, limit, recent, window }).changes;
    },
    deleteAgedIdempotency: (before: number, limit: number): number => agedIdempotency.run(before, limit).changes,
    deleteAgedRateEvents: (before: number, limit: number): number => agedRateEvents.run(before, limit).changes,
  };
}
export type RetentionStore = ReturnType<typeof createRetentionStore>;
