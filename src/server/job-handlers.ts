// The workers' handlers, one per job kind (core/rules/job-kinds.ts), as the composition root builds them once the outbound
// side is open: the schedulers run them from start to stop.
import { createByteBudget } from '../lib/byte-budget.js';
import type { Clock } from '../lib/clock.js';
import type { Logger } from '../lib/log.js';
import { VERSION } from '../lib/version.js';
import type { AttachmentUrlPolicy } from './core/rules/attachment-urls.js';
import type { Core } from './core/index.js';
import { RETENTION_JOB } from './core/retention.js';
import type { Composer } from './outbound/compose.js';
import type { Sender } from './outbound/sender.js';
import { DELIVERY_BUDGET_BYTES, deliveryWorker } from './workers/delivery.js';
import { domainCheckWorker } from './workers/domain-check.js';
import { outcomeWorker } from './workers/outcome.js';
import { relayWorker } from './workers/relay.js';
import type { RelayTransport } from './core/relay.js';
import { retentionWorker } from './workers/retention.js';
import type { JobHandlers } from './core/scheduler.js';
import { systemMailWorker } from './workers/system-mail.js';
import { type createWebhookAgent, webhookWorker } from './workers/webhooks.js';

export interface JobHandlerDeps {
  core: Core;
  clock: Clock;
  log: Logger;
  /** The From of the service's own mail (verification, notices). */
  systemFrom: string;
  /** Where messages and webhook attempts leave: the sink's pool, the relay (`--relay-url`), the composer, the agent. */
  outbound: {
    sender: Sender;
    relay: RelayTransport | null;
    composer: Composer;
    webhookAgent: ReturnType<typeof createWebhookAgent>;
  };
  /** How long a webhook receiver has to answer an attempt (default 10 s). */
  webhookTimeoutMs?: number;
  /** Bytes of messages in delivery at once (default 48 MiB). */
  deliveryBudgetBytes?: number;
  /** The API's origin, for tracking links without a tracking host. */
  origin: () => string;
  /** Where an attachment's `url` may lead, and the DNS server its host is looked up with (null: the system's). */
  attachmentUrls: AttachmentUrlPolicy;
  dnsServer: string | null;
  /** Starts a full collection after a big message (`svc serve` exposes V8's collector; absent elsewhere). */
  collect?: () => void;
}

/** A handler for every job kind. */
export function jobHandlers(deps: JobHandlerDeps): JobHandlers {
  const { core, clock, log, outbound } = deps;
  const { sender, relay, composer, webhookAgent } = outbound;
  return {
    webhook: webhookWorker({
      webhooks: core.webhooks,
      agent: webhookAgent,
      userAgent: `svc-webhooks/${VERSION}`,
      timeoutMs: deps.webhookTimeoutMs,
    }),
    system_mail: systemMailWorker(sender, composer, deps.systemFrom),
    deliver: deliveryWorker({
      delivery: core.delivery,
      domains: core.domains,
      tracking: core.tracking,
      sender,
      composer,
      budget: createByteBudget(deps.deliveryBudgetBytes ?? DELIVERY_BUDGET_BYTES),
      collect: deps.collect,
      origin: deps.origin,
      attachmentUrls: deps.attachmentUrls,
      dnsServer: deps.dnsServer,
      log,
    }),
    outcome: outcomeWorker(core.delivery),
    relay: relayWorker(core.relay, relay, () => clock.now()),
    domain_check: domainCheckWorker(core.domains),
    [RETENTION_JOB]: retentionWorker({
      retention: core.retention,
      clock,
      log,
      onPruned: (ids) => core.inbox.publish({ event: 'deleted', data: { ids } }),
    }),
  };
}
