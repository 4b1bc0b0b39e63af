// A deferred recipient's next simulated attempt (`outcome` jobs, written by core/delivery.ts).
import type { Delivery } from '../core/delivery.js';
import type { JobPayloads } from '../core/rules/job-kinds.js';
import type { JobHandler } from '../core/scheduler.js';

export function outcomeWorker(delivery: Delivery): JobHandler<JobPayloads['outcome']> {
  return (p) => delivery.retryOutcome(p.message_id, p.recipient, p.attempt);
}
