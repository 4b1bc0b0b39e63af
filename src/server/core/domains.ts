import { isIP } from 'node:net';
import { domainToASCII } from 'node:url';
import { parse as parseDomain } from 'tldts';
import type {
  CreateDomainRequest,
  Domain,
  DomainPurpose,
  UpdateDomainRequest,
  VerifiedDomain,
} from '../../contract/domains.js';
import { iso } from '../../lib/clock.js';
import { base62, newId } from '../../lib/ids.js';
import type { DomainRow, DomainStore } from '../store/domains.js';
import type { Deps, ProviderHosts, Secrets } from './deps.js';
import {
  DKIM_SELECTOR,
  type DkimKeyPair,
  encryptPrivateKey,
  inMemorySeedKey,
  makeDkimKey,
  signingKeyOf,
} from './rules/dkim-keys.js';
import { recordSet, toDnsRecord } from './rules/domain-records.js';
import { createDomainVerification, verdictOf } from './domain-verification.js';
import { fail, invalidField, unknownCursor } from './errors.js';
import type { Events } from './events.js';
import type { RateLimits } from './rate-limits.js';

const LABEL = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/;

/** Lowercases, converts IDN to punycode and checks a registrable hostname; throws 422 otherwise. */
export function normalizeDomainName(input: string): string {
  const raw = input.trim().replace(/\.$/, '');
  const bad = (why: string) => {
    throw invalidField('name', `"${input}" is not a domain you can send from: ${why}.`);
  };
  if (!raw) bad('it is empty');
  if (isIP(raw) || /^\[.*\]$/.test(raw)) bad('it is an IP address, not a domain name');
  const ascii = domainToASCII(raw.toLowerCase());
  if (!ascii) bad('it is not a valid hostname');
  if (ascii.length > 253) bad('it is longer than 253 characters');
  const labels = ascii.split('.');
  if (labels.length < 2) bad('it has no parent domain (a bare top-level domain)');
  if (!labels.every((l) => LABEL.test(l)))
    bad('each label must be 1–63 letters, digits or hyphens, not starting or ending with a hyphen');
  const parsed = parseDomain(ascii, { allowPrivateDomains: true });
  if (parsed.isIp) bad('it is an IP address, not a domain name');
  if (!parsed.domain || parsed.publicSuffix === ascii) bad('it is a public suffix that anyone can register under');
  return ascii;
}

/** A PATCH's MAIL FROM subdomain and tracking host, checked (422 otherwise); what it leaves out stays as it was. */
function hostsOf(d: DomainRow, input: UpdateDomainRequest): { mailFrom: string; tracking: string | null } {
  const mailFrom = input.mail_from_subdomain?.toLowerCase() ?? d.mail_from_subdomain;
  if (!LABEL.test(mailFrom)) {
    throw invalidField('mail_from_subdomain', 'must be one DNS label: letters, digits and hyphens, 1–63 characters');
  }
  let tracking = d.tracking_host;
  if (input.tracking_host !== undefined) {
    const t = domainToASCII(input.tracking_host.trim().toLowerCase().replace(/\.$/, ''));
    if (!t?.endsWith(`.${d.name}`) || !t.split('.').every((l) => LABEL.test(l))) {
      throw invalidField('tracking_host', `must be a hostname inside ${d.name}, such as links.${d.name}`);
    }
    tracking = t;
  }
  return { mailFrom, tracking };
}

function toDomain(d: DomainRow): Domain {
  const { expected, findings } = d.records;
  return {
    id: d.id,
    name: d.name,
    status: d.status,
    purpose: d.purpose,
    mail_from_subdomain: d.mail_from_subdomain,
    tracking_host: d.tracking_host,
    created_at: iso(d.created_at),
    verified_at: d.verified_at == null ? null : iso(d.verified_at),
    last_checked_at: d.last_checked_at == null ? null : iso(d.last_checked_at),
    // Findings are computed from `expected` in order, so they pair by index.
    records: expected.map((r, i) => toDnsRecord(r, findings?.[i])),
  };
}

