// A deferred recipient's next simulated attempt (`outcome` jobs, written by core/delivery.ts).
import type { Delivery } from '../core/delivery.js';
import type { JobHandler } from './scheduler.js';

export function outcomeWorker(delivery: Delivery): JobHandler {
  return (p: { message_id: string; recipient: string; attempt: number }) => delivery.retryOutcome(p.message_id, p.recipient, p.attempt);
}
