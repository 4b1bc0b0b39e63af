// The ceiling for bench/send: a bare node:http server that parses the same JSON body and does one SQLite insert.
import Database from 'better-sqlite3';
import { createServer } from 'node:http';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const dir = mkdtempSync(join(tmpdir(), 'svc-ceiling-'));
const db = new Database(join(dir, 'c.sqlite'));
db.pragma('journal_mode = WAL');
db.pragma('synchronous = NORMAL');
db.exec('CREATE TABLE m (id TEXT PRIMARY KEY, body TEXT NOT NULL, created_at INTEGER NOT NULL)');
const insert = db.prepare('INSERT INTO m (id, body, created_at) VALUES (?, ?, ?)');

const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    const body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    const id = randomUUID();
    insert.run(id, JSON.stringify(body), Date.now());
    res.writeHead(202, { 'Content-Type': 'application/json' });
    res.end(JSON.stringify({ id, status: 'queued' }));
  });
});
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`${JSON.stringify({ port: (server.address() as { port: number }).port })}\n`);
});
// Only a measurement: on SIGTERM it stops at once and leaves nothing behind.
process.on('SIGTERM', () => {
  db.close();
  rmSync(dir, { recursive: true, force: true });
  process.exit(0);
});
