// A domain's background DNS check (`domain_check` jobs): the check decides when the next one is due, if ever.
import type { Domains } from '../core/domains.js';
import type { JobHandler } from './scheduler.js';

export function domainCheckWorker(domains: Domains): JobHandler {
  return async (p: { domain_id: string; generation: number }) => {
    const next = await domains.check(p.domain_id, p.generation);
    return next == null ? undefined : { retryAt: next };
  };
}
