// What `svc serve` keeps in a data directory, by name, so that `svc serve --reset` removes exactly that: a data
// directory may be one the user made and keeps other files in.
import Database from 'better-sqlite3';
import { existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { ADMIN_TOKEN_FILE, SECRETS_FILE, SEED_FILE } from './secrets.js';
import { DB_FILE } from './store/db.js';

/** The database (with SQLite's files beside it), the server secrets, the admin token and the kept seed. */
export const DATA_FILES = [DB_FILE, `${DB_FILE}-wal`, `${DB_FILE}-shm`, `${DB_FILE}-journal`, SECRETS_FILE, ADMIN_TOKEN_FILE, SEED_FILE];

/** The files of DATA_FILES present in `dir`. */
export function dataFilesIn(dir: string): string[] {
  return DATA_FILES.filter((name) => existsSync(join(dir, name)));
}

const checked: Database.Database[] = [];

/**
 * Whether another process has the database open (a running `svc serve`). A connection in WAL mode holds a shared
 * lock on the database file until it closes, so an exclusive lock taken without waiting fails while one is open.
 * A file SQLite cannot read at all is no one's database, and no reason to keep it.
 */
export function databaseInUse(dir: string): boolean {
  const file = join(dir, DB_FILE);
  if (!existsSync(file)) return false;
  let db: Database.Database | undefined;
  try {
    db = new Database(file, { fileMustExist: true, timeout: 0 });
    // Kept referenced (and `exec` makes no statement objects): on Node 24 better-sqlite3 12 can abort the process
    // when one of its objects is garbage-collected (store/db.ts).
    checked.push(db);
    db.exec('PRAGMA locking_mode = EXCLUSIVE; BEGIN EXCLUSIVE; COMMIT');
    return false;
  } catch (err) {
    const code = (err as { code?: string }).code;
    return code === 'SQLITE_BUSY' || code === 'SQLITE_LOCKED';
  } finally {
    db?.close();
  }
}

/** Removes the files of DATA_FILES present in `dir` and returns their names; nothing else there is touched. */
export function removeDataFiles(dir: string): string[] {
  const found = dataFilesIn(dir);
  for (const name of found) rmSync(join(dir, name), { force: true });
  return found;
}
