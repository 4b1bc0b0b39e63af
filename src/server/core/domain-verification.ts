import type { Finding } from '../../contract/domains.js';
import { DAY, HOUR, MINUTE } from '../../lib/clock.js';
import type { DomainRow, DomainStore } from '../store/domains.js';
import type { Deps } from './deps.js';
import { judge, type ExpectedRecord } from './rules/domain-records.js';
import { fail } from './errors.js';
import type { Events } from './events.js';
import type { RateLimits } from './rate-limits.js';

const FAIL_AFTER = 72 * HOUR;
/** Re-checks of a pending (or degraded) domain, as offsets from when it entered that state. */
export const PENDING_CHECK_OFFSETS = [
  5 * MINUTE,
  15 * MINUTE,
  HOUR,
  ...Array.from({ length: 71 }, (_, i) => (i + 2) * HOUR),
];
const VERIFIED_CHECK_INTERVAL = DAY;

/** Schedules the next background check of a domain according to its status (nothing for failed/disabled). */
function nextCheckAt(d: Pick<DomainRow, 'status' | 'status_since'>, now: number): number | null {
  if (d.status === 'verified') return now + VERIFIED_CHECK_INTERVAL;
  if (d.status === 'pending' || d.status === 'degraded') {
    return PENDING_CHECK_OFFSETS.map((o) => d.status_since + o).find((t) => t > now) ?? null;
  }
  return null;
}

/** What a check's findings say: every required record ok, or none wrong and some still propagating. */
export function verdictOf(findings: Finding[]): { verified: boolean; propagating: boolean } {
  const required = findings.filter((f) => f.required);
  const verified = required.every((f) => f.status === 'ok');
  const propagating =
    !required.some((f) => f.status === 'missing' || f.status === 'mismatch') &&
    required.some((f) => f.status === 'propagating');
  return { verified, propagating };
}

/**
 * A domain's verification: its records looked up (now, or by the background check's chain of jobs) and the status
 * machine of docs/api.md#domains applied to what was found.
 */
export function createDomainVerification(
  deps: Pick<Deps, 'db' | 'clock' | 'jobs' | 'resolver'> & {
    store: DomainStore;
    events: Events;
    rateLimits: RateLimits;
  },
) {
  const { store, clock, events, rateLimits, jobs, resolver } = deps;

  /** Starts a new chain of background checks (the old chain's jobs see a stale generation and stop). */
  function restartChecks(d: DomainRow, now: number): number {
    const generation = d.check_generation + 1;
    const at = nextCheckAt(d, now);
    if (at != null) jobs.enqueue('domain_check', { domain_id: d.id, generation }, { runAt: at });
    return generation;
  }

  async function lookupAll(expected: ExpectedRecord[]): Promise<Finding[]> {
    return Promise.all(expected.map(async (r) => judge(r, await resolver.lookup(r.host, r.type))));
  }

  /** Applies a check's findings: the status machine of docs/api.md#domains, events in the same transaction. */
  function applyCheck(d: DomainRow, findings: Finding[], now: number): DomainRow {
    const required = findings.filter((f) => f.required);
    const verified = required.every((f) => f.status === 'ok');
    const broken = required.some((f) => f.status === 'missing' || f.status === 'mismatch');
    let status = d.status;
    if (d.status !== 'disabled') {
      if (verified) status = 'verified';
      else if (d.status === 'verified' && broken) status = 'degraded';
      else if ((d.status === 'pending' || d.status === 'degraded') && now - d.status_since >= FAIL_AFTER)
        status = 'failed';
    }
    const changed = status !== d.status;
    const next: DomainRow = {
      ...d,
      status,
      status_since: changed ? now : d.status_since,
      last_checked_at: now,
      verified_at: d.verified_at ?? (verified ? now : null),
      records: { ...d.records, findings },
    };
    deps.db.transaction(() => {
      if (changed) next.check_generation = restartChecks(next, now);
      store.update(d.id, {
        status: next.status,
        status_since: next.status_since,
        last_checked_at: now,
        verified_at: next.verified_at,
        records: next.records,
        check_generation: next.check_generation,
      });
      if (changed && (status === 'verified' || status === 'degraded')) {
        events.emit(d.workspace_id, `domain.${status}`, { domain_id: d.id, name: d.name, status, findings });
      }
    })();
    return next;
  }

  return {
    restartChecks,

    /** POST /domains/{id}/verify's check of a workspace's domain: every record looked up now (rate limited). */
    async verify(workspaceId: string, d: DomainRow): Promise<{ domain: DomainRow; findings: Finding[] }> {
      const bucket = `verify:${d.id}`;
      rateLimits.check({ bucket, limit: 6, windowMs: MINUTE });
      rateLimits.hit(bucket);
      const findings = await lookupAll(d.records.expected);
      const fresh = store.byId(workspaceId, d.id) ?? fail('not_found', 'The domain was deleted during the check.');
      return { domain: applyCheck(fresh, findings, clock.now()), findings };
    },

    /** The background check (job `domain_check`); returns when to run again, or null to stop. */
    async check(domainId: string, generation: number): Promise<number | null> {
      const d = store.get(domainId);
      if (!d || d.check_generation !== generation) return null;
      const findings = await lookupAll(d.records.expected);
      const fresh = store.get(domainId);
      if (!fresh || fresh.check_generation !== generation) return null;
      const next = applyCheck(fresh, findings, clock.now());
      if (next.check_generation !== generation) return null; // the status changed: a new chain took over
      return nextCheckAt(next, clock.now());
    },
  };
}
