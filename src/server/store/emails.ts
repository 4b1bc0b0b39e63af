import { cutPieces, joinPieces, PIECE_BYTES } from '../../lib/pieces.js';
import type { Db } from './db.js';

/** An attachment as a message's row describes it (its bytes are stored apart, in attachment_chunks). */
export interface MessageAttachment {
  filename: string;
  /** Base64, in messages stored before attachment bytes were kept apart (insertChunk). */
  content?: string;
  url?: string;
  content_type: string;
  content_id?: string;
}

/**
 * A `/v1` message as its status, events and lookups need it: everything but its HTML and text (MessageContent), which
 * run to 40 MiB and are read only to build it. Its lists and objects (recipients, attachments, headers, tags,
 * tracking) are JSON text in their columns.
 */
export interface MessageRow {
  id: string;
  workspace_id: string;
  key_id: string;
  mode: 'live' | 'test';
  domain_id: string;
  status: string;
  from_header: string;
  from_email: string;
  to_addrs: string[];
  cc_addrs: string[];
  bcc_addrs: string[];
  reply_to: string[];
  subject: string;
  attachments: MessageAttachment[];
  headers: Record<string, string>;
  tags: { name: string; value: string }[];
  tracking: { opens: boolean; clicks: boolean };
  scheduled_at: number | null;
  created_at: number;
  updated_at: number;
}

/**
 * What a message says, stored with its row and read apart from it: each a string, or its UTF-8 bytes (a long text as
 * the API reads it), stored as text all the same.
 */
export interface MessageContent {
  html: string | Buffer | null;
  text: string | Buffer | null;
}

/** The result kept for an Idempotency-Key, decoded: what the first request under it came to. */
export interface IdempotencyRow {
  workspace_id: string;
  key: string;
  request_hash: string;
  /** The result (the accepted message, or a batch's items), answered again on a replay. */
  body: unknown;
  created_at: number;
}

const JSON_COLUMNS = [
  'to_addrs',
  'cc_addrs',
  'bcc_addrs',
  'reply_to',
  'attachments',
  'headers',
  'tags',
  'tracking',
] as const;
type StoredMessage = Omit<MessageRow, (typeof JSON_COLUMNS)[number]> & Record<(typeof JSON_COLUMNS)[number], string>;

function encode(m: MessageRow & MessageContent): StoredMessage & MessageContent {
  const out = { ...m } as unknown as StoredMessage & MessageContent;
  for (const c of JSON_COLUMNS) out[c] = JSON.stringify(m[c]);
  return out;
}
function decode(r: StoredMessage | undefined): MessageRow | undefined {
  if (!r) return undefined;
  const out = { ...r } as unknown as MessageRow;
  for (const c of JSON_COLUMNS) (out as unknown as Record<string, unknown>)[c] = JSON.parse(r[c]);
  return out;
}

