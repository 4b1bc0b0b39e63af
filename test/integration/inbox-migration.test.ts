// A data directory written before caught messages' content moved to a table of its own (migration 4) opens with all
// its mail: listed, read in full (text, header fields, attachments, the source byte for byte), searched and deleted;
// mail caught afterwards lists above it.
import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import nodemailer from 'nodemailer';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrations } from '../../src/server/store/migrations.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

const attachment = Buffer.alloc(1024 * 1024, 'statement ');

/** A message as another program sends it, with a 1 MB attachment. */
async function rawMessage(subject: string, text: string): Promise<Buffer> {
  const t = nodemailer.createTransport({ streamTransport: true, buffer: true, newline: 'windows' });
  const info = (await t.sendMail({
    from: 'Reports <reports@example.test>',
    to: 'ann@example.test',
    subject,
    text,
    messageId: `<${subject.replace(/\W/g, '')}@example.test>`,
    attachments: [{ filename: 'statement.txt', content: attachment }],
  })) as unknown as { message: Buffer };
  return info.message;
}

describe('a data directory from before migration 4', () => {
  let dataDir: string;
  let s: TestServer;
  const raws: Buffer[] = [];

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'svc-migration-'));
    const db = new Database(join(dataDir, 'svc.sqlite'));
    for (const m of migrations.filter((m) => m.version <= 3)) db.exec(m.sql);
    db.pragma('user_version = 3');
    // As version 3 stored caught mail: one message never opened, one opened (its body parsed and kept).
    const insert = db.prepare(
      `INSERT INTO sink_messages (id, message_id_header, svc_message_id, from_service, workspace_id, mail_from, rcpt_to, from_addr, to_addrs,
         cc_addrs, subject, text, html, headers, parsed, attachments, dkim, size, raw, received_at, preview, has_attachments)
       VALUES (?, ?, NULL, 0, NULL, 'reports@example.test', '["ann@example.test"]', 'Reports <reports@example.test>', '["ann@example.test"]',
         '[]', ?, ?, NULL, ?, ?, ?, 'none', ?, ?, ?, ?, 1)`,
    );
    const index = db.prepare(
      'INSERT INTO sink_search (rowid, subject, sender, recipients, body) VALUES (?, ?, ?, ?, ?)',
    );
    for (const [n, subject, text, parsed] of [
      [1, 'March statement', 'Your March statement is attached.', 0],
      [2, 'April statement', 'Your April statement is attached.', 1],
    ] as const) {
      const raw = await rawMessage(subject, text);
      raws.push(raw);
      const headers = JSON.stringify([
        { name: 'Subject', value: subject },
        { name: 'From', value: 'Reports <reports@example.test>' },
        // Tagged as the service tags its mail: found by tag: after migration 8.
        ...(parsed ? [{ name: 'X-Svc-Tags', value: 'plan=pro;  team=ops' }] : []),
      ]);
      const attachments = parsed
        ? JSON.stringify([
            { filename: 'statement.txt', content_type: 'text/plain', size: attachment.length, content_id: null },
          ])
        : '[]';
      const r = insert.run(
        `eml_migrated000000000000000${n}`,
        `<${subject.replace(/\W/g, '')}@example.test>`,
        subject,
        parsed ? text : null,
        headers,
        parsed,
        attachments,
        raw.length,
        raw,
        Date.UTC(2026, 2, n),
        text,
      );
      index.run(
        r.lastInsertRowid,
        subject,
        'Reports <reports@example.test> reports@example.test',
        'ann@example.test',
        text,
      );
    }
    db.close();
    s = await startTestServer({ dataDir });
  });
  afterAll(async () => {
    await s?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('lists, reads, searches and deletes the mail it held; new mail lists above it', async () => {
    const list = await s.admin('GET', '/sandbox/messages');
    expect(
      list.body.data.map((m: { subject: string; size: number; has_attachments: boolean }) => [
        m.subject,
        m.size,
        m.has_attachments,
      ]),
    ).toEqual([
      ['April statement', raws[1]!.length, true],
      ['March statement', raws[0]!.length, true],
    ]);
    for (const [i, m] of list.body.data.entries()) {
      const full = await s.admin('GET', `/sandbox/messages/${m.id}`);
      expect(full.status, full.text).toBe(200);
      expect(full.body.text.trim()).toBe(`Your ${['April', 'March'][i]} statement is attached.`);
      expect(full.body.headers).toContainEqual({ name: 'Subject', value: m.subject });
      expect(full.body.attachments).toEqual([
        { filename: 'statement.txt', content_type: 'text/plain', size: attachment.length, content_id: null },
      ]);
      const raw = await fetch(`${s.origin}/sandbox/messages/${m.id}/raw`, {
        headers: { authorization: `Bearer ${s.adminToken}` },
      });
      expect(Buffer.from(await raw.arrayBuffer()).equals(raws[1 - i]!)).toBe(true);
      const file = await fetch(`${s.origin}/sandbox/messages/${m.id}/attachments/0`, {
        headers: { authorization: `Bearer ${s.adminToken}` },
      });
      expect(Buffer.from(await file.arrayBuffer()).equals(attachment)).toBe(true);
    }
    expect(
      (await s.admin('GET', '/sandbox/messages?q=march')).body.data.map((m: { subject: string }) => m.subject),
    ).toEqual(['March statement']);
    const search = async (q: string) =>
      (await s.admin('GET', `/sandbox/messages?q=${encodeURIComponent(q)}`)).body.data.map(
        (m: { subject: string }) => m.subject,
      );
    expect(await search('tag:team=ops')).toEqual(['April statement']);
    expect(await search('-tag:plan')).toEqual(['March statement']);
    // No wait has taken them.
    expect(list.body.data.map((m: { claimed: boolean }) => m.claimed)).toEqual([false, false]);

    const t = nodemailer.createTransport({ host: '127.0.0.1', port: s.smtpPort, secure: false, ignoreTLS: true });
    await t.sendMail({
      from: 'x@example.test',
      to: 'ann@example.test',
      subject: 'May statement',
      text: 'Caught after the upgrade.',
    });
    t.close();
    const march = list.body.data[1].id;
    expect((await s.admin('DELETE', `/sandbox/messages/${march}`)).status).toBe(204);
    expect((await s.admin('GET', `/sandbox/messages/${march}`)).status).toBe(404);
    expect((await s.admin('GET', '/sandbox/messages')).body.data.map((m: { subject: string }) => m.subject)).toEqual([
      'May statement',
      'April statement',
    ]);
    expect(
      (await s.admin('GET', '/sandbox/messages?q=caught')).body.data.map((m: { subject: string }) => m.subject),
    ).toEqual(['May statement']);
  });
});
