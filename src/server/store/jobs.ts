import type { Db } from './db.js';

/** A job as the store hands it out: its row, with the payload decoded. */
export interface JobRow {
  id: number;
  kind: string;
  payload: unknown;
  run_at: number;
  attempts: number;
  claimed_until: number | null;
  /** When run_at was set. */
  set_at: number;
  /** 1: run_at is an instant on the service clock; 0: on its monotonic reading (DueNow). */
  fixed: number;
  queue: string;
  /** Whose turn the job takes: due jobs are claimed round-robin across a queue's lanes ('' for none). */
  lane: string;
}

/** Where a job goes: its queue (the default queue), on a fixed instant or a delay (a delay), in a lane (none). */
export interface JobPlace {
  queue?: string;
  /** run_at is an instant on the service clock that the sender chose (a scheduled send). */
  fixed?: boolean;
  /** A workspace's id for its mail: a workspace's jobs wait behind its own backlog, not another's. */
  lane?: string;
}

/**
 * Now, as a job's due time reads it. A due time set as a delay (a retry, a deferral, work due at once) is on the service
 * clock's monotonic reading, which a step of the wall clock does not move; a fixed one, an instant its sender chose (a
 * scheduled send), is on the service clock itself.
 */
export interface DueNow {
  monotonic: number;
  service: number;
}

/** The queue of every job that names none. */
export const DEFAULT_QUEUE = 'default';

/** A queue no scheduler runs: the probe's row is never claimed (and never committed). */
const PROBE_QUEUE = '-probe';

