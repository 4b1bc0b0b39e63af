import type { Db } from './db.js';

/** A job as the store hands it out: its row, with the payload decoded. */
export interface JobRow {
  id: number;
  kind: string;
  payload: unknown;
  run_at: number;
  attempts: number;
  claimed_until: number | null;
  created_at: number;
  queue: string;
}

/** The queue of every job that names none. */
export const DEFAULT_QUEUE = 'default';

/** A queue no scheduler runs: the probe's row is never claimed (and never committed). */
const PROBE_QUEUE = '-probe';

export function createJobStore(db: Db) {
  const insert = db.prepare('INSERT INTO jobs (kind, payload, run_at, created_at, queue) VALUES (?, ?, ?, ?, ?)');
  const claim = db.prepare(`
    UPDATE jobs SET claimed_until = @lease, attempts = attempts + 1
    WHERE id IN (
      SELECT id FROM jobs
      WHERE queue = @queue AND run_at <= @now AND (claimed_until IS NULL OR claimed_until < @wall)
      ORDER BY run_at, id LIMIT @limit
    )
    RETURNING *`);
  const del = db.prepare('DELETE FROM jobs WHERE id = ?');
  const reschedule = db.prepare('UPDATE jobs SET run_at = ?, claimed_until = NULL WHERE id = ?');
  const postpone = db.prepare(
    'UPDATE jobs SET run_at = ?, claimed_until = NULL, attempts = max(attempts - 1, 0) WHERE id = ?',
  );
  // A planned next run (a handler's {retryAt}) is not a failure: the failure count starts again.
  const defer = db.prepare(
    'UPDATE jobs SET run_at = ?, claimed_until = NULL, attempts = 0, payload = coalesce(?, payload) WHERE id = ?',
  );
  // ORDER BY + LIMIT walks the (queue, run_at) index to the first unclaimed job instead of scanning the table.
  const next = db.prepare(
    'SELECT run_at AS t FROM jobs WHERE queue = ? AND claimed_until IS NULL ORDER BY run_at LIMIT 1',
  );
  const release = db.prepare('UPDATE jobs SET claimed_until = NULL WHERE claimed_until IS NOT NULL');
  return {
    /** Adds a job; call inside the transaction of the change that caused it. */
    enqueue(kind: string, payload: unknown, runAt: number, now: number, queue = DEFAULT_QUEUE): number {
      return Number(insert.run(kind, JSON.stringify(payload), runAt, now, queue).lastInsertRowid);
    },
    /**
     * Atomically claims up to `limit` jobs due at `now` (service clock). The lease is on the wall clock
     * (`wall`, `lease`), so a manual service clock never strands a claim.
     */
    claimDue(now: number, wall: number, leaseMs: number, limit: number, queue = DEFAULT_QUEUE): JobRow[] {
      const rows = claim.all({ now, wall, lease: wall + leaseMs, limit, queue }) as (JobRow & { payload: string })[];
      return rows.map((r) => ({ ...r, payload: JSON.parse(r.payload) }));
    },
    complete(id: number): void {
      del.run(id);
    },
    reschedule(id: number, runAt: number): void {
      reschedule.run(runAt, id);
    },
    /**
     * Whether a write of a typical size (64 KiB) finds room: a row that size is added and the transaction rolled
     * back, so the probe leaves nothing behind, not even in the log. (A full file system only shows when a commit
     * writes the log; the group commit reports that.)
     */
    probe(): void {
      db.prepare('BEGIN IMMEDIATE').run();
      try {
        insert.run('probe', JSON.stringify('x'.repeat(64 * 1024)), Number.MAX_SAFE_INTEGER, 0, PROBE_QUEUE);
      } finally {
        if (db.inTransaction) db.prepare('ROLLBACK').run();
      }
    },
    /** Reschedules a job whose attempt did not count (it could not write to a full disk): its claim is given back. */
    postpone(id: number, runAt: number): void {
      postpone.run(runAt, id);
    },
    /** Reschedules a job that asked to run again later (not a failure), with a new payload if given: its attempt count is reset. */
    defer(id: number, runAt: number, payload?: unknown): void {
      defer.run(runAt, payload === undefined ? null : JSON.stringify(payload), id);
    },
    /** The id of the job of this kind in the queue, added first if there is none (a recurring job, written once). */
    ensure(kind: string, payload: unknown, runAt: number, now: number, queue = DEFAULT_QUEUE): number {
      const found = db
        .prepare('SELECT id FROM jobs WHERE kind = ? AND queue = ? ORDER BY id LIMIT 1')
        .get(kind, queue) as { id: number } | undefined;
      return found?.id ?? Number(insert.run(kind, JSON.stringify(payload), runAt, now, queue).lastInsertRowid);
    },
    /** Makes a job that waits for a later time due at `now`; true when it did. */
    hasten: (id: number, now: number): boolean =>
      db.prepare('UPDATE jobs SET run_at = ? WHERE id = ? AND run_at > ?').run(now, id, now).changes === 1,
    nextRunAt(queue = DEFAULT_QUEUE): number | null {
      return (next.get(queue) as { t: number } | undefined)?.t ?? null;
    },
    /** The queues that have jobs. */
    queues: () => (db.prepare('SELECT DISTINCT queue FROM jobs').all() as { queue: string }[]).map((r) => r.queue),
    /** Drops every job of a queue (a webhook endpoint deleted or disabled); returns how many. */
    dropQueue: (queue: string): number => db.prepare('DELETE FROM jobs WHERE queue = ?').run(queue).changes,
    /** At start: every claim belongs to a process that is gone. */
    releaseAll(): number {
      return release.run().changes;
    },
    count(kind?: string): number {
      const row = kind
        ? db.prepare('SELECT COUNT(*) AS n FROM jobs WHERE kind = ?').get(kind)
        : db.prepare('SELECT COUNT(*) AS n FROM jobs').get();
      return (row as { n: number }).n;
    },
  };
}
export type JobStore = ReturnType<typeof createJobStore>;
