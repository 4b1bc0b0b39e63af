import { describe, expect, it } from 'vitest';
import { timeOrderedId } from '../../lib/ids.js';
import { openDb } from './db.js';
import { createInboxStore, type InboxRow } from './inbox.js';

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

  it('finds the Message-ID of service mail through its own index', () => {
    const { db } = setup();
    const plan = db
      .prepare('EXPLAIN QUERY PLAN SELECT 1 FROM sink_messages WHERE message_id_header = ? AND from_service = 1')
      .all('<a@svc.test>') as { detail: string }[];
    expect(plan.map((p) => p.detail).join('\n')).toMatch(/USING COVERING INDEX sink_messages_service_msgid/);
  });
});
