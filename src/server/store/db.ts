import Database from 'better-sqlite3';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { migrations } from './migrations.js';
import { isDiskFull } from '../../lib/disk-full.js';
import { keepPrivate } from '../../lib/private-file.js';

export type Db = Database.Database;

/** The database's file in a data directory (SQLite adds `-wal` and `-shm` beside it while it is open). */
export const DB_FILE = 'svc.sqlite';

/** The most of a size limit (`--max-db-size`) the write-ahead log may take: a quarter, and never more than 256 MiB. */
export function logShare(maxBytes: number): number {
  return Math.min(Math.floor(maxBytes / 4), 256 * 1024 * 1024);
}

/**
 * Opens (creating when needed) the database: WAL, foreign keys, migrations applied. `fresh` tells a new database;
 * `maxBytes` caps the size of its file and its write-ahead log together: the file gets what the log's share
 * (logShare, which the checkpointer keeps the log within) leaves.
 */
export function openDb(opts: { dataDir?: string; memory?: boolean; maxBytes?: number }): { db: Db; fresh: boolean } {
  let file = ':memory:';
  if (!opts.memory) {
    if (!opts.dataDir) throw new Error('dataDir is required unless memory is set');
    mkdirSync(opts.dataDir, { recursive: true, mode: 0o700 });
    file = join(opts.dataDir, DB_FILE);
    keepPrivate(file);
  }
  const db = new Database(file);
  cacheStatements(db);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.pragma('foreign_keys = ON');
  db.pragma('busy_timeout = 5000');
  // A cap on the file's size: a write past it fails as on a full disk (SQLITE_FULL). It is a setting of this
  // connection, not of the file, so it applies from this start on. In memory there is no log to leave room for.
  if (opts.maxBytes) {
    const room = opts.memory ? opts.maxBytes : opts.maxBytes - logShare(opts.maxBytes);
    db.pragma(
      `max_page_count = ${Math.max(1, Math.floor(room / (db.pragma('page_size', { simple: true }) as number)))}`,
    );
  }
  const fresh = migrate(db) === 0;
  return { db, fresh };
}

/**
 * Makes `db.prepare` return one compiled statement per SQL text, so store functions can say their SQL where they
 * use it without recompiling it on every call (compiling was the largest cost of a send).
 * `db.pragma` goes through the same cache (better-sqlite3 prepares a new statement for each pragma otherwise).
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
 * of the tables and their sequence, page 1, the search index's structure; bench/README.md, bench:drain). A turn that
 * brings no new write commits at once: waiting on would only leave the loop idle while every writer waits (the sink's
 * 250 waits for its commit, and an SMTP client sends its next message only then). A server that has been quiet for
 * that long commits on the next turn.
 */
/** A group commit that also tells whether its last commit failed for lack of room (cleared by the next that succeeds). */
export type WatchedCommit = GroupCommit & { readonly full: boolean };

export function groupCommit(db: Db, minIntervalMs = MIN_COMMIT_INTERVAL_MS): WatchedCommit {
  // Plain statements rather than db.transaction() wrappers: building a wrapper per item was a visible cost.
  // IMMEDIATE: the write lock is taken before the first read, so a transaction never has to upgrade a read.
  const begin = db.prepare('BEGIN IMMEDIATE');
  const commit = db.prepare('COMMIT');
  const rollback = db.prepare('ROLLBACK');
  const savepoint = db.prepare('SAVEPOINT item');
  const release = db.prepare('RELEASE item');
  const rollbackTo = db.prepare('ROLLBACK TO item');
  type Item = { fn: () => unknown; resolve: (v: unknown) => void; reject: (e: unknown) => void };
  let queue: Item[] = [];
  let lastCommit = -Infinity;
  let full = false;
  /** The end-of-transaction work asked for by the write function running now (null outside one). */
  let asked: (() => void)[] | null = null;
  // A transaction a failed commit or rollback left open is rolled back before the next one begins.
  const abandon = () => {
    try {
      if (db.inTransaction) rollback.run();
    } catch {
      // Left open: the next flush tries again before it begins.
    }
  };
  const flush = () => {
    let items = queue;
    queue = [];
    try {
      // A write that finds no room makes SQLite roll back the whole transaction (SQLITE_FULL, like I/O errors, is
      // not undone by the savepoint alone): that write fails, and the others run again without it, so a message too
      // big for the space left does not take a job's small bookkeeping down with it.
      for (;;) {
        const outcome = run(items);
        if (outcome.committed) {
          full = false;
          settle(items, outcome.results);
          return;
        }
        full ||= isDiskFull(outcome.error);
        if (outcome.culprit === undefined) {
          for (const item of items) item.reject(outcome.error);
          return;
        }
        const { culprit } = outcome;
        culprit.reject(outcome.error);
        items = items.filter((item) => item !== culprit);
        if (items.length === 0) return;
      }
    } finally {
      lastCommit = performance.now();
    }
  };
  type Result = { ok: true; value: unknown } | { ok: false; error: unknown };
  /** One transaction of the items; when it could not commit, the error and the item that caused it (if one did). */
  const run = (
    items: Item[],
  ): { committed: true; results: Result[] } | { committed: false; error: unknown; culprit?: Item } => {
    const results: Result[] = [];
    const atEnd: (() => void)[] = [];
    let current: Item | undefined;
    try {
      abandon();
      begin.run();
      for (const item of items) {
        current = item;
        savepoint.run();
        asked = [];
        try {
          const value = item.fn();
          if (value instanceof Promise) throw new TypeError('a group-commit function must not be async');
          release.run();
          results.push({ ok: true, value });
          atEnd.push(...asked);
        } catch (error) {
          if (!db.inTransaction) throw error;
          rollbackTo.run();
          release.run();
          results.push({ ok: false, error });
        } finally {
          asked = null;
        }
      }
      current = undefined;
      for (const fn of atEnd) fn();
      commit.run();
      return { committed: true, results };
    } catch (error) {
      // This runs from a timer: nothing may escape it, or the process ends. A rollback that fails too leaves the
      // transaction open; the next BEGIN tries it again.
      abandon();
      return { committed: false, error, culprit: current };
    }
  };
  const settle = (items: Item[], results: Result[]) =>
    items.forEach((item, i) => {
      const r = results[i]!;
      if (r.ok) item.resolve(r.value);
      else item.reject(r.error);
    });
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
  const watched = Object.assign(enqueue, {
    atEnd(fn: () => void) {
      if (!asked) throw new Error('atEnd is called from inside a group-commit function');
      asked.push(fn);
    },
  });
  return Object.defineProperty(watched, 'full', { get: () => full }) as WatchedCommit;
}
