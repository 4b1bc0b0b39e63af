// The checkpoint thread of `svc serve` (see checkpointer.ts): its own connection to the database file copies
// committed write-ahead-log pages into the file, and waits for the disk, away from the main event loop.
import Database from 'better-sqlite3';
import { parentPort, workerData } from 'node:worker_threads';

const db = new Database(workerData.file as string);
// Never wait for a lock: the main thread may be waiting on this connection (a checkpoint that cannot have its
// locks at once is tried again on the next round).
db.exec('PRAGMA busy_timeout = 0');
// Prepared once rather than by `db.pragma` each round: a garbage statement can abort the process on Node 24 (db.ts).
const passive = db.prepare('PRAGMA wal_checkpoint(PASSIVE)');
// Under a size limit that counts the log (--max-db-size), the log is cut to nothing once past its share; otherwise it
// is started over and keeps its size, which the next round's writes reuse.
const restart = db.prepare(`PRAGMA wal_checkpoint(${workerData.truncate ? 'TRUNCATE' : 'RESTART'})`);
const every = workerData.intervalMs as number;

const restartFrames = workerData.restartFrames as number;

let timer: NodeJS.Timeout;
/** The last error reported: the same one (a full disk, every round) is reported once, not ten times a second. */
let reported = '';
const run = () => {
  try {
    // PASSIVE never blocks the writer: it copies what no reader still needs and leaves the rest for next time.
    const r = passive.get() as { log: number; checkpointed: number } | undefined;
    // Under a steady stream of commits the log never becomes fully copied at a moment when a writer could start it
    // over, so it would only grow. Past a size, RESTART copies the little that is left, holding writers back for
    // that long, and the next commit writes from the start of the file again.
    if (r && r.log > restartFrames) restart.run();
    reported = '';
  } catch (err) {
    // A busy database is checkpointed on the next round; anything else is reported to the server's log.
    const code = (err as { code?: string }).code;
    if (code !== 'SQLITE_BUSY' && code !== 'SQLITE_LOCKED' && String(err) !== reported) {
      reported = String(err);
      parentPort!.postMessage({ error: reported });
    }
  }
  timer = setTimeout(run, every);
};
timer = setTimeout(run, every);

parentPort!.on('message', (m: string) => {
  if (m !== 'close') return;
  clearTimeout(timer);
  db.close();
  parentPort!.postMessage('closed');
});
