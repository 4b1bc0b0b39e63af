import { cutPieces, joinPieces } from '../../lib/pieces.js';
import type { Db } from './db.js';

/** An attachment of a caught message, as described once its body is parsed. */
export interface InboxAttachment {
  filename: string | null;
  content_type: string;
  size: number;
  content_id: string | null;
}

/**
 * A caught message: its listing's columns (sink_messages) and its content (sink_content), stored apart; the lists
 * (recipients, header fields, attachments) are JSON text in their columns.
 */
export interface InboxRow {
  seq?: number;
  id: string;
  message_id_header: string | null;
  svc_message_id: string | null;
  from_service: 0 | 1;
  workspace_id: string | null;
  mail_from: string | null;
  rcpt_to: string[];
  /** The SMTP client's address and HELO/EHLO name; null when not known (mail caught by an older version). */
  client_ip?: string | null;
  helo?: string | null;
  from_addr: string | null;
  to_addrs: string[];
  cc_addrs: string[];
  subject: string | null;
  text: string | null;
  html: string | null;
  headers: { name: string; value: string }[];
  /**
   * 0 until the message is first read; then 1, with the bits of what its view leaves out (core/rules/caught-body.ts
   * OMITTED) added.
   */
  parsed?: number;
  attachments: InboxAttachment[];
  /** `pending` until first read (core/inbox-read.ts firstRead, verified by checks/mailauth.ts). */
  dkim: 'pass' | 'fail' | 'none' | 'pending';
  size: number;
  raw: Buffer;
  received_at: number;
  preview: string | null;
  has_attachments: 0 | 1;
  read_at?: number | null;
  /** The message's tags as X-Svc-Tags carried them, `;name=value;…;` (core/rules/search.ts tagsField); null without. */
  tags?: string | null;
  /** When a wait for mail took it (core/inbox.ts claim); null while none has. */
  claimed_at?: number | null;
}

/** A message of a mailbox (POP3, IMAP) as listed: its seq is its UID. */
export interface MailboxRow {
  seq: number;
  id: string;
  size: number;
  received_at: number;
  read_at: number | null;
}

/** A listed message: its own columns, with the `/v1` message's status and the workspace's name when it has them. */
export type InboxSummaryRow = Omit<
  InboxRow,
  'raw' | 'text' | 'html' | 'headers' | 'attachments' | 'from_service' | 'parsed' | 'tags'
> & {
  seq: number;
  read_at: number | null;
  claimed_at: number | null;
  status: string | null;
  workspace_name: string | null;
  /** The `/v1` message's tags; null for mail from other programs. */
  tags: { name: string; value: string }[] | null;
};

/** A `/v1` message not caught yet, as the outbox lists it, with its workspace's name. */
export interface OutboxRow {
  id: string;
  status: 'scheduled' | 'queued' | 'sending';
  from_header: string;
  to_addrs: string[];
  cc_addrs: string[];
  subject: string;
  created_at: number;
  scheduled_at: number | null;
  workspace_id: string;
  workspace_name: string;
}

/** A word or a phrase of a search, in one field or (field null) in any; a prefix term matches words that start with it. */
export interface InboxTerm {
  field: 'subject' | 'sender' | 'recipients' | null;
  text: string;
  prefix: boolean;
}

/** A condition of a search on a message's columns; `not`: the message must not meet it. */
export type InboxFilter = { not: boolean } & (
  | { kind: 'read'; read: boolean }
  | { kind: 'attachments' }
  /** `needle` is found in the tags column (`;name=` or `;name=value;`, lowercase). */
  | { kind: 'tag'; needle: string }
  /** A Cc address contains the text (lowercase). */
  | { kind: 'cc'; text: string }
  | { kind: 'status'; status: string }
  /** Received before `at` (service time, ms), or at or after it. */
  | { kind: 'received'; before: boolean; at: number }
  /** Larger (more bytes) than `bytes`, or smaller. */
  | { kind: 'size'; larger: boolean; bytes: number }
);

/** A search of the inbox, parsed (core/rules/search.ts): every term and filter must match, no excluded term may. */
export interface InboxSearch {
  terms: InboxTerm[];
  excluded: InboxTerm[];
  filters: InboxFilter[];
}

/** What a caught message is found by: its header fields and the body text read when it was caught. */
export interface InboxIndexText {
  body: string;
}

