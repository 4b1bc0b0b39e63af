// What GET /metrics reads of the database (core/metrics.ts): the counters the triggers of migration 14 keep in
// `metric_counts`, and the job table's depth and oldest due time per queue. Both are bounded: a row per counter and
// workspace, and one walk of the (queue, fixed, run_at) index, which holds every column the depth asks for.
import type { Db } from './db.js';
import type { DueNow } from './jobs.js';

/** A counter of the database by workspace ('' for mail caught outside any workspace). */
export interface MetricCount {
  name: 'accepted' | 'delivered' | 'bounced' | 'failed' | 'caught' | 'webhook_attempts' | 'webhook_failures';
  workspace_id: string;
  n: number;
}

/** A queue's jobs: how many, and how long the one due longest has been due (ms; 0 when none is due). */
export interface QueueDepth {
  queue: string;
  jobs: number;
  oldestDueMs: number;
}

export function createMetricStore(db: Db) {
  const counts = db.prepare('SELECT name, workspace_id, n FROM metric_counts');
  // The index (queue, fixed, run_at) covers it: its entries are counted and their least run_at read, no row visited.
  const queues = db.prepare(
    'SELECT queue, fixed, COUNT(*) AS n, MIN(run_at) AS oldest FROM jobs GROUP BY queue, fixed',
  );
  return {
    counts: (): MetricCount[] => counts.all() as MetricCount[],
    /** Each queue's depth at `now` (a delay is due on the monotonic reading, a fixed instant on the service clock). */
    queues(now: DueNow): QueueDepth[] {
      const byQueue = new Map<string, QueueDepth>();
      for (const r of queues.all() as { queue: string; fixed: number; n: number; oldest: number }[]) {
        const q = byQueue.get(r.queue) ?? { queue: r.queue, jobs: 0, oldestDueMs: 0 };
        q.jobs += r.n;
        q.oldestDueMs = Math.max(q.oldestDueMs, (r.fixed ? now.service : now.monotonic) - r.oldest);
        byQueue.set(r.queue, q);
      }
      return [...byQueue.values()];
    },
  };
}
export type MetricStore = ReturnType<typeof createMetricStore>;
