import type { Db } from './db.js';

export interface SinkRow {
  seq?: number;
  id: string;
  message_id_header: string | null;
  svc_message_id: string | null;
  from_service: 0 | 1;
  workspace_id: string | null;
  mail_from: string | null;
  rcpt_to: string;
  from_addr: string | null;
  to_addrs: string;
  cc_addrs: string;
  subject: string | null;
  text: string | null;
  html: string | null;
  headers: string;
  parsed?: 0 | 1;
  attachments: string;
  /** `pending` until first read (smtp/sink.ts dkimResult). */
  dkim: 'pass' | 'fail' | 'none' | 'pending';
  size: number;
  raw: Buffer;
  received_at: number;
}
export type SinkSummaryRow = Omit<SinkRow, 'raw' | 'text' | 'html' | 'headers' | 'attachments' | 'from_service' | 'parsed'>;

const SUMMARY_COLUMNS =
  'seq, id, message_id_header, svc_message_id, workspace_id, mail_from, rcpt_to, from_addr, to_addrs, cc_addrs, subject, dkim, size, received_at';

export function createSinkStore(db: Db) {
  // One statement: a second copy of the service's own mail (same Message-ID) is not inserted.
  const insert = db.prepare(
    `INSERT INTO sink_messages (id, message_id_header, svc_message_id, from_service, workspace_id, mail_from, rcpt_to, from_addr, to_addrs,
       cc_addrs, subject, text, html, headers, attachments, dkim, size, raw, received_at)
     SELECT @id, @message_id_header, @svc_message_id, @from_service, @workspace_id, @mail_from, @rcpt_to, @from_addr, @to_addrs,
       @cc_addrs, @subject, @text, @html, @headers, @attachments, @dkim, @size, @raw, @received_at
     WHERE NOT (@from_service = 1 AND @message_id_header IS NOT NULL AND EXISTS (
       SELECT 1 FROM sink_messages WHERE message_id_header = @message_id_header AND from_service = 1))`,
  );
  return {
    /** Stores a caught message; a second copy of a service message (same Message-ID) is ignored. */
    insert: (row: SinkRow): boolean => insert.run(row).changes === 1,
    /** Newest first. `to` matches an envelope recipient or a To/Cc address, case-insensitively. Null: `after` is unknown. */
    list(opts: { to?: string; workspaceId?: string; since?: number; limit: number; after?: string }): SinkSummaryRow[] | null {
      const where: string[] = [];
      const args: unknown[] = [];
      if (opts.to) {
        where.push(
          `(EXISTS (SELECT 1 FROM json_each(rcpt_to) WHERE lower(value) = lower(?))
            OR EXISTS (SELECT 1 FROM json_each(to_addrs) WHERE lower(value) = lower(?))
            OR EXISTS (SELECT 1 FROM json_each(cc_addrs) WHERE lower(value) = lower(?)))`,
        );
        args.push(opts.to, opts.to, opts.to);
      }
      if (opts.workspaceId) {
        where.push('workspace_id = ?');
        args.push(opts.workspaceId);
      }
      if (opts.since !== undefined) {
        where.push('received_at >= ?');
        args.push(opts.since);
      }
      if (opts.after) {
        const anchor = db.prepare('SELECT seq FROM sink_messages WHERE id = ?').get(opts.after) as { seq: number } | undefined;
        if (!anchor) return null;
        where.push('seq < ?');
        args.push(anchor.seq);
      }
      const sql = `SELECT ${SUMMARY_COLUMNS} FROM sink_messages ${where.length ? 'WHERE ' + where.join(' AND ') : ''}
        ORDER BY seq DESC LIMIT ?`;
      return db.prepare(sql).all(...args, opts.limit + 1) as SinkSummaryRow[];
    },
    get: (id: string) => db.prepare('SELECT * FROM sink_messages WHERE id = ?').get(id) as SinkRow | undefined,
    setBody: (id: string, body: { text: string | null; html: string | null; attachments: string }) =>
      void db
        .prepare('UPDATE sink_messages SET text = @text, html = @html, attachments = @attachments, parsed = 1 WHERE id = @id')
        .run({ id, ...body }),
    setDkim: (id: string, dkim: 'pass' | 'fail' | 'none') => void db.prepare('UPDATE sink_messages SET dkim = ? WHERE id = ?').run(dkim, id),
    clear: () => db.prepare('DELETE FROM sink_messages').run().changes,
    count: () => (db.prepare('SELECT COUNT(*) AS n FROM sink_messages').get() as { n: number }).n,
  };
}
export type SinkStore = ReturnType<typeof createSinkStore>;
