// A full disk is an answer, not a crash: the database's size is capped (SQLite's max_page_count, the same SQLITE_FULL a
// full file system gives), and the server is filled until a write finds no room.
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import nodemailer from 'nodemailer';
import { afterEach, describe, expect, it } from 'vitest';
import { startServer } from '../../src/server/index.js';
import { silentLogger } from '../../src/lib/log.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

const MiB = 1024 * 1024;
const dirs: string[] = [];
const servers: TestServer[] = [];
const dataDir = () => {
  const d = mkdtempSync(join(tmpdir(), 'svc-full-'));
  dirs.push(d);
  return d;
};

/** `svc serve` on `dir`, its database held to 64 KiB: too small for the schema and the seed. */
const startCramped = (dir: string) =>
  startServer({
    dataDir: dir,
    port: 0,
    smtpPort: 0,
    submissionPort: 0,
    submissionsPort: 0,
    pop3Port: 0,
    imapPort: 0,
    log: silentLogger,
    maxDbSize: 64 * 1024,
  });
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** Mail any program hands to the sink over SMTP (not a /v1 message). */
async function smtpSend(s: TestServer, text: string): Promise<void> {
  const t = nodemailer.createTransport({ host: '127.0.0.1', port: s.smtpPort, secure: false, ignoreTLS: true });
  try {
    await t.sendMail({ from: 'app@example.org', to: 'someone@example.org', subject: 'Filler', text });
  } finally {
    t.close();
  }
}