type Stored<T> = Omit<T, 'rcpt_to' | 'to_addrs' | 'cc_addrs' | 'headers' | 'attachments' | 'tags'> & {
  rcpt_to: string;
  to_addrs: string;
  cc_addrs: string;
  headers?: string;
  attachments?: string;
  tags?: string | null;
};
/** What `list` filters, orders and pages by. */
interface ListOptions {
  to?: string;
  /** One workspace, or any of several (the workspaces a name names). */
  workspaceId?: string | string[];
  since?: number;
  claimed?: boolean;
  limit: number;
  after?: string;
  search?: InboxSearch;
  oldestFirst?: boolean;
}

/** The `/v1` message's tags of a listed row (`m.tags`); null for mail from other programs. */
const messageTags = (tags: string | null | undefined): InboxSummaryRow['tags'] => (tags ? JSON.parse(tags) : null);
/** A row's envelope recipients, To and Cc, kept as JSON, read back. */
const decodeAddresses = <T extends { rcpt_to: string; to_addrs: string; cc_addrs: string }>(r: T) => ({
  ...r,
  rcpt_to: JSON.parse(r.rcpt_to) as string[],
  to_addrs: JSON.parse(r.to_addrs) as string[],
  cc_addrs: JSON.parse(r.cc_addrs) as string[],
});
const decodeSummary = (r: Stored<InboxSummaryRow>): InboxSummaryRow => ({
  ...decodeAddresses(r),
  tags: messageTags(r.tags),
});
const decodeRow = (r: Stored<InboxRow>): InboxRow => ({
  ...decodeAddresses(r),
  headers: JSON.parse(r.headers!),
  attachments: JSON.parse(r.attachments!),
});

/**
 * The caught copies of the `/v1` message whose id is `idSql`, found by their Message-ID, `<msg_…@domain>` (RFC 5322's
 * form, brackets and all), in the index kept for the service's own mail: every header naming that id lies in one range
 * of it, whatever its domain (`@` is the character before `A`). No index of its own is written for it.
 */
const caughtCopyOf = (idSql: string) =>
  `s.from_service = 1 AND s.message_id_header >= '<' || ${idSql} || '@'
   AND s.message_id_header < '<' || ${idSql} || 'A' AND s.svc_message_id = ${idSql}`;

const SUMMARY_COLUMNS = `s.seq, s.id, s.message_id_header, s.svc_message_id, s.workspace_id, s.mail_from, s.rcpt_to, s.from_addr,
  s.to_addrs, s.cc_addrs, s.subject, s.preview, s.has_attachments, s.read_at, s.claimed_at, s.dkim, s.size,
  s.received_at, m.status, m.tags, w.name AS workspace_name`;
const SUMMARY_JOINS = 'LEFT JOIN messages m ON m.id = s.svc_message_id LEFT JOIN workspaces w ON w.id = s.workspace_id';

/** An FTS5 query of the terms: each a quoted string (quotes doubled), a prefix one marked `*`, joined by `join`. */
function matchExpression(terms: InboxTerm[], join: 'AND' | 'OR'): string {
  return terms
    .map((t) => {
      const phrase = `"${t.text.replace(/"/g, '""')}"${t.prefix ? ' *' : ''}`;
      return t.field ? `${t.field} : ${phrase}` : phrase;
    })
    .join(` ${join} `);
}

/** A filter as SQL over the listing's row (`s`) and its `/v1` message (`m`), with its arguments. */
function filterSql(f: InboxFilter): { sql: string; args: unknown[] } {
  const is = (sql: string, ...args: unknown[]) => ({ sql: f.not ? `NOT coalesce(${sql}, 0)` : sql, args });
  switch (f.kind) {
    case 'read':
      return is(f.read ? 's.read_at IS NOT NULL' : 's.read_at IS NULL');
    case 'attachments':
      return is('s.has_attachments = 1');
    case 'tag':
      return is('instr(lower(s.tags), ?) > 0', f.needle);
    case 'cc':
      return is('EXISTS (SELECT 1 FROM json_each(s.cc_addrs) WHERE instr(lower(value), ?) > 0)', f.text);
    case 'status':
      return is('m.status = ?', f.status);
    case 'received':
      return is(f.before ? 's.received_at < ?' : 's.received_at >= ?', f.at);
    case 'size':
      return is(f.larger ? 's.size > ?' : 's.size < ?', f.bytes);
  }
}

