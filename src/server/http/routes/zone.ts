// The DNS zone of a local server (docs/local-server.md#sandbox-routes): a domain's records published, a record put or
// deleted, by core.
import type { Core } from '../../core/index.js';
import type { Handlers } from '../handlers.js';

export function zoneRoutes(core: Core): Pick<Handlers, 'publishDomain' | 'putDns' | 'deleteDns'> {
  const { domains, zone } = core;
  return {
    publishDomain: ({ params, body }) => ({ body: domains.publish(params.id!, body) }),
    putDns: ({ body }) => ({ body: zone.put(body) }),
    deleteDns: ({ query }) => zone.delete(query.host, query.type),
  };
}
