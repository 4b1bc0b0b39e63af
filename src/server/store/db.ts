import Database from 'better-sqlite3';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { migrations } from './migrations.js';

export type Db = Database.Database;

/** The database's file in a data directory (SQLite adds `-wal` and `-shm` beside it while it is open). */
export const DB_FILE = 'svc.sqlite';

/** Opens (creating when needed) the database: WAL, foreign keys, migrations applied. `fresh` tells a new database. */
export function openDb(opts: { dataDir?: string; memory?: boolean }): { db: Db; fresh: boolean } {
  let file = ':memory:';
  if (!opts.memory) {
    if (!opts.dataDir) throw new Error('dataDir is required unless memory is set');
    mkdirSync(opts.dataDir, { recursive: true, mode: 0o700 });
    file = join(opts.dataDir, DB_FILE);
  }
  const db = new Database(file);
  cacheStatements(db);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.pragma('foreign_keys = ON');
  db.pragma('busy_timeout = 5000');
  const fresh = migrate(db) === 0;
  return { db, fresh };
}

/**
 * Makes `db.prepare` return one compiled statement per SQL text, so store functions can say their SQL where they
 * use it without recompiling it on every call (compiling was the largest cost of a send).
 *
 * `db.pragma` goes through the same cache, so that no statement is ever garbage: better-sqlite3 12 prepares a new
 * one for each pragma, and on Node 24 one that the garbage collector frees at the wrong moment (a collection run
 * from a stream's read callback) aborts the process in its destructor (`Assertion failed: (env) != nullptr`;
 * better-sqlite3 13 fixes it but needs Node 22).
 */
function cacheStatements(db: Db): void {
  const prepare = db.prepare.bind(db);
  const cache = new Map<string, Database.Statement>();
  db.prepare = ((sql: string) => {
    let stmt = cache.get(sql);
    if (!stmt) {
      stmt = prepare(sql);
      cache.set(sql, stmt);
    }
    return stmt;
  }) as Db['prepare'];
  db.pragma = ((source: string, options?: { simple?: boolean }) => cachedPragma(db, source, options)) as Db['pragma'];
}

/** `db.pragma` through `db.prepare`: a setting that answers nothing is run; one that answers is read. */
function cachedPragma(db: Db, source: string, options?: { simple?: boolean }): unknown {
  const stmt = db.prepare(`PRAGMA ${source}`);
  if (!stmt.reader) {
    stmt.run();
    return options?.simple ? undefined : [];
  }
  return options?.simple ? stmt.pluck(true).get() : stmt.pluck(false).all();
}

/** Applies pending migrations; returns the version found before. */
export function migrate(db: Db): number {
  const current = db.pragma('user_version', { simple: true }) as number;
  for (const m of migrations) {
    if (m.version <= current) continue;
    db.transaction(() => {
      db.exec(m.sql);
      db.pragma(`user_version = ${m.version}`);
    })();
  }
  return current;
}

/** JSON column helpers. */
export const json = {
  out: (v: unknown) => JSON.stringify(v),
  in: <T>(s: string | null): T => (s == null ? (null as T) : (JSON.parse(s) as T)),
};

const MIN_COMMIT_INTERVAL_MS = 2;

export interface GroupCommit {
  <T>(fn: () => T): Promise<T>;
  /**
   * Called from inside a write function: runs `fn` at the end of the same transaction, after every write function
   * of it and outside their savepoints (dropped if the write function that asked for it throws). For writes to an
   * FTS5 table: FTS5 writes out what it holds at every savepoint, so one entry written per write function is one
   * index segment each, where entries written at the end make one for the whole transaction. A `fn` that throws
   * fails the whole transaction.
   */
  atEnd(fn: () => void): void;
}

/**
 * Group commit: write functions queued during one turn of the event loop run in a single transaction on the
 * next turn, each inside its own savepoint (so one that throws rolls back alone). Each promise settles only
 * after the transaction has committed, so a caller that awaits it answers after its write is durable — at the
 * cost of one commit per turn instead of one per request.
 *
 * Under a steady stream of writes a commit also waits, turn after turn, while more writes keep arriving, until
 * MIN_COMMIT_INTERVAL_MS after the previous one ended, so the writes of several messages share a transaction: a
 * commit writes every page it touched, and some pages are touched by every commit whatever it holds (the last pages
 * of the tables and their sequence, page 1, the search index's structure). Replaying a delivery's statements, four
 * writes a commit cost about 270 µs a message and twelve 205–235 µs; the drain bench went from 988–1,170 to
 * 1,045–1,238 messages/s (alternating runs). A turn that brings no new write commits at once: waiting on would only
 * leave the loop idle while every writer waits (the sink's 250 waits for its commit, and an SMTP client sends its
 * next message only then). A server that has been quiet for that long commits on the next turn.
 */
export function groupCommit(db: Db, minIntervalMs = MIN_COMMIT_INTERVAL_MS): GroupCommit {
  // Plain statements rather than db.transaction() wrappers: building a wrapper per item was a visible cost.
  // IMMEDIATE: the write lock is taken before the first read, so a transaction never has to upgrade a read.
  const [begin, commit, rollback] = ['BEGIN IMMEDIATE', 'COMMIT', 'ROLLBACK'].map((sql) => db.prepare(sql));
  const [savepoint, release, rollbackTo] = ['SAVEPOINT item', 'RELEASE item', 'ROLLBACK TO item'].map((sql) => db.prepare(sql));
  let queue: { fn: () => unknown; resolve: (v: unknown) => void; reject: (e: unknown) => void }[] = [];
  let lastCommit = -Infinity;
  /** The end-of-transaction work asked for by the write function running now (null outside one). */
  let asked: (() => void)[] | null = null;
  const flush = () => {
    const items = queue;
    queue = [];
    const results: ({ ok: true; value: unknown } | { ok: false; error: unknown })[] = [];
    const atEnd: (() => void)[] = [];
    try {
      begin!.run();
      for (const item of items) {
        savepoint!.run();
        asked = [];
        try {
          const value = item.fn();
          if (value instanceof Promise) throw new TypeError('a group-commit function must not be async');
          release!.run();
          results.push({ ok: true, value });
          atEnd.push(...asked);
        } catch (error) {
          rollbackTo!.run();
          release!.run();
          results.push({ ok: false, error });
        } finally {
          asked = null;
        }
      }
      for (const fn of atEnd) fn();
      commit!.run();
    } catch (error) {
      if (db.inTransaction) rollback!.run();
      for (const item of items) item.reject(error);
      return;
    } finally {
      lastCommit = performance.now();
    }
    items.forEach((item, i) => {
      const r = results[i]!;
      if (r.ok) item.resolve(r.value);
      else item.reject(r.error);
    });
  };
  /** Runs once a turn from the first queued write: commits, unless the last turn brought writes and the interval is not over. */
  const whenQuiet = (seen: number) => {
    if (queue.length > seen && performance.now() - lastCommit < minIntervalMs) setImmediate(whenQuiet, queue.length);
    else flush();
  };
  const enqueue = <T>(fn: () => T) =>
    new Promise<T>((resolve, reject) => {
      if (queue.length === 0) setImmediate(whenQuiet, 0);
      queue.push({ fn, resolve: resolve as (v: unknown) => void, reject });
    });
  return Object.assign(enqueue, {
    atEnd(fn: () => void) {
      if (!asked) throw new Error('atEnd is called from inside a group-commit function');
      asked.push(fn);
    },
  });
}