type RecordFields =
  | 'name'
  | 'purpose'
  | 'mail_from_subdomain'
  | 'tracking_host'
  | 'ownership_token'
  | 'dkim_selector'
  | 'dkim_public_key';

export function expectedFor(d: Pick<DomainRow, RecordFields>, providerHosts: ProviderHosts) {
  return recordSet(
    {
      name: d.name,
      purpose: d.purpose,
      mailFrom: d.mail_from_subdomain,
      trackingHost: d.tracking_host,
      ownershipToken: d.ownership_token,
      dkimSelector: d.dkim_selector,
      dkimPublicKey: d.dkim_public_key,
    },
    providerHosts,
  );
}

/** A new domain's row: pending, with its record set and its DKIM key (the private key kept encrypted). */
export function newDomainRow(
  d: { workspaceId: string; name: string; purpose: DomainPurpose[] },
  { publicKey, privateKey }: DkimKeyPair,
  now: number,
  secrets: Secrets,
  providerHosts: ProviderHosts,
): DomainRow {
  const base = {
    name: d.name,
    purpose: d.purpose,
    mail_from_subdomain: 'bounces',
    tracking_host: null,
    ownership_token: base62(32),
    dkim_selector: DKIM_SELECTOR,
    dkim_public_key: publicKey.toString('base64'),
  };
  return {
    id: newId('dom'),
    workspace_id: d.workspaceId,
    status: 'pending',
    ...base,
    dkim_private_key: encryptPrivateKey(secrets, privateKey),
    records: { expected: expectedFor(base, providerHosts), findings: null },
    created_at: now,
    status_since: now,
    verified_at: null,
    last_checked_at: null,
    check_generation: 0,
    deleted_at: null,
  };
}

/** What holds up a domain's deletion, in words: active keys restricted to it, messages from it waiting ('' for none). */
function usesOf(d: DomainRow, keys: number, waiting: number): string {
  return [
    keys ? `${keys} active API key(s) may send only from ${d.name}` : '',
    waiting ? `${waiting} message(s) from it are queued or scheduled` : '',
  ]
    .filter(Boolean)
    .join('; ');
}

/** Sandbox: writes the domain's expected records (some kinds, or all) into the sandbox zone. */
export function publishRecords(
  store: DomainStore,
  id: string,
  opts: { kinds?: string[]; state?: 'visible' | 'propagating' },
) {
  const d = store.get(id) ?? fail('not_found', 'No domain has this id; `svc domains list` shows them.');
  const chosen = d.records.expected.filter((r) => !opts.kinds || opts.kinds.includes(r.kind));
  const groups = new Map<string, { host: string; type: string; values: string[] }>();
  for (const r of chosen) {
    const key = `${r.host}\u0000${r.type}`;
    const g = groups.get(key) ?? { host: r.host, type: r.type, values: [] };
    g.values.push(r.type === 'MX' ? `${r.priority} ${r.value}` : r.value);
    groups.set(key, g);
  }
  const state = opts.state ?? 'visible';
  const out = [...groups.values()].map((g) => {
    store.zonePut(g.host, g.type, g.values, state);
    return { ...g, state };
  });
  return { records: out };
}