export function createEmailStore(db: Db) {
  const insert = db.prepare(
    `INSERT INTO messages (id, workspace_id, key_id, mode, domain_id, status, from_header, from_email, to_addrs, cc_addrs,
       bcc_addrs, reply_to, subject, html, text, attachments, headers, tags, tracking, scheduled_at, created_at, updated_at)
     VALUES (@id, @workspace_id, @key_id, @mode, @domain_id, @status, @from_header, @from_email, @to_addrs, @cc_addrs,
       @bcc_addrs, @reply_to, @subject, CAST(@html AS TEXT), CAST(@text AS TEXT), @attachments, @headers, @tags,
       @tracking, @scheduled_at, @created_at, @updated_at)`,
  );
  const move = db.prepare('UPDATE messages SET status = @to, updated_at = @at WHERE id = @id AND status = @from');
  const byId = db.prepare(
    `SELECT id, workspace_id, key_id, mode, domain_id, status, from_header, from_email, to_addrs, cc_addrs, bcc_addrs,
       reply_to, subject, attachments, headers, tags, tracking, scheduled_at, created_at, updated_at
     FROM messages WHERE id = ?`,
  );
  // The text as its UTF-8 bytes (a TEXT value cast to BLOB is its bytes as stored): never a string on this thread.
  const contentOf = db.prepare(
    `SELECT html, CAST(text AS BLOB) AS text,
       EXISTS (SELECT 1 FROM message_text_pieces WHERE message_id = m.id) AS pieced
     FROM messages m WHERE id = ?`,
  );
  const putPiece = db.prepare('INSERT INTO message_text_pieces (message_id, part, n, bytes) VALUES (?, ?, ?, ?)');
  const piecesLength = db
    .prepare('SELECT coalesce(sum(length(bytes)), 0) FROM message_text_pieces WHERE message_id = ? AND part = ?')
    .pluck();
  const pieces = db
    .prepare('SELECT bytes FROM message_text_pieces WHERE message_id = ? AND part = ? ORDER BY n')
    .pluck();
  /** A text or HTML, its first MiB `head` and then its pieces, read a piece at a time into one Buffer. */
  const joined = (id: string, part: 'text' | 'html', head: Buffer): Buffer =>
    joinPieces(head, piecesLength.get(id, part) as number, pieces.iterate(id, part) as Iterable<Buffer>);
  const getIdem = db.prepare(
    'SELECT workspace_id, key, request_hash, body, created_at FROM idempotency_keys WHERE workspace_id = ? AND key = ?',
  );
  // `status` and `headers` held the first answer's status and headers while a replay was answered from them; it is
  // now rendered from the result, as the first answer was, and they are written empty.
  const putIdem = db.prepare(
    `INSERT INTO idempotency_keys (workspace_id, key, request_hash, status, body, headers, created_at)
     VALUES (@workspace_id, @key, @request_hash, 0, @body, '{}', @created_at)
     ON CONFLICT (workspace_id, key) DO UPDATE SET request_hash = excluded.request_hash, status = excluded.status,
       body = excluded.body, headers = excluded.headers, created_at = excluded.created_at`,
  );
  const putChunk = db.prepare(
    'INSERT INTO attachment_chunks (message_id, attachment, chunk, bytes) VALUES (?, ?, ?, ?)',
  );
  const chunksOf = db.prepare(
    'SELECT attachment, bytes FROM attachment_chunks WHERE message_id = ? ORDER BY attachment, chunk',
  );
  // octet_length and length of a BLOB read a value's size from its record header, not its pages.
  const sizeOf = db
    .prepare(
      `SELECT coalesce(octet_length(html), 0) + coalesce(octet_length(text), 0) + octet_length(attachments)
         + coalesce((SELECT sum(length(bytes)) FROM message_text_pieces WHERE message_id = m.id), 0)
         + coalesce((SELECT sum(length(bytes)) FROM attachment_chunks WHERE message_id = m.id), 0) * 4 / 3
       FROM messages m WHERE id = ?`,
    )
    .pluck();
  const suppressed = db.prepare('SELECT 1 FROM suppressions WHERE workspace_id = ? AND email = ?');
  const suppress = db.prepare(
    'INSERT INTO suppressions (workspace_id, email, reason, created_at) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING',
  );
  return {
    /** Stores a message; a text or HTML given as bytes goes in pieces past its first MiB (migration 11). */
    insert(m: MessageRow & MessageContent): void {
      const [text, ...moreText] = Buffer.isBuffer(m.text) ? cutPieces(m.text, PIECE_BYTES, true) : [m.text];
      const [html, ...moreHtml] = Buffer.isBuffer(m.html) ? cutPieces(m.html, PIECE_BYTES, true) : [m.html];
      insert.run(encode({ ...m, text: text ?? null, html: html ?? null }));
      for (const [i, b] of moreText.entries()) putPiece.run(m.id, 'text', i + 1, b);
      for (const [i, b] of moreHtml.entries()) putPiece.run(m.id, 'html', i + 1, b);
    },
    /**
     * A message's HTML, and its text as UTF-8 bytes: a long text goes to the compose thread as it is stored, without
     * ever being a string on the main thread (nor copied again to cross to the thread).
     */
    content(id: string): { html: string | null; text: Buffer | null } | undefined {
      const row = contentOf.get(id) as { html: string | null; text: Buffer | null; pieced: number } | undefined;
      if (!row) return undefined;
      if (!row.pieced) return { html: row.html, text: row.text };
      return {
        html: row.html === null ? null : joined(id, 'html', Buffer.from(row.html)).toString('utf8'),
        text: row.text && joined(id, 'text', row.text),
      };
    },
    /** Stores one piece of attachment `attachment` (its index in the row's attachments) of a message. */
    insertChunk: (id: string, attachment: number, chunk: number, bytes: Buffer) =>
      void putChunk.run(id, attachment, chunk, bytes),
    /** The stored pieces of a message's attachments, by attachment index, in order. */
    chunks(id: string): Map<number, Buffer[]> {
      const out = new Map<number, Buffer[]>();
      for (const r of chunksOf.iterate(id) as Iterable<{ attachment: number; bytes: Buffer }>) {
        let list = out.get(r.attachment);
        if (!list) out.set(r.attachment, (list = []));
        list.push(r.bytes);
      }
      return out;
    },
    /**
     * About how many bytes a message is as sent: its html, text and attachments (base64 is 4/3 of the bytes), read
     * without loading any of them. Undefined for no such message.
     */
    sizeOf: (id: string) => sizeOf.get(id) as number | undefined,
    get: (id: string) => decode(byId.get(id) as StoredMessage | undefined),
    /** The workspace a message belongs to (the sink links caught mail with it). */
    workspaceOf: (id: string) =>
      (db.prepare('SELECT workspace_id FROM messages WHERE id = ?').get(id) as { workspace_id: string } | undefined)
        ?.workspace_id,
    byId: (workspaceId: string, id: string) => {
      const m = byId.get(id) as StoredMessage | undefined;
      return m && m.workspace_id === workspaceId ? decode(m) : undefined;
    },
    /** One atomic conditional transition: true for the single winner. */
    transition: (id: string, from: string, to: string, at: number) => move.run({ id, from, to, at }).changes === 1,
    /** Moves a message to `to` only if its current status is one of `from` (one statement, one winner). */
    raise: (id: string, from: string[], to: string, at: number) =>
      db
        .prepare(
          `UPDATE messages SET status = ?, updated_at = ? WHERE id = ? AND status IN (${from.map(() => '?').join(', ')})`,
        )
        .run(to, at, id, ...from).changes === 1,
    waitingFromDomain: (domainId: string) =>
      (
        db
          .prepare("SELECT COUNT(*) AS n FROM messages WHERE domain_id = ? AND status IN ('queued','scheduled')")
          .get(domainId) as { n: number }
      ).n,

    idempotency(workspaceId: string, key: string): IdempotencyRow | undefined {
      const r = getIdem.get(workspaceId, key) as (IdempotencyRow & { body: string }) | undefined;
      return r && { ...r, body: JSON.parse(r.body) };
    },
    saveIdempotency: (r: IdempotencyRow) => void putIdem.run({ ...r, body: JSON.stringify(r.body) }),

    isSuppressed: (workspaceId: string, email: string) => suppressed.get(workspaceId, email) !== undefined,
    suppress: (workspaceId: string, email: string, reason: string, at: number) =>
      void suppress.run(workspaceId, email, reason, at),
  };
}
export type EmailStore = ReturnType<typeof createEmailStore>;
