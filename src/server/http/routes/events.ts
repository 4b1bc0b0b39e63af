import type { Core } from '../../core/index.js';
import type { Handlers } from '../handlers.js';

export function eventRoutes(core: Core): Pick<Handlers, 'listEvents'> {
  return {
    listEvents: async ({ caller, query, signal }) => ({
      body: await core.events.list(caller.workspace.id, query, signal),
    }),
  };
}
