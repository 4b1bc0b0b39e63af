import type { Db } from './db.js';

/** One thing the relay did with a caught message: a release, or a relay rule's attempt (sink_relays). */
export interface RelayEntryRow {
  id: number;
  type: string;
  at: number;
  detail: Record<string, unknown>;
}

/** Releases and relays of caught messages, kept with the message until it goes (sink_relays). */
export function createRelayStore(db: Db) {
  // Written only while the message is there: one deleted meanwhile keeps nothing.
  const add = db.prepare(
    `INSERT INTO sink_relays (seq, type, at, detail)
     SELECT seq, @type, @at, @detail FROM sink_messages WHERE id = @id`,
  );
  const list = db.prepare(
    `SELECT r.id, r.type, r.at, r.detail FROM sink_relays r JOIN sink_messages s ON s.seq = r.seq
     WHERE s.id = ? ORDER BY r.id`,
  );
  return {
    /** Records an entry of a caught message's timeline; false when the message is gone. */
    add: (id: string, type: string, at: number, detail: Record<string, unknown>): boolean =>
      add.run({ id, type, at, detail: JSON.stringify(detail) }).changes === 1,
    /** A caught message's entries, oldest first. */
    list: (id: string): RelayEntryRow[] =>
      (list.all(id) as { id: number; type: string; at: number; detail: string }[]).map((r) => ({
        ...r,
        detail: JSON.parse(r.detail) as Record<string, unknown>,
      })),
  };
}
export type RelayStore = ReturnType<typeof createRelayStore>;
