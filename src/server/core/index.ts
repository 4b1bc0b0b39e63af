// The core composition: every rule of the service, built on the store and the injected deps.
import { createAccountStore, createRateStore } from '../store/accounts.js';
import { createKeyStore } from '../store/keys.js';
import { createSinkStore } from '../store/sink.js';
import { createDomainStore } from '../store/domains.js';
import { createEventStore } from '../store/events.js';
import { createDomains } from './domains.js';
import { createMessageStore } from '../store/messages.js';
import { createEmails } from './emails.js';
import { createDelivery } from './delivery.js';
import { createTracking } from './tracking.js';
import { createSendRate } from './send-rate.js';
import { createEvents } from './events.js';
import { createWebhooks } from './webhooks.js';
import { createWebhookStore } from '../store/webhooks.js';
import { createAccess } from './access.js';
import { createAccounts } from './accounts.js';
import type { Deps } from './deps.js';
import { createKeys } from './keys.js';
import { createWindows } from './windows.js';
import { createRetentionStore } from '../store/retention.js';
import { DEFAULT_MAX_MESSAGES } from '../../contract/sandbox.js';
import { createRetention, type RetentionPolicy } from './retention.js';

export interface CoreOptions {
  /** Sending requests per second per workspace (bucket of twice that). */
  sendRate: number;
  /** Operator patterns of the abuse filter. */
  blockPatterns: RegExp[];
  /** What is kept (default: the newest 10,000 caught messages, no age limit). */
  retention?: RetentionPolicy;
}

export function createCore(deps: Deps, opts: CoreOptions = { sendRate: 50, blockPatterns: [] }) {
  const accountStore = createAccountStore(deps.db);
  const windows = createWindows(createRateStore(deps.db), deps.clock);
  const accounts = createAccounts({ ...deps, store: accountStore, windows });
  const keys = createKeys({ ...deps, store: createKeyStore(deps.db) });
  const access = createAccess({ ...deps, accounts: accountStore, keys });
  const sink = createSinkStore(deps.db);
  const eventStore = createEventStore(deps.db);
  const webhooks = createWebhooks({ ...deps, store: createWebhookStore(deps.db), events: eventStore, accounts: accountStore });
  const events = createEvents({ store: eventStore, clock: deps.clock, changes: deps.changes, fanout: webhooks.fanout });
  const domainStore = createDomainStore(deps.db);
  const domains = createDomains({ ...deps, store: domainStore, events, windows });
  const messageStore = createMessageStore(deps.db);
  const emails = createEmails({
    ...deps, store: messageStore, domains: domainStore, accounts: accountStore, events, eventStore, blockPatterns: opts.blockPatterns,
  });
  const delivery = createDelivery({ ...deps, store: messageStore, domains: domainStore, emails });
  const tracking = createTracking({ ...deps, store: messageStore, emails });
  const sendRate = createSendRate(opts.sendRate, deps.clock);
  const retention = createRetention(
    { ...deps, store: createRetentionStore(deps.db) },
    opts.retention ?? { maxMessages: DEFAULT_MAX_MESSAGES, maxAge: null },
  );
  return {
    accounts, keys, access, sink, accountStore, windows, events, eventStore, domains, domainStore, messageStore, emails, delivery,
    tracking, sendRate, webhooks, retention,
  };
}
export type Core = ReturnType<typeof createCore>;
