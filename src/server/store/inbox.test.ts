import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { timeOrderedId } from '../../lib/ids.js';
import { migrate, openDb, type Db } from './db.js';
import { createInboxStore, type InboxRow } from './inbox.js';
import { migrations } from './migrations.js';

function row(messageId: string, fromService: 0 | 1): InboxRow {
  return {
    id: timeOrderedId('eml'),
    message_id_header: messageId,
    svc_message_id: null,
    from_service: fromService,
    workspace_id: null,
    mail_from: 'shop@example.test',
    rcpt_to: ['ada@example.test'],
    from_addr: 'shop@example.test',
    to_addrs: ['ada@example.test'],
    cc_addrs: [],
    subject: 'Hello',
    text: null,
    html: null,
    headers: [{ name: 'Subject', value: 'Hello' }],
    attachments: [],
    dkim: 'none',
    size: 5,
    raw: Buffer.from('Hello'),
    received_at: 0,
    preview: null,
    has_attachments: 0,
  };
}

describe('the inbox store', () => {
  const setup = () => {
    const { db } = openDb({ memory: true });
    const store = createInboxStore(db);
    const count = () => (db.prepare('SELECT COUNT(*) AS n FROM sink_messages').get() as { n: number }).n;
    return { db, store, count };
  };

  it("keeps one copy of the service's own mail, by Message-ID, and every copy of anyone else's", () => {
    const { store, count } = setup();
    expect(store.add(row('<a@svc.test>', 1))).not.toBeNull();
    expect(store.add(row('<a@svc.test>', 1))).toBeNull();
    expect(count()).toBe(1);
    expect(store.add(row('<b@app.test>', 0))).not.toBeNull();
    expect(store.add(row('<b@app.test>', 0))).not.toBeNull();
    // Another program's message with the Message-ID of the service's own is not a copy of it.
    expect(store.add(row('<a@svc.test>', 0))).not.toBeNull();
    expect(count()).toBe(4);
  });

  it("reads a message with its summary as the listing has it: its /v1 message's status and tags, its workspace's name", () => {
    const { db, store } = setup();
    db.exec(`INSERT INTO workspaces (id, name, slug, status, pinned_version, created_at)
      VALUES ('ws_1', 'Acme', 'acme', 'active', '2026-08-01', 0)`);
    db.exec(`INSERT INTO messages (id, workspace_id, key_id, mode, domain_id, status, from_header, from_email, to_addrs,
        cc_addrs, bcc_addrs, reply_to, subject, attachments, headers, tags, tracking, created_at, updated_at)
      VALUES ('msg_1', 'ws_1', 'key_1', 'test', 'dom_1', 'delivered', 'shop@example.test', 'shop@example.test', '[]',
        '[]', '[]', '[]', 'Hello', '[]', '{}', '[{"name":"kind","value":"welcome"}]', '{}', 0, 0)`);
    const service = { ...row('<msg_1@example.test>', 1), svc_message_id: 'msg_1', workspace_id: 'ws_1' };
    const other = { ...row('<b@app.test>', 0), tags: ';kind=other;' };
    for (const r of [service, other]) {
      store.add(r);
      expect(store.get(r.id)!.summary).toMatchObject(store.summary(r.id)!);
    }
    expect(store.get(service.id)!.summary).toMatchObject({
      status: 'delivered',
      workspace_name: 'Acme',
      tags: [{ name: 'kind', value: 'welcome' }],
    });
    // The caught copy's own tags field stays the row's; the summary's are the /v1 message's (none for other mail).
    expect(store.get(other.id)).toMatchObject({ tags: ';kind=other;', summary: { status: null, tags: null } });
  });

  it('stores a big raw source a MiB at a time, reads it back whole, and takes its pieces with it', () => {
    const { db, store } = setup();
    const raw = Buffer.from(Array.from({ length: 2.5 * 1024 * 1024 }, (_, i) => (i * 31 + (i >> 12)) % 256));
    const big = { ...row('<big@app.test>', 0), raw, size: raw.length };
    const small = row('<small@app.test>', 0);
    expect(store.add(big)).not.toBeNull();
    expect(store.add(small)).not.toBeNull();
    const pieces = () =>
      db.prepare('SELECT count(*) AS n, coalesce(max(length(bytes)), 0) AS most FROM sink_raw_pieces');
    // The first MiB with the message's content, then two pieces: a MiB and the half left.
    expect(pieces().get()).toEqual({ n: 2, most: 1024 * 1024 });
    expect(store.raw(big.id)?.equals(raw)).toBe(true);
    expect(store.raw(small.id)?.toString()).toBe('Hello');
    expect(store.remove(big.id)).toBe(true);
    expect(pieces().get()).toEqual({ n: 0, most: 0 });
    expect(store.add({ ...big, id: timeOrderedId('eml') })).not.toBeNull();
    expect(store.clear()).toBe(2);
    expect(pieces().get()).toEqual({ n: 0, most: 0 });
  });

  it('reads the raw source of a message caught before the pieces, whole in its content row', () => {
    const { db, store } = setup();
    const raw = Buffer.alloc(3 * 1024 * 1024, 'x');
    const old = { ...row('<old@app.test>', 0), raw, size: raw.length };
    const seq = store.add(old)!;
    db.prepare('DELETE FROM sink_raw_pieces WHERE seq = ?').run(seq);
    db.prepare('UPDATE sink_content SET raw = ? WHERE seq = ?').run(raw, seq);
    expect(store.raw(old.id)?.equals(raw)).toBe(true);
  });

  describe('the mail to one address', () => {
    /** A message from another program to these recipients: envelope, To, Cc. */
    const to = (subject: string, rcpt: string[], toAddrs: string[] = [], cc: string[] = []) => ({
      ...row(`<${subject}@app.test>`, 0),
      subject,
      rcpt_to: rcpt,
      to_addrs: toAddrs,
      cc_addrs: cc,
    });
    const subjects = (rows: { subject: string | null }[] | null) => rows?.map((r) => r.subject);

    it('is an envelope recipient, a To or a Cc address, in any case, newest first; paged; gone with its message', () => {
      const { db, store } = setup();
      const add = (m: InboxRow, body: string) => store.insert(m, { body });
      add(to('envelope', ['Ada@Example.test']), 'your receipt');
      add(to('header-to', ['list@example.test'], ['ada@example.TEST']), 'your code');
      add(to('cc', ['bob@example.test'], ['bob@example.test'], ['ADA@example.test']), 'your receipt');
      add(to('not-hers', ['adam@example.test'], ['ada@example.test.org']), 'your receipt');
      add(to('all-three', ['ada@example.test'], ['ada@example.test'], ['ada@example.test']), 'your code');
      expect(subjects(store.list({ to: 'ada@EXAMPLE.test', limit: 10 }))).toEqual([
        'all-three',
        'cc',
        'header-to',
        'envelope',
      ]);
      const first = store.list({ to: 'ada@example.test', limit: 2 })!;
      // A page, and the row that says there is more.
      expect(subjects(first)).toEqual(['all-three', 'cc', 'header-to']);
      expect(subjects(store.list({ to: 'ada@example.test', limit: 2, after: first[1]!.id }))).toEqual([
        'header-to',
        'envelope',
      ]);
      // With words to find, the full-text index leads, and the address is looked up for each row it yields.
      const search = { terms: [{ field: null, text: 'receipt', prefix: false }], excluded: [], filters: [] };
      expect(subjects(store.list({ to: 'ada@example.test', limit: 10, search }))).toEqual(['cc', 'envelope']);
      expect(store.remove(first[0]!.id)).toBe(true);
      expect(subjects(store.list({ to: 'ada@example.test', limit: 10 }))).toEqual(['cc', 'header-to', 'envelope']);
      // Each message's addresses once: 1 + 2 + 2 + 2 rows are left of the four messages.
      const left = () => (db.prepare('SELECT count(*) AS n FROM sink_recipients').get() as { n: number }).n;
      expect(left()).toBe(7);
      store.clear();
      expect(left()).toBe(0);
    });

    it('reads only the rows of that address: its key leads the listing', () => {
      const { db } = setup();
      const plan = db
        .prepare(
          `EXPLAIN QUERY PLAN SELECT s.seq FROM sink_recipients r JOIN sink_messages s ON s.seq = r.seq
           WHERE r.address = lower(?) ORDER BY r.seq DESC LIMIT 10`,
        )
        .all('ada@example.test') as { detail: string }[];
      expect(plan.map((p) => p.detail)).toEqual([
        expect.stringMatching(/^SEARCH r USING PRIMARY KEY \(address=\?\)/),
        expect.stringMatching(/^SEARCH s USING INTEGER PRIMARY KEY \(rowid=\?\)/),
      ]);
    });

    it('of mail caught before the table was made is found by the same listing', () => {
      const db = new Database(':memory:') as Db;
      for (const m of migrations.filter((m) => m.version <= 15)) db.exec(m.sql);
      db.pragma('user_version = 15');
      const insert = db.prepare(
        `INSERT INTO sink_messages (id, message_id_header, from_service, mail_from, rcpt_to, from_addr, to_addrs, cc_addrs,
           subject, dkim, size, received_at, has_attachments)
         VALUES (?, ?, 0, 'shop@example.test', ?, 'shop@example.test', ?, ?, ?, 'none', 5, 0, 0)`,
      );
      insert.run(timeOrderedId('eml'), '<1@app.test>', '["Ada@example.test"]', '[]', '[]', 'envelope');
      insert.run(
        timeOrderedId('eml'),
        '<2@app.test>',
        '["x@example.test"]',
        '["x@example.test"]',
        '["ada@example.test"]',
        'cc',
      );
      insert.run(timeOrderedId('eml'), '<3@app.test>', '["x@example.test"]', '["x@example.test"]', '[]', 'not hers');
      migrate(db);
      expect(subjects(createInboxStore(db).list({ to: 'ada@example.test', limit: 10 }))).toEqual(['cc', 'envelope']);
      db.close();
    });
  });

  it('finds the Message-ID of service mail through its own index', () => {
    const { db } = setup();
    const plan = db
      .prepare('EXPLAIN QUERY PLAN SELECT 1 FROM sink_messages WHERE message_id_header = ? AND from_service = 1')
      .all('<a@svc.test>') as { detail: string }[];
    expect(plan.map((p) => p.detail).join('\n')).toMatch(/USING COVERING INDEX sink_messages_service_msgid/);
  });
});
