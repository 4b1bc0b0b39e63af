import type { Db } from './db.js';
import { newestFirst } from './page.js';

export interface ApiKeyRow {
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

export function createKeyStore(db: Db) {
  return {
    insert(k: ApiKeyRow): void {
      db.prepare(
        `INSERT INTO api_keys (id, workspace_id, name, prefix, last4, key_hash, mode, scopes, domain_id, ip_allowlist,
           created_by, created_at, last_used_at, expires_at, revoked_at)
         VALUES (@id, @workspace_id, @name, @prefix, @last4, @key_hash, @mode, @scopes, @domain_id, @ip_allowlist,
           @created_by, @created_at, @last_used_at, @expires_at, @revoked_at)`,
      ).run(k);
    },
    byHash: (hash: string) => db.prepare('SELECT * FROM api_keys WHERE key_hash = ?').get(hash) as ApiKeyRow | undefined,
    byId: (workspaceId: string, id: string) =>
      db.prepare('SELECT * FROM api_keys WHERE id = ? AND workspace_id = ?').get(id, workspaceId) as ApiKeyRow | undefined,
    /** Newest first, revoked keys included. */
    list: (workspaceId: string, limit: number, after?: string) =>
      newestFirst<ApiKeyRow>(db, 'api_keys', { workspaceId, limit, after }),
    revoke(workspaceId: string, id: string, at: number): void {
      db.prepare('UPDATE api_keys SET revoked_at = ? WHERE id = ? AND workspace_id = ? AND revoked_at IS NULL').run(at, id, workspaceId);
    },
    /** Best effort, at most once a minute per key. */
    touch(id: string, at: number, minGap: number): void {
      db.prepare('UPDATE api_keys SET last_used_at = ? WHERE id = ? AND (last_used_at IS NULL OR last_used_at <= ?)').run(
        at, id, at - minGap,
      );
    },
    domainInWorkspace: (workspaceId: string, domainId: string) =>
      db.prepare('SELECT 1 FROM domains WHERE id = ? AND workspace_id = ? AND deleted_at IS NULL').get(domainId, workspaceId) !== undefined,
  };
}
export type KeyStore = ReturnType<typeof createKeyStore>;
