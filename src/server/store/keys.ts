import type { Db } from './db.js';
import { newestFirst } from './page.js';

interface ApiKeyRow {
  id: string;
  workspace_id: string;
  name: string;
  prefix: string;
  last4: string;
  key_hash: string;
  mode: 'live' | 'test';
  scopes: string;
  domain_id: string | null;
  ip_allowlist: string;
  created_by: string | null;
  created_at: number;
  last_used_at: number | null;
  expires_at: number | null;
  revoked_at: number | null;
}

/** An API key as stored: its scopes and IP allowlist as lists (JSON text in their columns). */
export type ApiKeyRecord = Omit<ApiKeyRow, 'scopes' | 'ip_allowlist'> & { scopes: string[]; ip_allowlist: string[] };

const decode = (r: ApiKeyRow): ApiKeyRecord => ({
  ...r,
  scopes: JSON.parse(r.scopes),
  ip_allowlist: JSON.parse(r.ip_allowlist),
});

export function createKeyStore(db: Db) {
  return {
    insert(key: ApiKeyRecord): void {
      const k: ApiKeyRow = {
        ...key,
        scopes: JSON.stringify(key.scopes),
        ip_allowlist: JSON.stringify(key.ip_allowlist),
      };
      db.prepare(
        `INSERT INTO api_keys (id, workspace_id, name, prefix, last4, key_hash, mode, scopes, domain_id, ip_allowlist,
           created_by, created_at, last_used_at, expires_at, revoked_at)
         VALUES (@id, @workspace_id, @name, @prefix, @last4, @key_hash, @mode, @scopes, @domain_id, @ip_allowlist,
           @created_by, @created_at, @last_used_at, @expires_at, @revoked_at)`,
      ).run(k);
    },
    byHash(hash: string): ApiKeyRecord | undefined {
      const r = db.prepare('SELECT * FROM api_keys WHERE key_hash = ?').get(hash) as ApiKeyRow | undefined;
      return r && decode(r);
    },
    byId(workspaceId: string, id: string): ApiKeyRecord | undefined {
      const r = db.prepare('SELECT * FROM api_keys WHERE id = ? AND workspace_id = ?').get(id, workspaceId) as
        | ApiKeyRow
        | undefined;
      return r && decode(r);
    },
    /** Newest first, revoked keys included. */
    list(workspaceId: string, limit: number, after?: string) {
      const page = newestFirst<ApiKeyRow>(db, 'api_keys', { workspaceId, limit, after });
      return page && { rows: page.rows.map(decode), hasMore: page.hasMore };
    },
    revoke(workspaceId: string, id: string, at: number): void {
      db.prepare('UPDATE api_keys SET revoked_at = ? WHERE id = ? AND workspace_id = ? AND revoked_at IS NULL').run(
        at,
        id,
        workspaceId,
      );
    },
    /** A seed file's key as it names it again: its workspace, name, scopes and domain; working (not revoked, no expiry). */
    reseed(id: string, k: Pick<ApiKeyRecord, 'workspace_id' | 'name' | 'scopes' | 'domain_id' | 'created_by'>): void {
      db.prepare(
        `UPDATE api_keys SET workspace_id = @workspace_id, name = @name, scopes = @scopes, domain_id = @domain_id,
           created_by = coalesce(created_by, @created_by), revoked_at = NULL, expires_at = NULL WHERE id = @id`,
      ).run({ ...k, scopes: JSON.stringify(k.scopes), id });
    },
    /** Best effort, at most once a minute per key. */
    touch(id: string, at: number, minGap: number): void {
      db.prepare(
        'UPDATE api_keys SET last_used_at = ? WHERE id = ? AND (last_used_at IS NULL OR last_used_at <= ?)',
      ).run(at, id, at - minGap);
    },
    domainInWorkspace: (workspaceId: string, domainId: string) =>
      db
        .prepare('SELECT 1 FROM domains WHERE id = ? AND workspace_id = ? AND deleted_at IS NULL')
        .get(domainId, workspaceId) !== undefined,
  };
}
export type KeyStore = ReturnType<typeof createKeyStore>;