describe('a full disk', () => {
  it('answers 507 with Retry-After, keeps serving reads, postpones deliveries, and takes writes again once space is freed', async () => {
    const dir = dataDir();
    const s = await startTestServer({ dataDir: dir, maxDbSize: 10 * MiB });
    servers.push(s);
    const key = s.seed!.api_key_test!;

    // ~6 MiB of caught mail from other programs: the room a person frees later by emptying the inbox.
    for (let i = 0; i < 4; i++) await smtpSend(s, randomBytes(MiB).toString('base64'));

    // Sends scheduled an hour ahead (each holds a 256 KiB attachment) until one finds no room.
    const later = new Date(s.clock.now() + 3600_000).toISOString();
    const send = (i: number) =>
      s.call('POST', '/v1/emails', {
        token: key,
        body: {
          from: 'orders@example.test',
          to: 'delivered@simulator.test',
          subject: `Order ${i}`,
          text: 'Attached.',
          attachments: [{ filename: `order-${i}.bin`, content: randomBytes(MiB / 4).toString('base64') }],
          scheduled_at: later,
        },
      });
    const accepted: string[] = [];
    let refused;
    for (let i = 0; i < 60 && !refused; i++) {
      const r = await send(i);
      if (r.status === 202) accepted.push(r.body.id);
      else refused = r;
    }
    expect(accepted.length).toBeGreaterThan(0);
    expect(refused?.status, refused?.text).toBe(507);
    expect(refused!.headers.get('retry-after')).toBe('30');
    expect(refused!.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(refused!.body).toMatchObject({ status: 507, code: 'insufficient_storage' });
    expect(refused!.body.detail).toContain(dir);

    // What room is left takes small writes (a sign-in, a small message) until there is none: mail handed to the sink
    // then is refused for the moment (452: the sender keeps it and tries again), not lost silently.
    let fillers = 4;
    let smtpRefusal: unknown;
    for (let i = 0; i < 200 && !smtpRefusal; i++) {
      await smtpSend(s, randomBytes(24 * 1024).toString('base64')).then(
        () => fillers++,
        (err: unknown) => (smtpRefusal = err),
      );
    }
    expect(smtpRefusal).toMatchObject({ responseCode: 452 });

    // Still serving: the API's reads, the inbox, health (not ready: the database takes no write).
    for (const id of accepted)
      expect((await s.call('GET', `/v1/emails/${id}`, { token: key })).body.status).toBe('scheduled');
    expect((await s.admin('GET', '/sandbox/messages?limit=100')).body.data).toHaveLength(fillers);
    expect((await s.call('GET', '/livez')).status).toBe(200);
    const ready = await s.call('GET', '/readyz');
    expect(ready.status).toBe(503);
    expect(ready.headers.get('retry-after')).toBeTruthy();
    expect(ready.body).toMatchObject({ code: 'unavailable', checks: { database: 'full', listeners: 'ok' } });
    // Anyone who can reach the server may ask: no path in the answer (the 507 of a write names the directory).
    expect(ready.body.detail).toBe(
      'Not ready: the database has reached its size limit (--max-db-size), or the disk holding it is full.',
    );
    expect(ready.text).not.toContain(dir);

    // Their time comes, but the sink has no room for them: they wait, none failed, for as long as it lasts (twice the
    // ~17 minutes that would use up a job's attempts).
    await s.advance(3600);
    for (let i = 0; i < 8; i++) await s.advance(300);
    for (const id of accepted) {
      const m = await s.call('GET', `/v1/emails/${id}`, { token: key });
      expect(['scheduled', 'queued', 'sending']).toContain(m.body.status);
    }

    // Space comes back (the inbox emptied): without a restart, the postponed deliveries go through and sends are taken.
    expect((await s.admin('DELETE', '/sandbox/messages')).status).toBe(204);
    await s.advance(30);
    for (const id of accepted) {
      const m = await s.call('GET', `/v1/emails/${id}`, { token: key });
      expect(m.body.status).toBe('delivered');
      expect(m.body.events.map((e: { type: string }) => e.type)).not.toContain('email.failed');
    }
    const caught = (await s.admin('GET', '/sandbox/messages?limit=100')).body.data;
    expect(caught.map((m: { message_id: string }) => m.message_id).sort()).toEqual([...accepted].sort());
    expect((await s.call('GET', '/readyz')).status).toBe(200);
    const again = await s.call('POST', '/v1/emails', {
      token: key,
      body: { from: 'orders@example.test', to: 'delivered@simulator.test', subject: 'After', text: 'Room again.' },
    });
    expect(again.status).toBe(202);
  }, 90_000);

  it('refuses to start on a database with no room, saying where, leaving nothing running and nothing behind', async () => {
    const empty = dataDir();
    const missing = join(dataDir(), 'not', 'yet');
    for (const dir of [empty, missing]) {
      // Too small for the schema and the seed: the first start cannot write them.
      const failed = startCramped(dir);
      await expect(failed).rejects.toMatchObject({ diskFull: true });
      await expect(failed).rejects.toThrow(`svc serve cannot start: the database in ${dir} has reached its size limit`);
    }
    // The empty directory is empty again, and the missing one (with the directory made for it) missing again.
    expect(readdirSync(empty)).toEqual([]);
    expect(existsSync(dirname(missing))).toBe(false);
    // Its lock was given back and its files closed: a server with room starts on the same directory.
    const s = await startTestServer({ dataDir: empty });
    servers.push(s);
    expect((await s.call('GET', '/readyz')).status).toBe(200);
  });

  it('leaves the files of a data directory in use where they are when a start finds no room', async () => {
    const dir = dataDir();
    const first = await startTestServer({ dataDir: dir });
    await smtpSend(first, randomBytes(512 * 1024).toString('base64'));
    await first.close();
    const kept = readdirSync(dir).sort();
    const failed = startCramped(dir);
    await expect(failed).rejects.toMatchObject({ diskFull: true });
    expect(readdirSync(dir).sort()).toEqual(kept);
    const again = await startTestServer({ dataDir: dir });
    servers.push(again);
    expect((await again.admin('GET', '/sandbox/messages')).body.data).toHaveLength(1);
  });

  it('counts the write-ahead log in --max-db-size: the database file and its log together stay within it', async () => {
    const dir = dataDir();
    const max = 4 * MiB;
    const s = await startTestServer({ dataDir: dir, maxDbSize: max });
    servers.push(s);
    let refused: unknown;
    for (let i = 0; i < 100 && !refused; i++) {
      await smtpSend(s, randomBytes(96 * 1024).toString('base64')).catch((err: unknown) => (refused = err));
    }
    expect(refused).toMatchObject({ responseCode: 452 });
    const size = (name: string) => statSync(join(dir, name), { throwIfNoEntry: false })?.size ?? 0;
    // The checkpoint thread cuts the log back once past its share, a tenth of a second at a time.
    await expect
      .poll(() => size('svc.sqlite') + size('svc.sqlite-wal'), { timeout: 10_000, interval: 100 })
      .toBeLessThanOrEqual(max);
    expect(size('svc.sqlite')).toBeGreaterThan(max / 2);
  });
});
