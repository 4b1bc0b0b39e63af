// A domain's background DNS check (`domain_check` jobs): the check decides when the next one is due, if ever.
import type { Domains } from '../core/domains.js';
import type { JobPayloads } from '../core/rules/job-kinds.js';
import type { JobHandler } from '../core/scheduler.js';

export function domainCheckWorker(domains: Domains): JobHandler<JobPayloads['domain_check']> {
  return async (p) => {
    const next = await domains.check(p.domain_id, p.generation);
    return next == null ? undefined : { retryAt: next };
  };
}
