// The floor for bench/smtp-ingest: svc's SMTP sink with nothing behind it. The same library (smtp-server) with the
// sink's own options and connections (the path svc takes, src/server/inbound/seams/smtp-server.ts: greeted at once,
// pipelined replies in one write, unless SVC_STOCK_SEAMS is set), taking each message into one Buffer as the sink does
// and answering 250 at once: no parse, no store, no search entry. The gap between it and svc is what catching a
// message costs; the gap between it and postfix's smtp-sink is the library's own.
//
// With `--store`, the floor of a sink that keeps what it promises: each message written to SQLite (WAL, synchronous
// NORMAL, as svc's store) with an exact-search entry of its body (FTS5, as svc's), committed before its 250, the messages
// of one turn of the event loop in one commit. Nothing else: no header parse, no summary, no events, no stream.
import { mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { SMTPServer } from 'smtp-server';
import { gather } from '../src/lib/gather.js';
import { silentLogger } from '../src/lib/log.js';
import { useConnections } from '../src/server/inbound/seams/smtp-server.js';
import { sinkServerOptions } from '../src/server/inbound/sink.js';

/** The database of `--store`, removed when the server stops. */
const dir = mkdtempSync(join(tmpdir(), 'svc-floor-'));
/** Answers each message once it is committed (`--store`), or at once. */
const keep = process.argv.includes('--store') ? durableStore() : (_raw: Buffer, done: () => void) => done();

function durableStore() {
  const db = new Database(join(dir, 'floor.sqlite'));
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.exec(`CREATE TABLE caught (seq INTEGER PRIMARY KEY, raw BLOB NOT NULL);
    CREATE VIRTUAL TABLE search USING fts5(body, content = '', contentless_delete = 1,
      tokenize = 'unicode61 remove_diacritics 2');`);
  const insert = db.prepare('INSERT INTO caught (raw) VALUES (?)');
  const index = db.prepare('INSERT INTO search (rowid, body) VALUES (?, ?)');
  let batch: { raw: Buffer; done: () => void }[] = [];
  const commit = db.transaction((list: typeof batch) => {
    for (const { raw } of list) {
      const seq = insert.run(raw).lastInsertRowid;
      const text = raw.toString('latin1');
      index.run(seq, text.slice(text.indexOf('\r\n\r\n') + 4));
    }
  });
  return (raw: Buffer, done: () => void) => {
    batch.push({ raw, done });
    if (batch.length > 1) return;
    setImmediate(() => {
      const list = batch;
      batch = [];
      commit(list);
      for (const m of list) m.done();
    });
  };
}

const server = new SMTPServer({
  ...sinkServerOptions(),
  onConnect: (_session, callback) => callback(),
  onMailFrom: (_address, _session, callback) => callback(),
  onRcptTo: (_address, _session, callback) => callback(),
  onData(stream, _session, callback) {
    const raw = gather(0);
    stream.on('data', (chunk: Buffer) => raw.add(chunk));
    stream.on('end', () => keep(raw.bytes(), () => callback(null, 'Caught')));
  },
});
await useConnections(server, silentLogger);
server.listen(Number(process.argv[2] ?? 0), '127.0.0.1', () =>
  console.log(JSON.stringify({ port: (server.server.address() as AddressInfo).port })),
);
process.on('SIGTERM', () =>
  server.close(() => {
    rmSync(dir, { recursive: true, force: true });
    process.exit(0);
  }),
);
