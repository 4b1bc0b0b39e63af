// The retention passes (`retention` jobs, one recurring job alone in its own queue): what ages out of the database is
// removed a batch at a time (core/retention.ts decides what), and the inbox is told which caught messages went.
import { RETENTION_INTERVAL, type Retention } from '../core/retention.js';
import type { Clock } from '../../lib/clock.js';
import type { Logger } from '../../lib/log.js';
import type { JobPayloads } from '../core/rules/job-kinds.js';
import type { JobHandler } from '../core/scheduler.js';

export function retentionWorker(deps: {
  retention: Retention;
  clock: Clock;
  log: Logger;
  onPruned(ids: string[]): void;
}): JobHandler<JobPayloads['retention']> {
  return async () => {
    try {
      const { caught, next } = await deps.retention.pass();
      if (caught.length) deps.onPruned(caught);
      return { retryAt: next };
    } catch (err) {
      // Never thrown to the scheduler: a job out of attempts is dropped, and this one must keep recurring.
      deps.log.error('retention pass failed; the next one tries again', { error: String(err) });
      return { retryAt: deps.clock.now() + RETENTION_INTERVAL };
    }
  };
}
