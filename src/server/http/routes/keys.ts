import type { Core } from '../../core/index.js';
import type { Handlers } from '../handlers.js';

export function keyRoutes(core: Core): Pick<Handlers, 'listApiKeys' | 'createApiKey' | 'revokeApiKey'> {
  const { keys } = core;
  return {
    listApiKeys: ({ caller, query }) => ({ body: keys.list(caller.workspace.id, query.limit, query.after) }),
    createApiKey: ({ caller, body }) => ({
      body: keys.create(
        caller.workspace.id,
        caller.principal.kind === 'session' ? caller.principal.userId : null,
        body,
      ),
    }),
    revokeApiKey: ({ caller, params }) => keys.revoke(caller.workspace.id, params.id),
  };
}
