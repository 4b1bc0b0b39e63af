// The core composition: every rule of the service, built on the store and the injected deps. What it returns is the
// services the HTTP routes, the sandbox, the workers and the SMTP sink call; the stores stay inside.
import { createAccountStore, createRateStore } from '../store/accounts.js';
import { createKeyStore } from '../store/keys.js';
import { createInboxStore } from '../store/inbox.js';
import { createDomainStore } from '../store/domains.js';
import { createEventStore } from '../store/events.js';
import { createDomains } from './domains.js';
import { createEmailStore } from '../store/emails.js';
import { createEmails } from './emails.js';
import { createDelivery } from './delivery.js';
import { createMessageEvents } from './message-events.js';
import { createTracking } from './tracking.js';
import { createSendRate } from './send-rate.js';
import { createEvents } from './events.js';
import { createWebhooks } from './webhooks.js';
import { createWebhookStore } from '../store/webhooks.js';
import { createAccess } from './access.js';
import { createAccounts } from './accounts.js';
import type { Deps, Resolver } from './deps.js';
import { createKeys } from './keys.js';
import { createRateLimits } from './rate-limits.js';
import { createRetentionStore } from '../store/retention.js';
import { DEFAULT_MAX_MESSAGES } from '../../contract/inbox.js';
import { createRetention, type RetentionPolicy } from './retention.js';
import { createInbox } from './inbox.js';
import { createMailbox } from './mailbox.js';
import type { DkimVerdict } from './inbox-read.js';
import { createZone } from './zone.js';
import { createSandboxClock } from './clock.js';
import { caughtOrigin } from './rules/message-ids.js';
import { createCheckStore } from '../store/checks.js';
import { type Checker, createChecks } from './checks.js';
import { createMetrics } from './metrics.js';
import { createRelayStore } from '../store/relays.js';
import { createRelay } from './relay.js';
import type { RelayConfig } from './rules/relay.js';
import { createSeedFile } from './seed-file.js';

export interface CoreOptions {
  /** Sending requests per second per workspace (bucket of twice that). */
  sendRate: number;
  /** Operator patterns of the abuse filter. */
  blockPatterns: RegExp[];
  /** What is kept (default: the newest 10,000 caught messages, no age limit). */
  retention?: RetentionPolicy;
  /** Verifies a caught message's DKIM signatures, looking keys up with the resolver (none: every verdict is `none`). */
  verifyDkim?: (raw: Buffer, resolver: Resolver) => Promise<DkimVerdict>;
  /** Computes caught messages' checks (none: the checks route answers 503). */
  checker?: Checker;
  /** The relay of caught mail (`--relay-url`, `--relay-allow`, `--relay-matching`); none: releases answer 409. */
  relay?: RelayConfig | null;
}

/** The deps of core, where `resolver` may be `'sandbox'`: the sandbox zone, which core keeps. */
export type CoreDeps = Omit<Deps, 'resolver'> & { resolver: Resolver | 'sandbox' };

export function createCore(coreDeps: CoreDeps, opts: CoreOptions = { sendRate: 50, blockPatterns: [] }) {
  const domainStore = createDomainStore(coreDeps.db);
  const zone = createZone(domainStore, coreDeps.config.providerHosts);
  const deps: Deps = { ...coreDeps, resolver: coreDeps.resolver === 'sandbox' ? zone.resolver : coreDeps.resolver };
  const accountStore = createAccountStore(deps.db);
  const rateLimits = createRateLimits(createRateStore(deps.db), deps.clock);
  const accounts = createAccounts({ ...deps, store: accountStore, rateLimits });
  const keys = createKeys({ ...deps, store: createKeyStore(deps.db) });
  const access = createAccess({ ...deps, accounts: accountStore, keys, rateLimits });
  const eventStore = createEventStore(deps.db);
  const webhookStore = createWebhookStore(deps.db);
  const webhooks = createWebhooks({ ...deps, store: webhookStore, events: eventStore, accounts: accountStore });
  const events = createEvents({ store: eventStore, clock: deps.clock, changes: deps.changes, fanout: webhooks.fanout });
  const emailStore = createEmailStore(deps.db);
  const domains = createDomains({
    ...deps,
    store: domainStore,
    events,
    rateLimits,
    waitingFromDomain: emailStore.waitingFromDomain,
  });
  const messageEvents = createMessageEvents({ store: emailStore, clock: deps.clock, events });
  const emails = createEmails({
    ...deps,
    store: emailStore,
    messageEvents,
    domains: domainStore,
    accounts: accountStore,
    events,
    sendRate: createSendRate(opts.sendRate, deps.clock),
    blockPatterns: opts.blockPatterns,
  });
  const delivery = createDelivery({ ...deps, store: emailStore, domains: domainStore, messageEvents });
  const tracking = createTracking({ ...deps, store: emailStore, messageEvents });
  const retention = createRetention(
    { ...deps, store: createRetentionStore(deps.db) },
    opts.retention ?? { maxMessages: DEFAULT_MAX_MESSAGES, maxAge: null },
  );
  const verifyDkim = opts.verifyDkim;
  const inboxStore = createInboxStore(deps.db);
  const relayStore = createRelayStore(deps.db);
  const relay = createRelay({
    ...deps,
    config: opts.relay ?? null,
    inbox: inboxStore,
    relays: relayStore,
    message: emailStore.get,
  });
  const inbox = createInbox({
    store: inboxStore,
    clock: deps.clock,
    commit: deps.commit,
    origin: (header) => caughtOrigin(header, emailStore.workspaceOf),
    events,
    webhooks,
    attempts: webhookStore,
    verifyDkim: verifyDkim && ((raw) => verifyDkim(raw, deps.resolver)),
    message: emailStore.get,
    relays: relayStore,
    changes: deps.changes,
    onCaught: () => {
      deps.changes.notify('sink');
      retention.caught();
    },
    // A relay rule's job commits with the message it passes on.
    onStored: relay.caught,
  });
  const checks = createChecks({
    store: createCheckStore(deps.db),
    inbox: inboxStore,
    tracking,
    emails: emailStore,
    resolver: deps.resolver,
    checker: opts.checker,
  });
  return {
    accounts,
    keys,
    /** The service clock as the sandbox reads and moves it. */
    clock: createSandboxClock({ clock: deps.clock, inbox }),
    access,
    events,
    domains,
    zone,
    emails,
    delivery,
    tracking,
    webhooks,
    retention,
    inbox,
    /** Caught mail as POP3 and IMAP clients read it. */
    mailbox: createMailbox({ store: inboxStore, inbox, access, clock: deps.clock, changes: deps.changes }),
    /** Releases and relay rules of caught mail, through the relay the composition root attaches. */
    relay,
    /** Caught messages' checks, kept with them. */
    checks,
    /** How domain records are looked up: the sandbox zone or real DNS. */
    resolver: deps.resolver,
    /** A seed file's declared state, applied on every start (`svc serve --seed FILE`). */
    seedFile: createSeedFile({
      ...deps,
      accounts: accountStore,
      keys: createKeyStore(deps.db),
      domains: domainStore,
      webhooks: webhookStore,
      endpointsChanged: webhooks.changed,
      events,
      rateLimits,
      suppress: emailStore.suppress,
      isSuppressed: emailStore.isSuppressed,
    }),
    /** What GET /metrics reports, and where the edges count connections and requests. */
    metrics: createMetrics({ db: deps.db, clock: deps.clock }),
  };
}
export type Core = ReturnType<typeof createCore>;
