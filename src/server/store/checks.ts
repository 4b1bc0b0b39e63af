import type { MessageChecks } from '../../contract/checks.js';
import type { Db } from './db.js';

/** The checks' reports of caught messages, one per message, kept until the message goes (sink_checks). */
export function createCheckStore(db: Db) {
  const get = db.prepare('SELECT c.report FROM sink_checks c JOIN sink_messages s ON s.seq = c.seq WHERE s.id = ?');
  // Written only while the message is there: a report of a message deleted while it was being made is not kept.
  const put = db.prepare(
    `INSERT INTO sink_checks (seq, report) SELECT seq, @report FROM sink_messages WHERE id = @id
     ON CONFLICT (seq) DO UPDATE SET report = excluded.report`,
  );
  return {
    /** The kept report of a caught message, if it has one. */
    get(id: string): MessageChecks | undefined {
      const r = get.get(id) as { report: string } | undefined;
      return r && (JSON.parse(r.report) as MessageChecks);
    },
    /** Keeps a message's report (replacing one it had); false when the message is gone. */
    put: (id: string, report: MessageChecks): boolean => put.run({ id, report: JSON.stringify(report) }).changes === 1,
  };
}
export type CheckStore = ReturnType<typeof createCheckStore>;
