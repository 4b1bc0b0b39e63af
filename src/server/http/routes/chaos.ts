// The chaos rules of a local server (docs/local-server.md#sandbox-routes): listed, set or cleared; core/chaos.ts keeps
// them, and the `/v1` routes (http/chaos.ts) and the SMTP sink follow them.
import type { Chaos } from '../../core/chaos.js';
import { ruleFromRequest } from '../chaos-request.js';
import type { Handlers } from '../handlers.js';

export function chaosRoutes(chaos: Chaos): Pick<Handlers, 'getChaos' | 'setChaos' | 'clearChaos'> {
  return {
    getChaos: () => ({ body: chaos.list() }),
    setChaos: ({ body }) => ({ body: chaos.set(body.rules.map(ruleFromRequest), body.seed) }),
    clearChaos: () => chaos.clear(),
  };
}
