import type { Core } from '../../core/index.js';
import type { Handlers } from '../handlers.js';

export function domainRoutes(
  core: Core,
): Pick<
  Handlers,
  'listDomains' | 'createDomain' | 'getDomain' | 'updateDomain' | 'deleteDomain' | 'getDomainDns' | 'verifyDomain'
> {
  const { domains } = core;
  return {
    listDomains: ({ caller, query }) => ({ body: domains.list(caller.workspace.id, query.limit, query.after) }),
    createDomain: async ({ caller, body }) => ({ body: await domains.create(caller.workspace.id, body) }),
    getDomain: ({ caller, params }) => ({ body: domains.get(caller.workspace.id, params.id) }),
    updateDomain: ({ caller, params, body }) => ({ body: domains.update(caller.workspace.id, params.id, body) }),
    deleteDomain: ({ caller, params }) => domains.delete(caller.workspace.id, params.id),
    getDomainDns: ({ caller, params }) => ({ body: domains.dns(caller.workspace.id, params.id) }),
    verifyDomain: async ({ caller, params }) => ({ body: await domains.verify(caller.workspace.id, params.id) }),
  };
}
