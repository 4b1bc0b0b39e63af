// Checkpoints off the main thread. SQLite checkpoints a WAL database from whichever commit crosses the
// auto-checkpoint threshold, so the main event loop would stop for each one (copying pages into the file and
// waiting for the disk twice): under a steady stream of sends that was most of the time spent committing. A thread
// checkpoints ten times a second and the main connection only checkpoints itself as a fallback, far later. An
// in-memory database has no log to checkpoint.
import type { Logger } from '../../lib/log.js';
import { startThread } from '../../lib/threads.js';
import type { Db } from './db.js';

const INTERVAL_MS = 100;
/**
 * Log frames (pages) past which the thread starts the log over (256 MiB). Starting over holds writers back while the
 * last frames are copied and both files synced, and every request in flight waits that long: under a steady stream of
 * sends it set the send bench's p99, less often the larger this is (bench/README.md, bench:send). The price is disk:
 * under load the log file grows to this size and stays there until the server stops.
 */
const RESTART_FRAMES = 65_536;
/** The main connection's own threshold while the thread runs (pages; 1 GiB of log). */
const FALLBACK_PAGES = 262_144;

export interface Checkpointer {
  close(): Promise<void>;
}

/**
 * Starts the checkpoint thread. `maxLogBytes` (a share of `--max-db-size`, which counts the log) keeps the log within
 * that many bytes: past them it is started over and cut to nothing (TRUNCATE) rather than started over at its size.
 */
export function startCheckpointer(db: Db, log: Logger, maxLogBytes?: number): Checkpointer {
  if (db.memory) return { close: async () => {} };
  const pageSize = db.pragma('page_size', { simple: true }) as number;
  // A frame of the log is a page and its 24-byte header.
  const restartFrames = maxLogBytes
    ? Math.max(1, Math.min(RESTART_FRAMES, Math.floor(maxLogBytes / (pageSize + 24)) - 1))
    : RESTART_FRAMES;
  const worker = startThread(new URL('./checkpoint-thread.js', import.meta.url), {
    workerData: { file: db.name, intervalMs: INTERVAL_MS, restartFrames, truncate: maxLogBytes !== undefined },
    resourceLimits: { maxYoungGenerationSizeMb: 2, maxOldGenerationSizeMb: 16 },
  });
  worker.unref();
  db.pragma(`wal_autocheckpoint = ${maxLogBytes ? restartFrames : FALLBACK_PAGES}`);
  // The log file is cut back to the restart size once started over: no smaller, or it would grow again every round.
  db.pragma(`journal_size_limit = ${maxLogBytes ?? RESTART_FRAMES * pageSize}`);
  let exited = false;
  let closing = false;
  // A thread that fails (say, it cannot open the file) exits; the handler below takes over. Without a listener
  // its error would end the server.
  worker.on('error', (err) => log.error('checkpoint thread failed', { error: err.stack ?? err.message }));
  worker.on('message', (m: { error?: string }) => {
    if (m.error) log.warn('checkpoint failed; the next round tries again', { error: m.error });
  });
  worker.once('exit', (code) => {
    exited = true;
    // A thread that died leaves checkpointing to SQLite's own threshold again.
    if (db.open && !closing) {
      db.pragma('wal_autocheckpoint = 1000');
      log.warn('checkpoint thread exited; SQLite checkpoints on its own from now on', { exit_code: code });
    }
  });
  return {
    async close() {
      if (exited) return;
      closing = true;
      // The thread closes its connection first, so the main connection's close is the last and removes the log.
      await new Promise<void>((resolve) => {
        worker.once('exit', () => resolve());
        worker.on('message', (m) => m === 'closed' && void worker.terminate());
        worker.postMessage('close');
      });
    },
  };
}
