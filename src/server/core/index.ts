// The core composition: every rule of the service, built on the store and the injected deps.
import { createAccountStore, createRateStore } from '../store/accounts.js';
import { createKeyStore } from '../store/keys.js';
import { createSinkStore } from '../store/sink.js';
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
  return { accounts, keys, access, sink, accountStore, windows };
}
export type Core = ReturnType<typeof createCore>;
