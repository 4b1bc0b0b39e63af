// The core composition: every rule of the service, built on the store and the injected deps.
import { createAccountStore, createRateStore } from '../store/accounts.js';
import { createKeyStore } from '../store/keys.js';
import { createSinkStore } from '../store/sink.js';
import { createDomainStore } from '../store/domains.js';
import { createEventStore } from '../store/events.js';
import { createDomains } from './domains.js';
import { createEvents } from './events.js';
import { createAccess } from './access.js';
import { createAccounts } from './accounts.js';
import type { Deps } from './deps.js';
import { createKeys } from './keys.js';
import { createWindows } from './windows.js';

export function createCore(deps: Deps) {
  const accountStore = createAccountStore(deps.db);
  const windows = createWindows(createRateStore(deps.db), deps.clock);
  const accounts = createAccounts({ ...deps, store: accountStore, windows });
  const keys = createKeys({ ...deps, store: createKeyStore(deps.db) });
  const access = createAccess({ ...deps, accounts: accountStore, keys });
  const sink = createSinkStore(deps.db);
  const eventStore = createEventStore(deps.db);
  const events = createEvents({ store: eventStore, clock: deps.clock });
  const domainStore = createDomainStore(deps.db);
  const domains = createDomains({ ...deps, store: domainStore, events, windows });
  return { accounts, keys, access, sink, accountStore, windows, events, eventStore, domains, domainStore };
}
export type Core = ReturnType<typeof createCore>;
