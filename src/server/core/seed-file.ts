// A seed file (`svc serve --seed FILE`, `startSandbox({ seed })`) applied on every start: what it declares made to exist,
// in one transaction, so that a restart with the same file changes nothing and a changed file updates what it names.
// What the file no longer names is left alone. Each thing is found again by what a person would call it:
//
//   users          by email             password, confirmed, name updated
//   workspaces     by name and owner    (another owner: another workspace)
//   domains        by workspace, name   verified: true → verified (records published in the sandbox zone);
//                                       verified: false → pending again; left out → a new one pending, else as it is;
//                                       dkim_private_key → that key (left out: one made on the first start, kept)
//   api_keys       by the value's hash  workspace, name, scopes, domain updated; revoked or expired → working again
//   webhook_endpoints by workspace, URL events, secret updated (left out: one made on the first start, kept)
//   suppressions   by workspace, address  added (its reason kept as first given)
//
// Nothing here is an event: a seeded domain does not send `domain.verified` to a seeded endpoint.
import { KEY_PREFIX_LENGTH, SCOPES } from '../../contract/keys.js';
import type { SeedFile } from '../../contract/seed-file.js';
import { newWebhookSecret } from '../../contract/signature.js';
import { newId } from '../../lib/ids.js';
import type { AccountStore, UserRow } from '../store/accounts.js';
import type { DomainRow, DomainStore } from '../store/domains.js';
import type { KeyStore } from '../store/keys.js';
import type { WebhookStore } from '../store/webhooks.js';
import { keyedHash, type Deps } from './deps.js';
import { createDomainVerification } from './domain-verification.js';
import { expectedFor, newDomainRow, normalizeDomainName, publishRecords } from './domains.js';
import type { Events } from './events.js';
import type { RateLimits } from './rate-limits.js';
import { type DkimKeyPair, dkimKeyFromPem, makeDkimKey } from './rules/dkim-keys.js';
import { hashPassword, verifyPassword } from './rules/passwords.js';
import { createWorkspaces } from './workspaces.js';

/** What one start did with the seed: how many things it made, changed or found as declared; the workspaces' ids. */
export interface SeedApplied {
  created: number;
  updated: number;
  unchanged: number;
  /** Each declared workspace's id, by name. */
  workspaces: Record<string, string>;
  /** Each declared user's id, by email as the file gives it. */
  users: Record<string, string>;
}

