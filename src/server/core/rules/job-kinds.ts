// The kinds of durable job and the payload each carries: the one table that what enqueues a job (core) and what runs
// it (workers/, registered with the scheduler) are both checked against, so a kind spelt wrong, a payload of the
// wrong shape or a kind without a handler is a compile error rather than a job retried until it fails.
import type { Delivery as WebhookDelivery } from '../webhook-deliveries.js';

/** A message the service sends on its own behalf (email verification, notices to a workspace's owner). */
export interface SystemMail {
  /** The Message-ID header, fixed when the job is written, so a resend after a crash is the same message. */
  message_id: string;
  to: string;
  subject: string;
  text: string;
}

export interface JobPayloads {
  /** Build, sign and hand over one accepted message. */
  deliver: { message_id: string };
  /** Send the service's own mail. */
  system_mail: SystemMail;
  /** The next outcome of a recipient whose delivery was deferred (a simulator recipient). */
  outcome: { message_id: string; recipient: string; attempt: number };
  /** Check a domain's DNS records (a generation stale by a newer check is dropped). */
  domain_check: { domain_id: string; generation: number };
  /** One webhook attempt (on the endpoint's own queue). */
  webhook: WebhookDelivery;
  /** Pass a caught message on to recipients through the relay (a relay rule: core/relay.ts). */
  relay: { caught_id: string; to: string[] };
  /** A pass of pruning what is kept (recurring, on its own queue). */
  retention: Record<string, never>;
}

export type JobKind = keyof JobPayloads;
