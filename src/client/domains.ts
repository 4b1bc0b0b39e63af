// The credential's workspace's domains as more than one command reads them: every page of GET /domains, and one domain
// found by its name (svc trigger --domain, svc mcp's publish_domain_records).
import type { Domain } from '../contract/domains.js';
import type { Client, Reply } from './index.js';

type DomainPage = { data: Domain[]; has_more: boolean };

/**
 * The workspace's domains, newest first, page after page until `take` says one is found (then that one) or they end
 * (then undefined); `seen` is shown each answer as it comes (to check who answered).
 */
async function walkDomains(
  client: Client,
  take: (d: Domain) => boolean,
  seen?: (reply: Reply<DomainPage>) => void,
): Promise<Domain | undefined> {
  for (let after: string | undefined; ; ) {
    const reply = await client.call('listDomains', { query: { limit: 100, after } });
    seen?.(reply);
    const found = reply.body.data.find(take);
    if (found || !reply.body.has_more) return found;
    after = reply.body.data.at(-1)!.id;
  }
}

/** Every domain of the workspace, newest first. */
export async function allDomains(client: Client, seen?: (reply: Reply<DomainPage>) => void): Promise<Domain[]> {
  const all: Domain[] = [];
  await walkDomains(
    client,
    (d) => {
      all.push(d);
      return false;
    },
    seen,
  );
  return all;
}

/** The workspace's domain named `name` (any case, a trailing dot ignored), or undefined. */
export function domainNamed(
  client: Client,
  name: string,
  seen?: (reply: Reply<DomainPage>) => void,
): Promise<Domain | undefined> {
  const wanted = name.toLowerCase().replace(/\.$/, '');
  return walkDomains(client, (d) => d.name.toLowerCase() === wanted, seen);
}