export function createSeedFile(
  deps: Deps & {
    accounts: AccountStore;
    keys: KeyStore;
    domains: DomainStore;
    webhooks: WebhookStore;
    /** The webhooks service's cache of endpoints, read again once the seed's are written. */
    endpointsChanged: () => void;
    events: Events;
    rateLimits: RateLimits;
    suppress: (workspaceId: string, email: string, reason: string, at: number) => void;
    isSuppressed: (workspaceId: string, email: string) => boolean;
  },
) {
  const { clock, secrets, config } = deps;
  const workspaces = createWorkspaces({ store: deps.accounts, clock });
  const { restartChecks } = createDomainVerification({ ...deps, store: deps.domains });

  return {
    /**
     * Applies a checked seed. `sandboxZone`: domains are looked up in the sandbox zone, where a verified one's records
     * are published (with `--dns system` a verified domain is only marked so, and its daily check may find otherwise).
     */
    async apply(seed: SeedFile, o: { sandboxZone: boolean }): Promise<SeedApplied> {
      const count = { created: 0, updated: 0, unchanged: 0 };
      const tally = (what: 'created' | 'updated' | 'unchanged') => count[what]++;

      // What takes time is done first, outside the transaction: passwords hashed (only those that changed), DKIM keys
      // made for domains that have none yet.
      const passwords = new Map<string, string>();
      for (const u of seed.users ?? []) {
        const row = deps.accounts.userByEmail(u.email);
        if (!row || !(await verifyPassword(row.password_hash, u.password)))
          passwords.set(u.email.toLowerCase(), await hashPassword(u.password));
      }
      const owners = new Map<string, string>(); // workspace name → owner email, as the file decides it
      for (const w of seed.workspaces ?? []) owners.set(w.name, (w.owner ?? seed.users![0]!.email).toLowerCase());
      const soleWorkspace = seed.workspaces?.length === 1 ? seed.workspaces[0]!.name : undefined;
      const wsName = (ref: string | undefined) => (ref ?? soleWorkspace)!;
      const givenKeys = new Map<string, DkimKeyPair>();
      const madeKeys = new Map<string, DkimKeyPair>();
      for (const [i, d] of (seed.domains ?? []).entries()) {
        if (d.dkim_private_key) givenKeys.set(String(i), dkimKeyFromPem(d.dkim_private_key));
        else if (!existingDomain(wsName(d.workspace), d.name)) madeKeys.set(String(i), await makeDkimKey());
      }

      /** The domain a workspace of the file already has, found before the transaction (the key it needs). */
      function existingDomain(workspace: string, name: string): DomainRow | undefined {
        const owner = deps.accounts.userByEmail(owners.get(workspace)!);
        const ws = owner && ownedWorkspace(owner, workspace);
        return ws ? deps.domains.byName(ws, normalizeDomainName(name)) : undefined;
      }
      function ownedWorkspace(owner: UserRow, name: string): string | undefined {
        return deps.accounts.workspacesOf(owner.id).find((w) => w.name === name && w.role === 'owner')?.id;
      }

      let endpointsWritten = false;
      const applied = deps.db.transaction((): SeedApplied => {
        const now = clock.now();
        const users: Record<string, string> = {};
        const userIds = new Map<string, string>();
        for (const u of seed.users ?? []) {
          const hash = passwords.get(u.email.toLowerCase());
          const verifiedAt = u.confirmed === false ? null : now;
          const row = deps.accounts.userByEmail(u.email);
          if (!row) {
            const id = newId('usr');
            deps.accounts.insertUser({
              id,
              email: u.email,
              name: u.name ?? null,
              locale: null,
              password_hash: hash!,
              email_verified_at: verifiedAt,
              created_at: now,
            });
            userIds.set(u.email.toLowerCase(), id);
            tally('created');
          } else {
            const fields: Partial<UserRow> = {};
            if (hash) fields.password_hash = hash;
            if ((row.email_verified_at == null) !== (verifiedAt == null)) fields.email_verified_at = verifiedAt;
            if (u.name !== undefined && u.name !== row.name) fields.name = u.name;
            deps.accounts.updateUser(row.id, fields);
            userIds.set(u.email.toLowerCase(), row.id);
            tally(Object.keys(fields).length ? 'updated' : 'unchanged');
          }
          users[u.email] = userIds.get(u.email.toLowerCase())!;
        }

        const wsIds: Record<string, string> = {};
        for (const w of seed.workspaces ?? []) {
          const ownerId = userIds.get(owners.get(w.name)!)!;
          const found = ownedWorkspace(deps.accounts.userById(ownerId)!, w.name);
          if (found) {
            wsIds[w.name] = found;
            tally('unchanged');
          } else {
            wsIds[w.name] = workspaces.create(ownerId, w.name, 'owner').id;
            tally('created');
          }
        }
        const ownerOf = (workspace: string) => userIds.get(owners.get(workspace)!)!;

        const domainIds = new Map<string, string>(); // workspace id + name → domain id
        for (const [i, d] of (seed.domains ?? []).entries()) {
          const wsId = wsIds[wsName(d.workspace)]!;
          const name = normalizeDomainName(d.name);
          let row = deps.domains.byName(wsId, name);
          let changed = false;
          const created = !row;
          if (!row) {
            row = newDomainRow(
              { workspaceId: wsId, name, purpose: ['sending'] },
              givenKeys.get(String(i)) ?? madeKeys.get(String(i))!,
              now,
              secrets,
              config.providerHosts,
            );
            row.check_generation = restartChecks(row, now);
            deps.domains.insert(row);
          } else {
            const given = givenKeys.get(String(i));
            const publicKey = given?.publicKey.toString('base64');
            if (given && publicKey !== row.dkim_public_key) {
              const fresh = newDomainRow(
                { workspaceId: wsId, name, purpose: row.purpose },
                given,
                now,
                secrets,
                config.providerHosts,
              );
              const next = { ...row, dkim_public_key: fresh.dkim_public_key, dkim_private_key: fresh.dkim_private_key };
              next.records = { expected: expectedFor(next, config.providerHosts), findings: null };
              deps.domains.update(row.id, {
                dkim_public_key: next.dkim_public_key,
                dkim_private_key: next.dkim_private_key,
                records: next.records,
              });
              row = next;
              changed = true;
            }
          }
          if (d.verified === true && (row.status !== 'verified' || changed)) {
            if (o.sandboxZone) publishRecords(deps.domains, row.id, {});
            if (row.status !== 'verified') {
              const next: DomainRow = {
                ...row,
                status: 'verified',
                status_since: now,
                verified_at: row.verified_at ?? now,
              };
              deps.domains.update(row.id, {
                status: 'verified',
                status_since: now,
                verified_at: next.verified_at,
                check_generation: restartChecks(next, now),
              });
              changed = true;
            }
          } else if (d.verified === false && row.status === 'verified') {
            const next: DomainRow = { ...row, status: 'pending', status_since: now };
            if (o.sandboxZone) for (const r of row.records.expected) deps.domains.zoneDelete(r.host, r.type);
            deps.domains.update(row.id, {
              status: 'pending',
              status_since: now,
              check_generation: restartChecks(next, now),
            });
            changed = true;
          }
          domainIds.set(`${wsId}\u0000${d.name.toLowerCase()}`, row.id);
          tally(created ? 'created' : changed ? 'updated' : 'unchanged');
        }

        for (const k of seed.api_keys ?? []) {
          const wsId = wsIds[wsName(k.workspace)]!;
          const wanted = {
            workspace_id: wsId,
            name: k.name ?? 'Seeded key',
            scopes: [...new Set(k.scopes ?? SCOPES)],
            domain_id: k.domain === undefined ? null : domainIds.get(`${wsId}\u0000${k.domain.toLowerCase()}`)!,
            created_by: ownerOf(wsName(k.workspace)),
          };
          const hash = keyedHash(secrets, k.value);
          const row = deps.keys.byHash(hash);
          if (!row) {
            deps.keys.insert({
              id: newId('key'),
              ...wanted,
              prefix: k.value.slice(0, KEY_PREFIX_LENGTH),
              last4: k.value.slice(-4),
              key_hash: hash,
              mode: k.value.startsWith('svc_live_') ? 'live' : 'test',
              ip_allowlist: [],
              created_at: now,
              last_used_at: null,
              expires_at: null,
              revoked_at: null,
            });
            tally('created');
          } else {
            const same =
              row.workspace_id === wanted.workspace_id &&
              row.name === wanted.name &&
              row.domain_id === wanted.domain_id &&
              row.revoked_at == null &&
              row.expires_at == null &&
              JSON.stringify(row.scopes) === JSON.stringify(wanted.scopes);
            if (!same) deps.keys.reseed(row.id, wanted);
            tally(same ? 'unchanged' : 'updated');
          }
        }

        for (const e of seed.webhook_endpoints ?? []) {
          const wsId = wsIds[wsName(e.workspace)]!;
          const events = e.events ? [...new Set(e.events)] : null;
          const row = deps.webhooks.endpoints(wsId).find((x) => x.url === e.url);
          if (!row) {
            deps.webhooks.insertEndpoint({
              id: newId('whk'),
              workspace_id: wsId,
              url: e.url,
              events,
              secret: e.secret ?? newWebhookSecret(),
              previous_secret: null,
              previous_secret_expires_at: null,
              status: 'active',
              created_at: now,
              disabled_at: null,
              last_success_at: null,
            });
            endpointsWritten = true;
            tally('created');
          } else {
            const secret = e.secret ?? row.secret;
            const same = secret === row.secret && JSON.stringify(events) === JSON.stringify(row.events);
            if (!same) deps.webhooks.reseedEndpoint(row.id, { events, secret });
            if (!same) endpointsWritten = true;
            tally(same ? 'unchanged' : 'updated');
          }
        }

        for (const s of seed.suppressions ?? []) {
          const wsId = wsIds[wsName(s.workspace)]!;
          if (deps.isSuppressed(wsId, s.address)) tally('unchanged');
          else {
            deps.suppress(wsId, s.address, s.reason ?? 'manual', now);
            tally('created');
          }
        }
        return { ...count, workspaces: wsIds, users };
      })();
      // The demo account's domain.verified event may have read the endpoints into the cache before these were written.
      if (endpointsWritten) deps.endpointsChanged();
      return applied;
    },
  };
}
export type SeedFileService = ReturnType<typeof createSeedFile>;
