// The chaos rules of a local server (docs/local-server.md#sandbox-routes): listed, set or cleared; core/chaos.ts keeps
// them, and the `/v1` routes (http/chaos.ts) and the SMTP sink follow them. A rule as PUT /sandbox/chaos gives it
// (contract/chaos.ts, validated there: ranges, one action that fits the match) is put in the engine's shape here, once
// its HTTP match is known to fit a `/v1` route.
import type { z } from 'zod';
import type { FieldError } from '../../../contract/common.js';
import { endpoints, isV1 } from '../../../contract/endpoints.js';
import type { ChaosRule as ChaosRuleSchema } from '../../../contract/chaos.js';
import { ServiceError } from '../../core/errors.js';
import { type Chaos, type ChaosAction, type ChaosMatch, type ChaosRule, unmatchable } from '../../core/chaos.js';
import type { Handlers } from '../handlers.js';

export function chaosRoutes(chaos: Chaos): Pick<Handlers, 'getChaos' | 'setChaos' | 'clearChaos'> {
  return {
    getChaos: () => ({ body: chaos.list() }),
    setChaos: ({ body }) => ({
      body: chaos.set(body.rules.map(ruleFromRequest), body.seed),
    }),
    clearChaos: () => chaos.clear(),
  };
}

/** The `/v1` routes served, for telling a chaos rule that can never match. */
const V1_ROUTES = Object.values(endpoints)
  .filter(isV1)
  .map((e) => ({ method: e.method, path: `/v1${e.path}` }));

/**
 * A rule as validated (contract/chaos.ts: ranges, one action that fits the match) in the engine's shape, once its
 * HTTP match is known to fit a route: a rule that could never match is refused rather than kept doing nothing.
 */
function ruleFromRequest(rule: z.output<typeof ChaosRuleSchema>, i: number): ChaosRule {
  const { match: m, action: a } = rule;
  let match: ChaosMatch;
  if (m.smtp !== undefined) {
    match = { smtp: m.smtp };
  } else {
    const never = unmatchable(m, V1_ROUTES);
    if (never) {
      const error: FieldError = {
        path: `rules.${i}.match.${never.field}`,
        code: 'no_route',
        message: never.message,
      };
      throw new ServiceError('validation_failed', `${error.path}: ${error.message}`, { errors: [error] });
    }
    match = {
      ...(m.method !== undefined ? { method: m.method } : {}),
      ...(m.path !== undefined ? { path: m.path } : {}),
    };
  }
  const action: ChaosAction =
    a.code !== undefined
      ? {
          code: a.code,
          ...(a.message !== undefined ? { message: a.message } : {}),
        }
      : a.status !== undefined
        ? {
            status: a.status,
            ...(a.retry_after !== undefined ? { retry_after: a.retry_after } : {}),
          }
        : a.delay_ms !== undefined
          ? { delay_ms: a.delay_ms }
          : { reset: true };
  return {
    match,
    action,
    ...(rule.times !== undefined ? { times: rule.times } : {}),
    ...(rule.probability !== undefined ? { probability: rule.probability } : {}),
  };
}
