import type { Db } from './db.js';

/** An event as the store hands it out and takes it: its row, with `data` decoded. */
export interface EventRow {
  seq: number;
  id: string;
  workspace_id: string;
  type: string;
  message_id: string | null;
  data: Record<string, unknown>;
  api_version: string;
  created_at: number;
}

/** The table's row: `data` is JSON text. */
type Stored = Omit<EventRow, 'data'> & { data: string };
const decode = (r: Stored): EventRow => ({ ...r, data: JSON.parse(r.data) });

export function createEventStore(db: Db) {
  const insert = db.prepare(
    'INSERT INTO events (id, workspace_id, type, message_id, data, api_version, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)',
  );
  return {
    insert(e: Omit<EventRow, 'seq'>): number {
      return Number(
        insert.run(e.id, e.workspace_id, e.type, e.message_id, JSON.stringify(e.data), e.api_version, e.created_at)
          .lastInsertRowid,
      );
    },
    /** Oldest first after the event `after` (a stream). */
    list(workspaceId: string, opts: { limit: number; afterSeq?: number; types?: string[] }): EventRow[] {
      const args: unknown[] = [workspaceId, opts.afterSeq ?? 0];
      let typeSql = '';
      if (opts.types?.length) {
        typeSql = ` AND type IN (${opts.types.map(() => '?').join(', ')})`;
        args.push(...opts.types);
      }
      const rows = db
        .prepare(`SELECT * FROM events WHERE workspace_id = ? AND seq > ?${typeSql} ORDER BY seq LIMIT ?`)
        .all(...args, opts.limit + 1) as Stored[];
      return rows.map(decode);
    },
    byId(id: string): EventRow | undefined {
      const r = db.prepare('SELECT * FROM events WHERE id = ?').get(id) as Stored | undefined;
      return r && decode(r);
    },
    /** A message's timeline, oldest first. */
    ofMessage: (messageId: string) =>
      (db.prepare('SELECT * FROM events WHERE message_id = ? ORDER BY seq').all(messageId) as Stored[]).map(decode),
    seqOf: (workspaceId: string, id: string) =>
      (
        db.prepare('SELECT seq FROM events WHERE id = ? AND workspace_id = ?').get(id, workspaceId) as
          | { seq: number }
          | undefined
      )?.seq,
  };
}
export type EventStore = ReturnType<typeof createEventStore>;