export function createJobStore(db: Db) {
  const insert = db.prepare(
    'INSERT INTO jobs (kind, payload, run_at, set_at, queue, fixed, lane) VALUES (?, ?, ?, ?, ?, ?, ?)',
  );
  // A queue's lanes that have jobs of one kind of due time, due or not: a loose index scan of (queue, fixed, lane,
  // run_at), one seek a lane, never a walk over a lane's backlog. (One statement for both kinds, a recursive walk over
  // (fixed, lane), measured slower than these two.)
  const lanesOf = [0, 1].map((fixed) =>
    db
      .prepare(`
    WITH RECURSIVE l(lane) AS (
      SELECT (SELECT lane FROM jobs WHERE queue = @queue AND fixed = ${fixed} ORDER BY lane LIMIT 1)
      UNION ALL
      SELECT (SELECT lane FROM jobs WHERE queue = @queue AND fixed = ${fixed} AND lane > l.lane ORDER BY lane LIMIT 1)
      FROM l WHERE l.lane IS NOT NULL
    )
    SELECT lane FROM l WHERE lane IS NOT NULL`)
      .pluck(),
  );
  type Pair = { fixed: number; lane: string };
  /** The queue's (kind of due time, lane) pairs that have jobs, delays first. */
  const pairs = (queue: string): Pair[] =>
    [0, 1].flatMap((fixed) => (lanesOf[fixed]!.all({ queue }) as string[]).map((lane) => ({ fixed, lane })));
  // One statement per kind of due time, each walking one lane of the index in due order; fixed instants are claimed
  // first (a scheduled send whose time has come), then delays.
  const claim = [0, 1].map((fixed) =>
    db.prepare(`
    UPDATE jobs SET claimed_until = @lease, attempts = attempts + 1
    WHERE id IN (
      SELECT id FROM jobs
      WHERE queue = @queue AND fixed = ${fixed} AND lane = @lane AND run_at <= @${fixed ? 'service' : 'monotonic'}
        AND (claimed_until IS NULL OR claimed_until < @held)
      ORDER BY run_at, id LIMIT @limit
    )
    RETURNING *`),
  );
  // ORDER BY + LIMIT walks a lane of the (queue, fixed, lane, run_at) index to its first unclaimed job instead of
  // scanning the table.
  const next = [0, 1].map((fixed) =>
    db
      .prepare(
        `SELECT run_at FROM jobs WHERE queue = ? AND fixed = ${fixed} AND lane = ? AND claimed_until IS NULL
         ORDER BY run_at LIMIT 1`,
      )
      .pluck(),
  );
  /** How long until the next unclaimed job of these pairs is due (0 or less: due now); null when they have none. */
  const dueAmong = (now: DueNow, queue: string, all: Pair[]): number | null => {
    let wait = Infinity;
    for (const { fixed, lane } of all) {
      const t = next[fixed]!.get(queue, lane) as number | undefined;
      if (t !== undefined) wait = Math.min(wait, t - (fixed ? now.service : now.monotonic));
    }
    return wait === Infinity ? null : wait;
  };
  type Claimed = JobRow & { payload: string };
  /** Up to `limit` of a lane's due jobs of the kinds of due time it has, in the order they are due. */
  const claimLane = (args: Omit<ClaimArgs, 'limit'>, kinds: number[], limit: number): Claimed[] => {
    const rows: Claimed[] = [];
    for (const fixed of kinds) {
      if (rows.length === limit) break;
      const got = claim[fixed]!.all({ ...args, limit: limit - rows.length }) as Claimed[];
      // RETURNING keeps no order of its own.
      rows.push(...got.sort((a, b) => a.run_at - b.run_at || a.id - b.id));
    }
    return rows;
  };
  type ClaimArgs = DueNow & { held: number; lease: number; limit: number; queue: string; lane: string };
  // The lane each queue served last: the next claim starts with the one after it.
  const served = new Map<string, string>();
  /**
   * Round-robin across the queue's lanes: each lane with due jobs gets an equal share of the slots, in turn from the
   * lane after the one served last, and a share a lane cannot fill goes to the others. Then, from the same listing,
   * how long until the next job left is due. One transaction, one commit.
   */
  const claimFair = db.transaction((args: Omit<ClaimArgs, 'lane'>): { rows: Claimed[]; dueIn: number | null } => {
    const found = pairs(args.queue);
    // Each lane's kinds of due time, fixed instants first.
    const kinds = new Map<string, number[]>();
    for (const { fixed, lane } of found) kinds.set(lane, fixed ? [1, ...(kinds.get(lane) ?? [])] : [0]);
    const all = [...kinds.keys()].sort();
    const last = served.get(args.queue);
    const after = last === undefined ? -1 : all.findIndex((l) => l > last);
    const from = Math.max(after, 0);
    let turn = [...all.slice(from), ...all.slice(0, from)];
    const rows: Claimed[] = [];
    while (rows.length < args.limit && turn.length) {
      const share = Math.ceil((args.limit - rows.length) / turn.length);
      const more: string[] = [];
      for (const lane of turn) {
        const want = Math.min(share, args.limit - rows.length);
        if (want === 0) break;
        const got = claimLane({ ...args, lane }, kinds.get(lane)!, want);
        rows.push(...got);
        if (got.length) served.set(args.queue, lane);
        if (got.length === want) more.push(lane);
      }
      turn = more;
    }
    return { rows, dueIn: dueAmong(args, args.queue, found) };
  });
  /**
   * Atomically claims up to `limit` jobs due `now`, round-robin across the queue's lanes and in due order within each,
   * and answers with them how long until the queue's next unclaimed job is due (dueIn's answer after the claim, from
   * the same listing of the lanes: a scheduler's step needs both). A claim is held until `held + leaseMs`, on a time
   * of the claiming process's own that never goes back (`held`: every claim is released when a process starts, so no
   * other reads it).
   */
  const claimNext = (
    now: DueNow,
    held: number,
    leaseMs: number,
    limit: number,
    queue = DEFAULT_QUEUE,
  ): { jobs: JobRow[]; dueIn: number | null } => {
    // IMMEDIATE: the write lock is taken before the lanes are read, so a claim never has to upgrade a read.
    const { rows, dueIn } = claimFair.immediate({ ...now, held, lease: held + leaseMs, limit, queue });
    return { jobs: rows.map((r) => ({ ...r, payload: JSON.parse(r.payload) })), dueIn };
  };
  // One job by its id, on the same conditions as a claim from the lanes: of this queue, due, and unclaimed.
  const claimOne = db.prepare(`
    UPDATE jobs SET claimed_until = @lease, attempts = attempts + 1
    WHERE id = @id AND queue = @queue AND run_at <= (CASE fixed WHEN 1 THEN @service ELSE @monotonic END)
      AND (claimed_until IS NULL OR claimed_until < @held)
    RETURNING *`);
  const claimEach = db.transaction((args: DueNow & { held: number; lease: number; queue: string }, ids: number[]) =>
    ids.flatMap((id) =>
      (claimOne.all({ ...args, id }) as Claimed[]).map((r) => ({ ...r, payload: JSON.parse(r.payload) })),
    ),
  );
  const del = db.prepare('DELETE FROM jobs WHERE id = ?');
  const reschedule = db.prepare('UPDATE jobs SET run_at = ?, set_at = ?, fixed = 0, claimed_until = NULL WHERE id = ?');
  const postpone = db.prepare(
    'UPDATE jobs SET run_at = ?, set_at = ?, fixed = 0, claimed_until = NULL, attempts = max(attempts - 1, 0) WHERE id = ?',
  );
  // A planned next run (a handler's {retryAt}) is not a failure: the failure count starts again.
  const defer = db.prepare(
    'UPDATE jobs SET run_at = ?, set_at = ?, fixed = 0, claimed_until = NULL, attempts = 0, payload = coalesce(?, payload) WHERE id = ?',
  );
  const release = db.prepare('UPDATE jobs SET claimed_until = NULL WHERE claimed_until IS NOT NULL');
  const rebase = db.prepare(
    'UPDATE jobs SET run_at = @now + (run_at - set_at), set_at = @now WHERE fixed = 0 AND set_at > @now',
  );
  return {
    /**
     * Adds a job due at `runAt`, set at `now`, both on the monotonic reading (DueNow), or, `fixed`, at an instant on
     * the service clock; call inside the transaction of the change that caused it.
     */
    enqueue(kind: string, payload: unknown, runAt: number, now: number, place: JobPlace = {}): number {
      const { queue = DEFAULT_QUEUE, fixed = false, lane = '' } = place;
      return Number(insert.run(kind, JSON.stringify(payload), runAt, now, queue, fixed ? 1 : 0, lane).lastInsertRowid);
    },
    /**
     * Claims these jobs, those of them that are of the queue, due `now` and unclaimed, in the order given: for a
     * scheduler that knows them to be all its queue has due (core/scheduler.ts), without reading the lanes.
     */
    claimIds: (now: DueNow, held: number, leaseMs: number, ids: number[], queue = DEFAULT_QUEUE): JobRow[] =>
      claimEach.immediate({ ...now, held, lease: held + leaseMs, queue }, ids),
    /** claimNext's jobs alone. */
    claimDue: (now: DueNow, held: number, leaseMs: number, limit: number, queue = DEFAULT_QUEUE): JobRow[] =>
      claimNext(now, held, leaseMs, limit, queue).jobs,
    claimNext,
    complete(id: number): void {
      del.run(id);
    },
    /** Runs a job again at `runAt`, set at `now` (both on the monotonic reading); its claim is given back. */
    reschedule(id: number, runAt: number, now: number): void {
      reschedule.run(runAt, now, id);
    },
    /**
     * Whether a write of a typical size (64 KiB) finds room: a row that size is added and the transaction rolled
     * back, so the probe leaves nothing behind, not even in the log. (A full file system only shows when a commit
     * writes the log; the group commit reports that.)
     */
    probe(): void {
      db.prepare('BEGIN IMMEDIATE').run();
      try {
        insert.run('probe', JSON.stringify('x'.repeat(64 * 1024)), Number.MAX_SAFE_INTEGER, 0, PROBE_QUEUE, 0, '');
      } finally {
        if (db.inTransaction) db.prepare('ROLLBACK').run();
      }
    },
    /** Reschedules a job whose attempt did not count (it could not write to a full disk): its claim is given back. */
    postpone(id: number, runAt: number, now: number): void {
      postpone.run(runAt, now, id);
    },
    /** Reschedules a job that asked to run again later (not a failure), with a new payload if given: its attempt count is reset. */
    defer(id: number, runAt: number, now: number, payload?: unknown): void {
      defer.run(runAt, now, payload === undefined ? null : JSON.stringify(payload), id);
    },
    /** The id of the job of this kind in the queue, added first if there is none (a recurring job, written once). */
    ensure(kind: string, payload: unknown, runAt: number, now: number, queue = DEFAULT_QUEUE): number {
      const found = db
        .prepare('SELECT id FROM jobs WHERE kind = ? AND queue = ? ORDER BY id LIMIT 1')
        .get(kind, queue) as { id: number } | undefined;
      return found?.id ?? Number(insert.run(kind, JSON.stringify(payload), runAt, now, queue, 0, '').lastInsertRowid);
    },
    /** Makes a job that waits for a later time due at `now` (monotonic reading); true when it did. */
    hasten: (id: number, now: number): boolean =>
      db
        .prepare('UPDATE jobs SET run_at = @now, set_at = @now WHERE id = @id AND fixed = 0 AND run_at > @now')
        .run({ id, now }).changes === 1,
    /** How long until the queue's next unclaimed job is due (0 or less: due now); null when it has none. */
    dueIn: (now: DueNow, queue = DEFAULT_QUEUE): number | null => dueAmong(now, queue, pairs(queue)),
    /** The queues that have jobs. */
    queues: () => (db.prepare('SELECT DISTINCT queue FROM jobs').all() as { queue: string }[]).map((r) => r.queue),
    /** Drops every job of a queue (a webhook endpoint deleted or disabled); returns how many. */
    dropQueue: (queue: string): number => db.prepare('DELETE FROM jobs WHERE queue = ?').run(queue).changes,
    /** At start: every claim belongs to a process that is gone, whatever its lease says. */
    releaseAll(): number {
      return release.run().changes;
    },
    /**
     * At start, `now` on the monotonic reading: a delay set at a later time (on a clock that has since gone back: a
     * machine's clock corrected, a manual clock moved on) becomes the same delay from now, so it is not held back until
     * the clock catches up. Fixed instants keep theirs. Answers how many moved.
     */
    rebase(now: number): number {
      return rebase.run({ now }).changes;
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
