// What `svc serve` keeps in a data directory, by name, so that `svc serve --reset` removes exactly that: a data
// directory may be one the user made and keeps other files in.
import Database from 'better-sqlite3';
import { existsSync, mkdirSync, readFileSync, rmdirSync, rmSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { keepPrivate, writePrivateFile } from '../lib/private-file.js';
import { ADMIN_TOKEN_FILE, SECRETS_FILE, SEED_FILE } from './secrets.js';
import { DATABASE_FILES } from './core/storage.js';
import { TLS_CERT_FILE, TLS_KEY_FILE } from './inbound/tls.js';

/** The lock one running `svc serve` holds on its data directory, and who holds it (pid, API address). */
export const LOCK_FILE = 'serve.lock';
export const HOLDER_FILE = 'serve.json';

/** The database (with SQLite's files beside it), the server secrets, the admin token, the kept seed and SMTP certificate. */
export const DATA_FILES = [
  ...DATABASE_FILES,
  SECRETS_FILE,
  ADMIN_TOKEN_FILE,
  SEED_FILE,
  TLS_CERT_FILE,
  TLS_KEY_FILE,
  LOCK_FILE,
  HOLDER_FILE,
];

/** The files of DATA_FILES present in `dir`. */
export function dataFilesIn(dir: string): string[] {
  return DATA_FILES.filter((name) => existsSync(join(dir, name)));
}

/**
 * Makes the data directory (0700) for a start, and returns how to take it back to what the start found when the start
 * fails: a directory that did not exist, or held none of svc's files, gets rid of those files again (and of the
 * directories made for it), so a start refused for a full disk leaves nothing behind. One that held svc's files is
 * left as it is: those are its data.
 */
export function prepareDataDir(dir: string): { undo(): void } {
  const untouched = dataFilesIn(dir).length === 0;
  const made = mkdirSync(dir, { recursive: true, mode: 0o700 });
  return {
    undo() {
      if (!untouched) return;
      removeDataFiles(dir);
      if (made === undefined) return;
      // The directories made for this start, innermost first, as long as each is empty.
      for (let d = resolve(dir); ; d = dirname(d)) {
        try {
          rmdirSync(d);
        } catch {
          return;
        }
        if (d === resolve(made)) return;
      }
    },
  };
}

// Lock connections stay referenced: one the garbage collector freed would be closed, and its lock released with it.
const held: Database.Database[] = [];

/** Removes the files of DATA_FILES present in `dir` and returns their names; nothing else there is touched. */
export function removeDataFiles(dir: string): string[] {
  const found = dataFilesIn(dir);
  for (const name of found) rmSync(join(dir, name), { force: true });
  return found;
}

/** Who holds a data directory's lock: written by the holder once it starts (its API address once it listens). */
export interface LockHolder {
  pid: number;
  api: string | null;
  started_at: string;
}

/** Another `svc serve` runs on this data directory. */
export class DataDirInUse extends Error {
  constructor(
    readonly dir: string,
    readonly holder: LockHolder | null,
  ) {
    const who = holder ? `pid ${holder.pid}${holder.api ? `, ${holder.api}` : ', still starting'}` : 'its pid unknown';
    super(`another svc serve (${who}) is running on the data directory ${dir}`);
    this.name = 'DataDirInUse';
  }
}

export interface DataDirLock {
  /** Records the API address in the holder file, for the message a second server gets. */
  listening(api: string): void;
  /** Gives the lock back and removes the holder file (also done by the system when the process dies). */
  release(): void;
}

/**
 * Takes the data directory's lock, or throws DataDirInUse naming the server that holds it. The lock is SQLite's own
 * exclusive lock on a small file of its own (EXCLUSIVE locking mode keeps it until the connection closes): the
 * operating system drops it when the process ends, however it ends, so a lock left by a crash is never in the way,
 * and SQLite enforces it between connections of one process too.
 */
export function lockDataDir(dir: string): DataDirLock {
  const holderFile = join(dir, HOLDER_FILE);
  // 0600 like every file of the data directory, and so is the journal SQLite keeps beside it while the lock is held.
  keepPrivate(join(dir, LOCK_FILE));
  const db = new Database(join(dir, LOCK_FILE), { timeout: 0 });
  try {
    db.exec(
      'PRAGMA locking_mode = EXCLUSIVE; BEGIN EXCLUSIVE; CREATE TABLE IF NOT EXISTS held (at TEXT); DELETE FROM held; COMMIT',
    );
  } catch (err) {
    db.close();
    const code = (err as { code?: string }).code;
    if (code === 'SQLITE_BUSY' || code === 'SQLITE_LOCKED') throw new DataDirInUse(dir, readHolder(holderFile));
    throw err;
  }
  held.push(db);
  const holder: LockHolder = { pid: process.pid, api: null, started_at: new Date().toISOString() };
  const write = () => {
    try {
      writePrivateFile(holderFile, `${JSON.stringify(holder)}\n`);
    } catch {
      // Only the second server's message is poorer without it ("its pid unknown").
    }
  };
  write();
  let released = false;
  return {
    listening(api) {
      holder.api = api;
      write();
    },
    release() {
      if (released) return;
      released = true;
      rmSync(holderFile, { force: true });
      db.close();
    },
  };
}

function readHolder(file: string): LockHolder | null {
  try {
    const h = JSON.parse(readFileSync(file, 'utf8')) as LockHolder;
    return typeof h.pid === 'number' ? h : null;
  } catch {
    return null;
  }
}
