import { createCipheriv, createDecipheriv, createPublicKey, generateKeyPair, hkdfSync, randomBytes } from 'node:crypto';
import { isIP } from 'node:net';
import { domainToASCII } from 'node:url';
import { promisify } from 'node:util';
import { parse as parseDomain } from 'tldts';
import type {
  CreateDomainRequest,
  Domain,
  DomainPurpose,
  Finding,
  UpdateDomainRequest,
  VerifiedDomain,
} from '../../contract/domains.js';
import { DAY, HOUR, MINUTE, iso } from '../../lib/clock.js';
import { base62, newId } from '../../lib/ids.js';
import type { DomainRow, DomainStore } from '../store/domains.js';
import type { Deps, Secrets } from './deps.js';
import { recordSet, judge, toDnsRecord, type ExpectedRecord } from './domain-records.js';
import { fail, invalidField, unknownCursor } from './errors.js';
import type { Events } from './events.js';
import { IN_MEMORY_SEED_DKIM_KEY } from './seed-dkim-key.js';
import type { RateLimits } from './rate-limits.js';

const generateKeyPairAsync = promisify(generateKeyPair);

type DkimKeyPair = { publicKey: Buffer; privateKey: string };
const makeDkimKey = () =>
  generateKeyPairAsync('rsa', {
    modulusLength: 2048,
    publicKeyEncoding: { type: 'spki', format: 'der' },
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
  }) as unknown as Promise<DkimKeyPair>;

/** The seeded domain of an in-memory server signs with a key published with the package (seed-dkim-key.ts). */
function inMemorySeedKey(): DkimKeyPair {
  const publicKey = createPublicKey(IN_MEMORY_SEED_DKIM_KEY).export({ type: 'spki', format: 'der' });
  return { publicKey, privateKey: IN_MEMORY_SEED_DKIM_KEY };
}

export const DKIM_SELECTOR = 'svc1';
const FAIL_AFTER = 72 * HOUR;
/** Re-checks of a pending (or degraded) domain, as offsets from when it entered that state. */
export const PENDING_CHECK_OFFSETS = [
  5 * MINUTE,
  15 * MINUTE,
  HOUR,
  ...Array.from({ length: 71 }, (_, i) => (i + 2) * HOUR),
];
const VERIFIED_CHECK_INTERVAL = DAY;

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

/** Private DKIM keys are kept encrypted (AES-256-GCM under a key derived from the server secret). */
function dkimCipherKey(secrets: Secrets): Buffer {
  return Buffer.from(hkdfSync('sha256', secrets.hashKey, Buffer.alloc(0), 'svc dkim private keys', 32));
}
export function encryptPrivateKey(secrets: Secrets, pem: string): string {
  const iv = randomBytes(12);
  const c = createCipheriv('aes-256-gcm', dkimCipherKey(secrets), iv);
  const ct = Buffer.concat([c.update(pem, 'utf8'), c.final()]);
  return ['v1', iv.toString('base64'), c.getAuthTag().toString('base64'), ct.toString('base64')].join(':');
}
export function decryptPrivateKey(secrets: Secrets, stored: string): string {
  const [, iv, tag, ct] = stored.split(':');
  const d = createDecipheriv('aes-256-gcm', dkimCipherKey(secrets), Buffer.from(iv!, 'base64'));
  d.setAuthTag(Buffer.from(tag!, 'base64'));
  return Buffer.concat([d.update(Buffer.from(ct!, 'base64')), d.final()]).toString('utf8');
}

