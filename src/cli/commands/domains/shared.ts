import type { DnsRecord, Finding } from '../../../contract/domains.js';
import type { Context } from '../../context.js';
import { CommandError } from '../../errors.js';
import type { Column } from '../../output.js';

/** The argument of every command on one domain. */
export const DOMAIN_ARGUMENT = ['<domain>', 'the domain, by name (example.com) or id (dom_…)'] as const;

/**
 * The domain a command is given: an id (`dom_…`) as it is; a name (any case, a trailing dot ignored) found among the
 * workspace's domains, with its name for messages.
 */
export async function findDomain(ctx: Context, given: string): Promise<{ id: string; name?: string }> {
  if (/^dom_[A-Za-z0-9]+$/.test(given)) return { id: given };
  const { domainNamed } = await import('../../../client/domains.js');
  const found = await domainNamed(await ctx.client(), given);
  if (!found) {
    throw new CommandError(
      `this workspace has no domain named ${given}`,
      `\`svc domains list\` shows its domains; \`svc domains add ${given}\` adds it`,
    );
  }
  return found;
}

/** The records to publish. */
export const recordColumns: Column<DnsRecord>[] = [
  { header: 'KIND', value: (r) => r.kind },
  { header: 'TYPE', value: (r) => r.type },
  { header: 'HOST', value: (r) => r.host },
  { header: 'VALUE', value: (r) => r.value },
  { header: 'PRIORITY', value: (r) => r.priority },
  { header: 'REQUIRED', value: (r) => (r.required ? 'yes' : 'no') },
];

/** The records with what the last check saw. */
export const recordStatusColumns: Column<DnsRecord>[] = [
  ...recordColumns,
  { header: 'STATUS', value: (r) => r.status },
  { header: 'OBSERVED', value: (r) => r.observed_value },
];

export const findingColumns: Column<Finding>[] = [
  { header: 'KIND', value: (f) => f.kind },
  { header: 'TYPE', value: (f) => f.type },
  { header: 'HOST', value: (f) => f.host },
  { header: 'REQUIRED', value: (f) => (f.required ? 'yes' : 'no') },
  { header: 'STATUS', value: (f) => f.status },
  { header: 'DETAIL', value: (f) => f.detail },
];

/** On a local server (its answers say it is one) nothing publishes a domain's records but its sandbox zone. */
export function sandboxZoneNote(id: string): string {
  return `this is a local sandbox: nothing is in its DNS zone until you run \`svc sandbox dns publish ${id}\``;
}
