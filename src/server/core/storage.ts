// The database core works over, opened for a start: its file (or memory), its size limit, the checkpoints of its log on
// a thread of their own, the group commit every write waits on, and the job table the schedulers claim from. The
// composition root (backend.ts) opens it here, so that core stays the one way to the stores.
import type { Logger } from '../../lib/log.js';
import { startCheckpointer } from '../store/checkpointer.js';
import { DB_FILE, type Db, groupCommit, logShare, openDb, type WatchedCommit } from '../store/db.js';
import { createJobStore, type JobStore } from '../store/jobs.js';

/** The database's files in a data directory: SQLite's own beside it. */
export const DATABASE_FILES = [DB_FILE, `${DB_FILE}-wal`, `${DB_FILE}-shm`, `${DB_FILE}-journal`];

export interface Storage {
  db: Db;
  /** Whether the database was made by this start (nothing was there to migrate). */
  fresh: boolean;
  commit: WatchedCommit;
  jobs: JobStore;
  /** Stops the checkpoints (their last one included); the caller closes `db` after it. */
  stopCheckpoints(): Promise<void>;
}

/** Opens the database in `dataDir` (null: in memory), at most `maxBytes` when given. */
export function openStorage(o: { dataDir: string | null; maxBytes?: number; log: Logger }): Storage {
  const { db, fresh } = openDb({ dataDir: o.dataDir ?? undefined, memory: !o.dataDir, maxBytes: o.maxBytes });
  try {
    const checkpointer = startCheckpointer(db, o.log, o.maxBytes ? logShare(o.maxBytes) : undefined);
    return {
      db,
      fresh,
      commit: groupCommit(db),
      jobs: createJobStore(db),
      stopCheckpoints: () => checkpointer.close(),
    };
  } catch (err) {
    db.close();
    throw err;
  }
}
