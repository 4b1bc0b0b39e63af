import type { Db } from './db.js';

export interface Page<T> {
  rows: T[];
  hasMore: boolean;
}

/**
 * Newest-first keyset pagination over one workspace's rows of a table: by `created_at`, ties (the same
 * millisecond, or a manual clock) by insertion order. `after` is the id of the last row seen; null when no row of
 * the workspace has that id.
 */
export function newestFirst<T>(
  db: Db,
  table: 'api_keys' | 'domains',
  opts: { workspaceId: string; where?: string; limit: number; after?: string },
): Page<T> | null {
  const scope = `workspace_id = ?${opts.where ? ` AND ${opts.where}` : ''}`;
  let rows: T[];
  if (opts.after) {
    const anchor = db
      .prepare(`SELECT created_at, rowid AS seq FROM ${table} WHERE id = ? AND workspace_id = ?`)
      .get(opts.after, opts.workspaceId) as { created_at: number; seq: number } | undefined;
    if (!anchor) return null;
    rows = db
      .prepare(
        `SELECT * FROM ${table} WHERE ${scope} AND (created_at < ? OR (created_at = ? AND rowid < ?))
         ORDER BY created_at DESC, rowid DESC LIMIT ?`,
      )
      .all(opts.workspaceId, anchor.created_at, anchor.created_at, anchor.seq, opts.limit + 1) as T[];
  } else {
    rows = db
      .prepare(`SELECT * FROM ${table} WHERE ${scope} ORDER BY created_at DESC, rowid DESC LIMIT ?`)
      .all(opts.workspaceId, opts.limit + 1) as T[];
  }
  return { rows: rows.slice(0, opts.limit), hasMore: rows.length > opts.limit };
}