/** A workspace's domains: added, changed and deleted here; verified by domain-verification.ts. */
export function createDomains(
  deps: Deps & {
    store: DomainStore;
    events: Events;
    rateLimits: RateLimits;
    /** How many messages from a domain are queued or scheduled (they hold up its deletion). */
    waitingFromDomain?: (domainId: string) => number;
  },
) {
  const { store, clock, config, secrets } = deps;
  const verification = createDomainVerification(deps);
  const { restartChecks } = verification;

  function found(workspaceId: string, id: string): DomainRow {
    return (
      store.byId(workspaceId, id) ??
      fail('not_found', 'No domain of this workspace has this id; `svc domains list` shows them.')
    );
  }

  return {
    toDomain,

    list(workspaceId: string, limit = 20, after?: string) {
      const page = store.list(workspaceId, limit, after) ?? unknownCursor();
      return { data: page.rows.map(toDomain), has_more: page.hasMore };
    },

    get: (workspaceId: string, id: string) => toDomain(found(workspaceId, id)),

    /**
     * POST /domains: a real 2048-bit RSA DKIM key per domain (the seeded domain of an in-memory server signs with the
     * published IN_MEMORY_SEED_DKIM_KEY); the private key never leaves the server.
     */
    async create(workspaceId: string, input: CreateDomainRequest, o: { inMemorySeed?: boolean } = {}): Promise<Domain> {
      const name = normalizeDomainName(input.name);
      const purpose = [...new Set<DomainPurpose>(input.purpose ?? ['sending'])];
      if (store.byName(workspaceId, name)) {
        fail('domain_exists', `${name} is already a domain of this workspace.`, {
          errors: [{ path: 'name', code: 'exists', message: 'already added' }],
        });
      }
      const key = o.inMemorySeed ? inMemorySeedKey() : await makeDkimKey();
      const now = clock.now();
      const row = newDomainRow({ workspaceId, name, purpose }, key, now, secrets, config.providerHosts);
      deps.db.transaction(() => {
        if (store.byName(workspaceId, name)) fail('domain_exists', `${name} is already a domain of this workspace.`);
        row.check_generation = restartChecks(row, now);
        store.insert(row);
      })();
      return toDomain(row);
    },

    /** PATCH /domains/{id}: regenerates the record set; back to pending, `verified_at` kept. */
    update(workspaceId: string, id: string, input: UpdateDomainRequest): Domain & { records_changed: true } {
      const d = found(workspaceId, id);
      const { mailFrom, tracking } = hostsOf(d, input);
      const purpose = input.purpose ? [...new Set(input.purpose)] : d.purpose;
      const now = clock.now();
      const next: DomainRow = {
        ...d,
        purpose,
        mail_from_subdomain: mailFrom,
        tracking_host: tracking,
        status: d.status === 'disabled' ? 'disabled' : 'pending',
        status_since: now,
      };
      next.records = { expected: expectedFor(next, config.providerHosts), findings: null };
      deps.db.transaction(() => {
        next.check_generation = restartChecks(next, now);
        store.update(id, {
          purpose: next.purpose,
          mail_from_subdomain: mailFrom,
          tracking_host: tracking,
          status: next.status,
          status_since: now,
          records: next.records,
          check_generation: next.check_generation,
        });
      })();
      return { ...toDomain(next), records_changed: true };
    },

    /** DELETE /domains/{id}: 422 `domain_in_use` while a key is restricted to it or mail from it waits. */
    delete(workspaceId: string, id: string): void {
      const d = found(workspaceId, id);
      const now = clock.now();
      const uses = usesOf(d, store.activeKeysRestrictedTo(d.id, now), deps.waitingFromDomain?.(d.id) ?? 0);
      if (uses) {
        fail(
          'domain_in_use',
          `${uses}. Revoke the keys (\`svc keys revoke ID\`) and cancel or wait for the messages first.`,
        );
      }
      store.softDelete(d.id, now);
    },

    dns(workspaceId: string, id: string) {
      const d = toDomain(found(workspaceId, id));
      return { domain: d.name, status: d.status, last_checked_at: d.last_checked_at, records: d.records };
    },

    /** POST /domains/{id}/verify: looks every record up now; 200 says the check ran, `verified` says how. */
    async verify(workspaceId: string, id: string): Promise<VerifiedDomain> {
      const { domain, findings } = await verification.verify(workspaceId, found(workspaceId, id));
      return { ...toDomain(domain), ...verdictOf(findings), findings };
    },

    check: verification.check,

    /** The private key and selector to DKIM-sign mail from a domain; undefined when there is no such domain. */
    signingKey(domainId: string) {
      const d = store.get(domainId);
      return d ? signingKeyOf(secrets, d) : undefined;
    },

    /** Sandbox: publishRecords. */
    publish: (id: string, opts: { kinds?: string[]; state?: 'visible' | 'propagating' }) =>
      publishRecords(store, id, opts),
  };
}
export type Domains = ReturnType<typeof createDomains>;