export function createDomains(
  deps: Deps & {
    store: DomainStore;
    events: Events;
    rateLimits: RateLimits;
    /** How many messages from a domain are queued or scheduled (they hold up its deletion). */
    waitingFromDomain?: (domainId: string) => number;
  },
) {
  const { store, clock, config, secrets, events, rateLimits, jobs, resolver } = deps;

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

  function expectedFor(
    d: Pick<
      DomainRow,
      | 'name'
      | 'purpose'
      | 'mail_from_subdomain'
      | 'tracking_host'
      | 'ownership_token'
      | 'dkim_selector'
      | 'dkim_public_key'
    >,
  ) {
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
      config.providerHosts,
    );
  }

  function found(workspaceId: string, id: string): DomainRow {
    return (
      store.byId(workspaceId, id) ??
      fail('not_found', 'No domain of this workspace has this id; `svc domains list` shows them.')
    );
  }

  /** Schedules the next background check of a domain according to its status (nothing for failed/disabled). */
  function nextCheckAt(d: Pick<DomainRow, 'status' | 'status_since'>, now: number): number | null {
    if (d.status === 'verified') return now + VERIFIED_CHECK_INTERVAL;
    if (d.status === 'pending' || d.status === 'degraded') {
      return PENDING_CHECK_OFFSETS.map((o) => d.status_since + o).find((t) => t > now) ?? null;
    }
    return null;
  }

  /** Starts a new chain of background checks (the old chain's jobs see a stale generation and stop). */
  function restartChecks(d: DomainRow, now: number): number {
    const generation = d.check_generation + 1;
    const at = nextCheckAt(d, now);
    if (at != null) jobs.enqueue('domain_check', { domain_id: d.id, generation }, at);
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
      const { publicKey, privateKey } = o.inMemorySeed ? inMemorySeedKey() : await makeDkimKey();
      const now = clock.now();
      const base = {
        name,
        purpose,
        mail_from_subdomain: 'bounces',
        tracking_host: null,
        ownership_token: base62(32),
        dkim_selector: DKIM_SELECTOR,
        dkim_public_key: (publicKey as Buffer).toString('base64'),
      };
      const row: DomainRow = {
        id: newId('dom'),
        workspace_id: workspaceId,
        status: 'pending',
        ...base,
        dkim_private_key: encryptPrivateKey(secrets, privateKey as string),
        records: { expected: expectedFor(base), findings: null },
        created_at: now,
        status_since: now,
        verified_at: null,
        last_checked_at: null,
        check_generation: 0,
        deleted_at: null,
      };
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
      const mailFrom = input.mail_from_subdomain?.toLowerCase() ?? d.mail_from_subdomain;
      if (!LABEL.test(mailFrom)) {
        throw invalidField(
          'mail_from_subdomain',
          'must be one DNS label: letters, digits and hyphens, 1–63 characters',
        );
      }
      let tracking = d.tracking_host;
      if (input.tracking_host !== undefined) {
        const t = domainToASCII(input.tracking_host.trim().toLowerCase().replace(/\.$/, ''));
        if (!t?.endsWith(`.${d.name}`) || !t.split('.').every((l) => LABEL.test(l))) {
          throw invalidField('tracking_host', `must be a hostname inside ${d.name}, such as links.${d.name}`);
        }
        tracking = t;
      }
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
      next.records = { expected: expectedFor(next), findings: null };
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
      const keys = store.activeKeysRestrictedTo(d.id, now);
      const waiting = deps.waitingFromDomain?.(d.id) ?? 0;
      if (keys || waiting) {
        fail(
          'domain_in_use',
          `${[
            keys ? `${keys} active API key(s) may send only from ${d.name}` : '',
            waiting ? `${waiting} message(s) from it are queued or scheduled` : '',
          ]
            .filter(Boolean)
            .join('; ')}. Revoke the keys (\`svc keys revoke ID\`) and cancel or wait for the messages first.`,
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
      const d = found(workspaceId, id);
      const bucket = `verify:${d.id}`;
      rateLimits.check({ bucket, limit: 6, windowMs: MINUTE });
      rateLimits.hit(bucket);
      const findings = await lookupAll(d.records.expected);
      const fresh = store.byId(workspaceId, id) ?? fail('not_found', 'The domain was deleted during the check.');
      const next = applyCheck(fresh, findings, clock.now());
      return summarize(next, findings);
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

    /** The private key and selector to DKIM-sign mail from a domain; undefined when there is no such domain. */
    signingKey(domainId: string) {
      const d = store.get(domainId);
      if (!d) return undefined;
      return {
        domainName: d.name,
        keySelector: d.dkim_selector,
        privateKey: decryptPrivateKey(secrets, d.dkim_private_key),
      };
    },

    /** Sandbox: writes the domain's expected records (some kinds, or all) into the sandbox zone. */
    publish(id: string, opts: { kinds?: string[]; state?: 'visible' | 'propagating' }) {
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
    },
  };

  function summarize(d: DomainRow, findings: Finding[]): VerifiedDomain {
    const required = findings.filter((f) => f.required);
    const verified = required.every((f) => f.status === 'ok');
    const propagating =
      !required.some((f) => f.status === 'missing' || f.status === 'mismatch') &&
      required.some((f) => f.status === 'propagating');
    return { ...toDomain(d), verified, propagating, findings };
  }
}
export type Domains = ReturnType<typeof createDomains>;