export function createInboxStore(db: Db) {
  // One statement: a second copy of the service's own mail (same Message-ID) is not inserted.
  const insert = db.prepare(
    `INSERT INTO sink_messages (id, message_id_header, svc_message_id, from_service, workspace_id, mail_from, rcpt_to, from_addr, to_addrs,
       cc_addrs, subject, dkim, size, received_at, preview, has_attachments, tags, client_ip, helo)
     SELECT @id, @message_id_header, @svc_message_id, @from_service, @workspace_id, @mail_from, @rcpt_to, @from_addr, @to_addrs,
       @cc_addrs, @subject, @dkim, @size, @received_at, @preview, @has_attachments, @tags, @client_ip, @helo
     WHERE NOT (@from_service = 1 AND @message_id_header IS NOT NULL AND EXISTS (
       SELECT 1 FROM sink_messages WHERE message_id_header = @message_id_header AND from_service = 1))`,
  );
  const insertContent = db.prepare(
    'INSERT INTO sink_content (seq, parsed, headers, text, html, attachments, raw) VALUES (?, 0, ?, ?, ?, ?, ?)',
  );
  const insertPiece = db.prepare('INSERT INTO sink_raw_pieces (seq, n, bytes) VALUES (?, ?, ?)');
  const rawHead = db.prepare(
    'SELECT c.seq, c.raw FROM sink_messages s JOIN sink_content c ON c.seq = s.seq WHERE s.id = ?',
  );
  const piecesLength = db.prepare('SELECT coalesce(sum(length(bytes)), 0) FROM sink_raw_pieces WHERE seq = ?').pluck();
  const pieces = db.prepare('SELECT bytes FROM sink_raw_pieces WHERE seq = ? ORDER BY n').pluck();
  const index = db.prepare('INSERT INTO sink_search (rowid, subject, sender, recipients, body) VALUES (?, ?, ?, ?, ?)');
  const insertRecipients = db.prepare(
    'INSERT OR IGNORE INTO sink_recipients (address, seq) SELECT lower(value), ? FROM json_each(?)',
  );
  const summaryById = db.prepare(`SELECT ${SUMMARY_COLUMNS} FROM sink_messages s ${SUMMARY_JOINS} WHERE s.id = ?`);
  const firstCopy = db
    .prepare(`SELECT s.id FROM sink_messages s WHERE ${caughtCopyOf('@id')} ORDER BY s.seq LIMIT 1`)
    .pluck();

  const add = (row: InboxRow): number | null => {
    const r = insert.run({
      ...row,
      tags: row.tags ?? null,
      client_ip: row.client_ip ?? null,
      helo: row.helo ?? null,
      rcpt_to: JSON.stringify(row.rcpt_to),
      to_addrs: JSON.stringify(row.to_addrs),
      cc_addrs: JSON.stringify(row.cc_addrs),
    });
    if (r.changes !== 1) return null;
    insertRecipients.run(r.lastInsertRowid, JSON.stringify([...row.rcpt_to, ...row.to_addrs, ...row.cc_addrs]));
    // The raw source's first MiB with the content, the rest in pieces (views of it, not copies; migration 10).
    const [head, ...rest] = cutPieces(row.raw);
    insertContent.run(
      r.lastInsertRowid,
      JSON.stringify(row.headers),
      row.text,
      row.html,
      JSON.stringify(row.attachments),
      head,
    );
    for (const [i, piece] of rest.entries()) insertPiece.run(r.lastInsertRowid, i + 1, piece);
    return Number(r.lastInsertRowid);
  };
  const addToIndex = (seq: number, row: InboxRow, text: InboxIndexText): void => {
    const recipients = [...row.to_addrs, ...row.cc_addrs, ...row.rcpt_to].join(' ');
    index.run(seq, row.subject ?? '', `${row.from_addr ?? ''} ${row.mail_from ?? ''}`, recipients, text.body);
  };

  /** The rows `list` and `candidates` find (`limit` + 1 of them: one more says there are more), as `columns`. */
  function listed(opts: ListOptions, columns: string, joins: string): unknown[] | null {
    const where: string[] = [];
    const args: unknown[] = [];
    const terms = opts.search?.terms ?? [];
    // The mail to one address: its rows of sink_recipients lead (newest first, as its key orders them), unless words
    // to find do; then each row the full-text index yields is looked up there.
    const byRecipient = Boolean(opts.to) && !terms.length;
    if (opts.to) {
      if (byRecipient) where.push('r.address = lower(?)');
      else where.push('EXISTS (SELECT 1 FROM sink_recipients WHERE address = lower(?) AND seq = s.seq)');
      args.push(opts.to);
    }
    if (opts.workspaceId) {
      const ids = ([] as string[]).concat(opts.workspaceId);
      where.push(`s.workspace_id IN (${ids.map(() => '?').join(', ')})`);
      args.push(...ids);
    }
    if (opts.since !== undefined) {
      where.push('s.received_at >= ?');
      args.push(opts.since);
    }
    if (opts.claimed !== undefined) where.push(opts.claimed ? 's.claimed_at IS NOT NULL' : 's.claimed_at IS NULL');
    for (const f of opts.search?.filters ?? []) {
      const { sql, args: more } = filterSql(f);
      where.push(sql);
      args.push(...more);
    }
    const excluded = opts.search?.excluded ?? [];
    // With words to find, the full-text index leads: it yields matching rows newest first (rowid = seq).
    const key = terms.length ? 'f.rowid' : byRecipient ? 'r.seq' : 's.seq';
    if (opts.after) {
      const anchor = (db.prepare('SELECT seq FROM sink_messages WHERE id = ?').get(opts.after) ??
        // Oldest first (a wait), `after` deleted since: ids are in the order mail arrived, so it goes on from there.
        (opts.oldestFirst
          ? db
              .prepare(
                `SELECT coalesce(min(seq) - 1, (SELECT coalesce(max(seq), 0) FROM sink_messages)) AS seq
                 FROM sink_messages WHERE id > ?`,
              )
              .get(opts.after)
          : undefined)) as { seq: number } | undefined;
      if (!anchor) return null;
      where.push(`${key} ${opts.oldestFirst ? '>' : '<'} ?`);
      args.push(anchor.seq);
    }
    let from = `sink_messages s ${joins}`;
    if (byRecipient) from = `sink_recipients r JOIN sink_messages s ON s.seq = r.seq ${joins}`;
    if (terms.length) {
      from = `sink_search f JOIN sink_messages s ON s.seq = f.rowid ${joins}`;
      where.unshift('sink_search MATCH ?');
      // FTS5's NOT takes away what its right side matches: one query for the words wanted and those excluded.
      const without = excluded.length ? ` NOT (${matchExpression(excluded, 'OR')})` : '';
      args.unshift(`(${matchExpression(terms, 'AND')})${without}`);
    } else if (excluded.length) {
      where.push('s.seq NOT IN (SELECT rowid FROM sink_search WHERE sink_search MATCH ?)');
      args.push(matchExpression(excluded, 'OR'));
    }
    const sql = `SELECT ${columns} FROM ${from} ${where.length ? `WHERE ${where.join(' AND ')}` : ''}
      ORDER BY ${key} ${opts.oldestFirst ? 'ASC' : 'DESC'} LIMIT ?`;
    return db.prepare(sql).all(...args, opts.limit + 1);
  }

  return {
    /** Stores a caught message and indexes it for search; a second copy of a service message (same Message-ID) is ignored. */
    insert(row: InboxRow, text: InboxIndexText): boolean {
      const seq = add(row);
      if (seq === null) return false;
      addToIndex(seq, row, text);
      return true;
    },
    /**
     * Stores a caught message without its search entry (`index`, in the same transaction); its `seq`, or null for a
     * second copy of a service message (same Message-ID), which is not stored.
     */
    add,
    /** Writes the search entry of a message stored by `add`. */
    index: addToIndex,
    /** The id of the message caught last, or null when the sink is empty. */
    newestId: () =>
      (db.prepare('SELECT id FROM sink_messages ORDER BY seq DESC LIMIT 1').get() as { id: string } | undefined)?.id ??
      null,
    /**
     * Newest first (`oldestFirst`: oldest first, as a wait takes mail). `to` matches an envelope recipient or a To/Cc
     * address, case-insensitively; `claimed` keeps the mail a wait took (true) or none did (false); `search` is the
     * inbox's search. Paged by `seq` (the primary key) so a page deep in a large sink costs what the first does; `after`
     * is the last message of the page before. Null: `after` is unknown.
     */
    list(opts: ListOptions): InboxSummaryRow[] | null {
      const rows = listed(opts, SUMMARY_COLUMNS, SUMMARY_JOINS) as Stored<InboxSummaryRow>[] | null;
      return rows ? rows.map(decodeSummary) : null;
    },
    /**
     * The messages a wait may take, as `list` finds them (oldest first), with just their id and subject: without the
     * joins a summary needs (its `/v1` message and workspace), which cost a wait more than the rest of its look.
     */
    candidates: (opts: Omit<ListOptions, 'search' | 'oldestFirst'>) =>
      listed({ ...opts, oldestFirst: true }, 's.id, s.subject', '') as { id: string; subject: string | null }[] | null,
    /**
     * The caught copy of a `/v1` message: the first one caught (the service hands each message over once, for all its
     * recipients, and the sink keeps no second copy of it; another program may send one under another domain).
     */
    caughtOf: (messageId: string): string | undefined => firstCopy.get({ id: messageId }) as string | undefined,
    /**
     * The `/v1` messages not caught yet — scheduled, queued (a deferred one too) or being handed over — the last sent
     * first, `to` matching any recipient (Bcc too) in any case. Walked from their delivery jobs, so the walk is as long
     * as the work still to do, whatever the number of messages kept; one the sink took before its hand-over was
     * recorded is left out.
     */
    outbox(opts: { to?: string; workspaceId?: string[]; limit: number }): OutboxRow[] {
      const where = [`j.kind = 'deliver'`, `m.status IN ('scheduled', 'queued', 'sending')`];
      const args: unknown[] = [];
      if (opts.workspaceId) {
        where.push(`m.workspace_id IN (${opts.workspaceId.map(() => '?').join(', ')})`);
        args.push(...opts.workspaceId);
      }
      if (opts.to) {
        where.push(
          `(EXISTS (SELECT 1 FROM json_each(m.to_addrs) WHERE lower(value) = lower(?))
            OR EXISTS (SELECT 1 FROM json_each(m.cc_addrs) WHERE lower(value) = lower(?))
            OR EXISTS (SELECT 1 FROM json_each(m.bcc_addrs) WHERE lower(value) = lower(?)))`,
        );
        args.push(opts.to, opts.to, opts.to);
      }
      where.push(`NOT EXISTS (SELECT 1 FROM sink_messages s WHERE ${caughtCopyOf('m.id')})`);
      const rows = db
        .prepare(
          `SELECT m.id, m.status, m.from_header, m.to_addrs, m.cc_addrs, m.subject, m.created_at, m.scheduled_at,
             m.workspace_id, w.name AS workspace_name
           FROM jobs j JOIN messages m ON m.id = json_extract(j.payload, '$.message_id')
             JOIN workspaces w ON w.id = m.workspace_id
           WHERE ${where.join(' AND ')} ORDER BY m.created_at DESC, m.rowid DESC LIMIT ?`,
        )
        .all(...args, opts.limit) as (OutboxRow & { to_addrs: string; cc_addrs: string })[];
      return rows.map((r) => ({ ...r, to_addrs: JSON.parse(r.to_addrs), cc_addrs: JSON.parse(r.cc_addrs) }));
    },
    /**
     * A message without its raw source (`raw` reads that): a view of a big message need not load it again. With it,
     * from the same statement, the message as the listing shows it.
     */
    get(id: string): (Omit<InboxRow, 'raw'> & { summary: InboxSummaryRow }) | undefined {
      const r = db
        .prepare(
          `SELECT s.*, c.parsed, c.headers, c.text, c.html, c.attachments,
             m.status AS summary_status, m.tags AS summary_tags, w.name AS summary_workspace_name
           FROM sink_messages s JOIN sink_content c ON c.seq = s.seq ${SUMMARY_JOINS} WHERE s.id = ?`,
        )
        .get(id) as
        | (Stored<InboxRow> & {
            summary_status: string | null;
            summary_tags: string | null;
            summary_workspace_name: string | null;
          })
        | undefined;
      if (!r) return undefined;
      const { summary_status, summary_tags, summary_workspace_name, ...stored } = r;
      const row = decodeRow(stored);
      const summary = {
        ...row,
        seq: row.seq!,
        read_at: row.read_at ?? null,
        claimed_at: row.claimed_at ?? null,
        status: summary_status,
        workspace_name: summary_workspace_name,
        tags: messageTags(summary_tags),
      };
      return { ...row, summary };
    },
    /** A message's raw source, as caught: its first MiB and its pieces, read a piece at a time into one Buffer. */
    raw(id: string): Buffer | undefined {
      const head = rawHead.get(id) as { seq: number; raw: Buffer } | undefined;
      if (!head) return undefined;
      const rest = piecesLength.get(head.seq) as number;
      if (rest === 0) return head.raw;
      return joinPieces(head.raw, rest, pieces.iterate(head.seq) as Iterable<Buffer>);
    },
    /** One message as the listing shows it. */
    summary(id: string): InboxSummaryRow | undefined {
      const r = summaryById.get(id) as Stored<InboxSummaryRow> | undefined;
      return r && decodeSummary(r);
    },
    /** Messages caught after `seq`, oldest first (the inbox's live stream). */
    caughtAfter: (seq: number, limit: number) =>
      (
        db
          .prepare(
            `SELECT ${SUMMARY_COLUMNS} FROM sink_messages s ${SUMMARY_JOINS} WHERE s.seq > ? ORDER BY s.seq LIMIT ?`,
          )
          .all(seq, limit) as Stored<InboxSummaryRow>[]
      ).map(decodeSummary),
    /** The `seq` of the newest message (0 for none); later messages have larger ones, deletions or not (AUTOINCREMENT). */
    lastSeq: () => (db.prepare('SELECT coalesce(max(seq), 0) AS seq FROM sink_messages').get() as { seq: number }).seq,
    /**
     * The `/v1` messages with an event after the event `seq`, each with its status now and its latest such event
     * (the inbox's live status badges); `through` is the last event seq looked at, `more` whether events after it remain.
     */
    statusChangesAfter(
      seq: number,
      limit: number,
    ): { through: number; more: boolean; changes: { message_id: string; status: string; event_type: string }[] } {
      const rows = db
        .prepare(
          `SELECT e.seq, e.message_id, e.type, m.status FROM events e LEFT JOIN messages m ON m.id = e.message_id
           WHERE e.seq > ? ORDER BY e.seq LIMIT ?`,
        )
        .all(seq, limit) as { seq: number; message_id: string | null; type: string; status: string | null }[];
      const latest = new Map<string, { message_id: string; status: string; event_type: string }>();
      for (const r of rows) {
        if (r.message_id && r.status)
          latest.set(r.message_id, { message_id: r.message_id, status: r.status, event_type: r.type });
      }
      return {
        through: rows.at(-1)?.seq ?? seq,
        more: rows.length === limit,
        changes: [...latest.values()],
      };
    },
    /** The `seq` of the newest event (0 for none). */
    lastEventSeq: () => (db.prepare('SELECT coalesce(max(seq), 0) AS seq FROM events').get() as { seq: number }).seq,
    /** Keeps what the first read parsed; `parsed` is 1 with the bits of what the view leaves out. */
    setBody: (
      id: string,
      body: { text: string | null; html: string | null; attachments: InboxAttachment[]; parsed: number },
    ) =>
      void db
        .prepare(
          `UPDATE sink_content SET text = @text, html = @html, attachments = @attachments, parsed = @parsed
           WHERE seq = (SELECT seq FROM sink_messages WHERE id = @id)`,
        )
        .run({ id, ...body, attachments: JSON.stringify(body.attachments) }),
    setDkim: (id: string, dkim: 'pass' | 'fail' | 'none') =>
      void db.prepare('UPDATE sink_messages SET dkim = ? WHERE id = ?').run(dkim, id),
    /**
     * Marks a message taken by a wait at `at`, unless one took it already: whether this call took it. One conditional
     * update, so of two waits racing for a message exactly one gets it.
     */
    claim: (id: string, at: number): boolean =>
      db.prepare('UPDATE sink_messages SET claimed_at = ? WHERE id = ? AND claimed_at IS NULL').run(at, id).changes ===
      1,
    /** Takes back the claim made at `at` (its wait went away before it had the message). */
    unclaim: (id: string, at: number) =>
      void db.prepare('UPDATE sink_messages SET claimed_at = NULL WHERE id = ? AND claimed_at = ?').run(id, at),
    /** Marks a message read at `at`, or unread (null); false when there is no such message. */
    setRead: (id: string, at: number | null) =>
      db.prepare('UPDATE sink_messages SET read_at = ? WHERE id = ?').run(at, id).changes === 1,
    /** Deletes one message and its search entry; false when there is no such message. */
    remove: (id: string): boolean =>
      db.transaction(() => {
        const row = db.prepare('DELETE FROM sink_messages WHERE id = ? RETURNING seq').get(id) as
          | { seq: number }
          | undefined;
        if (row) {
          db.prepare('DELETE FROM sink_content WHERE seq = ?').run(row.seq);
          db.prepare('DELETE FROM sink_search WHERE rowid = ?').run(row.seq);
        }
        return row !== undefined;
      })(),
    clear: (): number =>
      db.transaction(() => {
        const n = db.prepare('DELETE FROM sink_messages').run().changes;
        db.prepare('DELETE FROM sink_content').run();
        db.prepare("INSERT INTO sink_search (sink_search) VALUES ('delete-all')").run();
        return n;
      })(),
    /** The workspaces a filter names: the one with this id, or every one with this name (any case). */
    workspacesNamed: (idOrName: string) =>
      (
        db.prepare('SELECT id FROM workspaces WHERE id = ? OR name = ? COLLATE NOCASE').all(idOrName, idOrName) as {
          id: string;
        }[]
      ).map((r) => r.id),
    /** The workspaces whose mail the sink holds, by name (the inbox's workspace filter). */
    workspaces: () =>
      db
        .prepare(
          `SELECT w.id, w.name FROM workspaces w
           WHERE EXISTS (SELECT 1 FROM sink_messages s WHERE s.workspace_id = w.id) ORDER BY w.name, w.id`,
        )
        .all() as { id: string; name: string }[],
    count: () => (db.prepare('SELECT COUNT(*) AS n FROM sink_messages').get() as { n: number }).n,

    /**
     * A page of a mailbox (POP3 and IMAP, core/mailbox.ts): the messages of a workspace (null: every message) after
     * `afterSeq`, oldest first, with what a mail client lists before it reads a message.
     */
    mailboxPage(workspaceId: string | null, afterSeq: number, limit: number): MailboxRow[] {
      const where = workspaceId === null ? '' : 'workspace_id = ? AND';
      return db
        .prepare(
          `SELECT seq, id, size, received_at, read_at FROM sink_messages
           WHERE ${where} seq > ? ORDER BY seq LIMIT ?`,
        )
        .all(...(workspaceId === null ? [] : [workspaceId]), afterSeq, limit) as MailboxRow[];
    },
    /** How many messages a mailbox holds, and the highest seq it has held (0: none). */
    mailboxStats(workspaceId: string | null): { count: number; last: number } {
      const where = workspaceId === null ? '' : 'WHERE workspace_id = ?';
      return db
        .prepare(`SELECT COUNT(*) AS count, coalesce(max(seq), 0) AS last FROM sink_messages ${where}`)
        .get(...(workspaceId === null ? [] : [workspaceId])) as { count: number; last: number };
    },
    /** The next seq a caught message will get: seqs are never reused (AUTOINCREMENT), so IMAP's UIDs are stable. */
    nextSeq: () =>
      ((db.prepare("SELECT seq FROM sqlite_sequence WHERE name = 'sink_messages'").pluck().get() as
        | number
        | undefined) ?? 0) + 1,
    /**
     * A number kept for the life of the database (IMAP's UIDVALIDITY): made once from `now` (seconds) and kept in
     * meta, so a database made anew (`--reset`, `--memory`) tells a client its cached UIDs no longer hold.
     */
    mailboxEpoch(now: number): number {
      db.prepare("INSERT OR IGNORE INTO meta (key, value) VALUES ('mailbox_epoch', ?)").run(String(now));
      return Number(db.prepare("SELECT value FROM meta WHERE key = 'mailbox_epoch'").pluck().get());
    },
  };
}
export type InboxStore = ReturnType<typeof createInboxStore>;
