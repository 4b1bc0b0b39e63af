import type { Core } from '../../core/index.js';
import type { V1Handlers } from '../handlers.js';

export function eventRoutes(core: Core): Pick<V1Handlers, 'listEvents'> {
  return {
    listEvents: async ({ caller, query, signal }) => ({
      body: await core.events.list(caller.workspace.id, query, signal),
    }),
  };
}
