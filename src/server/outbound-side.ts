// The outbound side of `svc serve`'s listening phase (index.ts), which the workers' handlers (job-handlers.ts) send
// through: the sender, the relay of caught mail (--relay-url: releases and relay rules), the composer and its thread, the webhook agent — opened
// together once the sink listens, and closed together on the start-up stack.
import type { Logger } from '../lib/log.js';
import type { JobHandlerDeps } from './job-handlers.js';
import type { Opened } from './startup-stack.js';
import { relaySettings, type ServeOptions } from './options.js';
import { createComposer } from './outbound/compose.js';
import { openRelay } from './outbound/relay.js';
import { createPoolSender } from './outbound/sender.js';
import { createWebhookAgent } from './workers/webhooks.js';

/** The outbound side, open: what the handlers send through; the pool into the sink is warmed up ahead of a first send. */
export type Outbound = JobHandlerDeps['outbound'] & { sender: ReturnType<typeof createPoolSender> };

/** Opens the outbound side, its deliveries into the sink on `sinkPath` (the sink's own local socket). */
export function openOutbound(opts: ServeOptions, log: Logger, sinkPath: string, stack: Opened): Outbound {
  // The service's own deliveries reach the sink on its local socket, outside --smtp-max-connections.
  const sender = createPoolSender({ path: sinkPath });
  const relayUrl = relaySettings(opts)?.url;
  const relay = relayUrl ? openRelay(relayUrl) : null;
  const composer = createComposer({
    thread: opts.composeThread ?? true,
    log,
    resourceLimits: opts.composeResourceLimits,
  });
  const webhookAgent = createWebhookAgent(opts.webhookTimeoutMs);
  stack.push(async () => {
    sender.close();
    relay?.close();
    await webhookAgent.close();
    await composer.close();
  });
  return { sender, relay, composer, webhookAgent };
}
