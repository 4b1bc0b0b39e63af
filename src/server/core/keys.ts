import ipaddr from 'ipaddr.js';
import { isIP } from 'node:net';
import {
  KEY_PREFIX_LENGTH,
  type ApiKey,
  type CreateApiKeyRequest,
  type CreatedApiKey,
  type Scope,
} from '../../contract/keys.js';
import { MINUTE, iso } from '../../lib/clock.js';
import { KEY_CHARS } from '../../contract/ids.js';
import { base62, newId } from '../../lib/ids.js';
import type { ApiKeyRecord, KeyStore } from '../store/keys.js';
import { keyedHash, safeEqual, type Deps } from './deps.js';
import { ServiceError, fail, unknownCursor } from './errors.js';

export interface KeyPrincipal {
  kind: 'key';
  keyId: string;
  workspaceId: string;
  mode: 'live' | 'test';
  scopes: Scope[];
  domainId: string | null;
}

function toApiKey(r: ApiKeyRecord): ApiKey {
  return {
    id: r.id,
    name: r.name,
    prefix: r.prefix,
    reveal: `${r.prefix}…${r.last4}`,
    mode: r.mode,
    scopes: r.scopes as Scope[],
    domain_id: r.domain_id,
    ip_allowlist: r.ip_allowlist,
    created_at: iso(r.created_at),
    last_used_at: r.last_used_at == null ? null : iso(r.last_used_at),
    expires_at: r.expires_at == null ? null : iso(r.expires_at),
    revoked_at: r.revoked_at == null ? null : iso(r.revoked_at),
    revoked: r.revoked_at != null,
  };
}

/** Parses an address or CIDR; null when it is neither. IPv4 addresses are kept as IPv4 for matching. */
export function parseCidr(entry: string): [ipaddr.IPv4 | ipaddr.IPv6, number] | null {
  try {
    // Only dotted-quad IPv4 or IPv6 text: ipaddr.js alone would also take legacy forms, where `010.0.0.0/8` is 8.0.0.0/8.
    if (!isIP(entry.split('/')[0] ?? '')) return null;
    if (entry.includes('/')) return ipaddr.parseCIDR(entry);
    if (!ipaddr.isValid(entry)) return null;
    const a = ipaddr.parse(entry);
    return [a, a.kind() === 'ipv4' ? 32 : 128];
  } catch {
    return null;
  }
}

/** True when `ip` (v4, v6 or v4-mapped v6) falls in one of the allowlist entries. */
export function ipAllowed(ip: string, allowlist: string[]): boolean {
  if (allowlist.length === 0) return true;
  let addr: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    addr = ipaddr.process(ip);
  } catch {
    return false;
  }
  return allowlist.some((entry) => {
    const range = parseCidr(entry);
    if (!range) return false;
    let [net, bits] = range;
    if (net.kind() === 'ipv6' && (net as ipaddr.IPv6).isIPv4MappedAddress() && bits >= 96) {
      net = (net as ipaddr.IPv6).toIPv4Address();
      bits -= 96;
    }
    return addr.kind() === net.kind() && addr.match(net, bits);
  });
}

export function createKeys(deps: Deps & { store: KeyStore }) {
  const { store, clock, secrets } = deps;

  /** The key's row when the key is known, not revoked and not expired. */
  const usable = (presented: string, now: number): ApiKeyRecord | undefined => {
    const h = keyedHash(secrets, presented);
    const row = store.byHash(h);
    if (
      !row ||
      !safeEqual(row.key_hash, h) ||
      row.revoked_at != null ||
      (row.expires_at != null && row.expires_at <= now)
    )
      return undefined;
    return row;
  };

  return {
    /** POST /api-keys: the full key is in this response only; the store keeps a keyed hash. */
    create(workspaceId: string, userId: string | null, input: CreateApiKeyRequest): CreatedApiKey {
      const now = clock.now();
      const errors: { path: string; code: string; message: string }[] = [];
      if (input.domain_id !== undefined && !store.domainInWorkspace(workspaceId, input.domain_id)) {
        errors.push({
          path: 'domain_id',
          code: 'not_found',
          message: 'names no domain of this workspace; `svc domains list` shows them',
        });
      }
      (input.ip_allowlist ?? []).forEach((entry, i) => {
        if (!parseCidr(entry)) {
          errors.push({
            path: `ip_allowlist.${i}`,
            code: 'invalid',
            message: `"${entry}" is not an IPv4/IPv6 address or CIDR`,
          });
        }
      });
      const expiresAt = input.expires_at ? Date.parse(input.expires_at) : null;
      if (expiresAt != null && expiresAt <= now) {
        errors.push({ path: 'expires_at', code: 'in_past', message: 'must be in the future' });
      }
      if (errors.length)
        throw new ServiceError('validation_failed', errors.map((e) => `${e.path}: ${e.message}`).join('; '), {
          errors,
        });

      const mode = input.mode ?? 'test';
      const key = `svc_${mode}_${base62(KEY_CHARS)}`;
      const row: ApiKeyRecord = {
        id: newId('key'),
        workspace_id: workspaceId,
        name: input.name,
        prefix: key.slice(0, KEY_PREFIX_LENGTH),
        last4: key.slice(-4),
        key_hash: keyedHash(secrets, key),
        mode,
        scopes: [...new Set(input.scopes)],
        domain_id: input.domain_id ?? null,
        ip_allowlist: input.ip_allowlist ?? [],
        created_by: userId,
        created_at: now,
        last_used_at: null,
        expires_at: expiresAt,
        revoked_at: null,
      };
      store.insert(row);
      return { ...toApiKey(row), key };
    },

    list(workspaceId: string, limit = 20, after?: string) {
      const page = store.list(workspaceId, limit, after) ?? unknownCursor();
      return { data: page.rows.map(toApiKey), has_more: page.hasMore };
    },

    /** DELETE /api-keys/{id}: immediate; already revoked → still 204; another tenant's → 404. */
    revoke(workspaceId: string, id: string): void {
      if (!store.byId(workspaceId, id))
        fail('not_found', 'No API key of this workspace has this id; `svc keys list` shows them.');
      store.revoke(workspaceId, id, clock.now());
    },

    /** Authenticates a presented key: unknown, revoked or expired → 401 `invalid_api_key`. */
    authenticate(presented: string): KeyPrincipal & { ipAllowlist: string[] } {
      const now = clock.now();
      const row = usable(presented, now);
      if (!row) {
        throw new ServiceError(
          'invalid_api_key',
          'The API key is unknown, revoked or expired; create a new one with `svc keys create`.',
        );
      }
      // last_used_at is written at most once a minute per key: skip the write when the row already says so.
      if (row.last_used_at == null || row.last_used_at <= now - MINUTE) store.touch(row.id, now, MINUTE);
      return {
        kind: 'key',
        keyId: row.id,
        workspaceId: row.workspace_id,
        mode: row.mode,
        scopes: row.scopes as Scope[],
        domainId: row.domain_id,
        ipAllowlist: row.ip_allowlist,
      };
    },

    /** Whether a key would be accepted now, without counting this as a use (the ready line's seed). */
    active: (presented: string): boolean => usable(presented, clock.now()) !== undefined,

    /**
     * The workspace of a key that would be accepted now, else null; not counted as a use. The sink files mail whose
     * client logged in with a key under its workspace.
     */
    workspaceOf: (presented: string): string | null =>
      presented.startsWith('svc_') ? (usable(presented, clock.now())?.workspace_id ?? null) : null,

    toApiKey,
  };
}
export type Keys = ReturnType<typeof createKeys>;
