// Waits for caught mail (POST /sandbox/messages/wait, docs/local-server.md#waits): the oldest caught message the
// filters take that no wait has claimed, claimed for the request and answered in full, as soon as it is caught. One
// request does what a listing, the inbox stream and a claim did between them. A held wait is woken by the catch, once
// it has committed mail the wait might take, not by polling.
import { addressedTo, type CaughtMessage, type MessageWaitRequest, subjectHas } from '../../contract/inbox.js';
import type { Changes } from '../../lib/changes.js';
import type { Clock } from '../../lib/clock.js';
import type { InboxStore, InboxSummaryRow } from '../store/inbox.js';

/** A caught message as a held wait's filter reads it: what the catch hands `caught`. */
export type WaitedRow = Pick<
  InboxSummaryRow,
  'workspace_id' | 'rcpt_to' | 'to_addrs' | 'cc_addrs' | 'subject' | 'received_at'
>;

/**
 * The reason a held wait's signal is aborted with when mail comes: nothing reads it, and abort() without one builds a
 * DOMException, stack and all, on the way of every wait's answer (43 µs a send of the server's main thread:
 * bench/README.md, bench:latency).
 */
const WOKEN = 'woken by the catch';

/** Candidates looked at a page at a time (mail the subject filter passes over stays and is looked at again). */
const PAGE = 50;

export interface WaitDeps {
  store: InboxStore;
  clock: Clock;
  /** The server's change signal: a held wait ends with it (without it, a wait looks once and answers). */
  changes?: Changes;
  /** One message in full (inbox-read.ts get). */
  get(id: string): Promise<CaughtMessage>;
  /** The workspaces a filter names (inbox-list.ts; a 404 when none has the name). */
  workspacesOf(q: { workspace?: string }): string[] | undefined;
}

export function createInboxWait(deps: WaitDeps) {
  const { store, clock, changes } = deps;
  /** The reads of the messages woken waits took, until each is read. */
  const reading = new Set<Promise<CaughtMessage>>();
  /** The held waits: what each might take, and how to wake it. */
  const held = new Set<{ mightTake(r: WaitedRow): boolean; wake(): void }>();

  /**
   * The oldest message the filters take (after `after`) that no wait has claimed: claimed now when `claim`, its id
   * and the time of the claim; undefined for none.
   */
  function take(
    q: MessageWaitRequest,
    workspaceId: string[] | undefined,
    since: number | undefined,
  ): { id: string; at?: number } | undefined {
    for (let after = q.after; ; ) {
      // Oldest first, `after` is never unknown (the store goes on from a deleted one).
      const rows = store.candidates({ to: q.to, workspaceId, since, claimed: false, limit: PAGE, after }) ?? [];
      for (const r of rows.slice(0, PAGE)) {
        if (!subjectHas(r.subject, q.subject)) continue;
        if (q.claim === false) return { id: r.id };
        const at = clock.now();
        if (store.claim(r.id, at)) return { id: r.id, at };
      }
      if (rows.length <= PAGE) return undefined;
      after = rows[PAGE - 1]!.id;
    }
  }

  /**
   * The message a wait takes, in full, or null when none is caught within `wait` seconds (or the client goes away:
   * `signal`). A server shutting down answers a held wait with null at once (`stopping` says so).
   */
  async function wait(
    q: MessageWaitRequest,
    signal?: AbortSignal,
  ): Promise<{ message: CaughtMessage | null; stopping: boolean }> {
    const workspaceId = deps.workspacesOf(q);
    const deadline = performance.now() + (q.wait ?? 0) * 1000;
    const since = q.since === undefined ? undefined : Date.parse(q.since);
    const to = q.to;
    // Looser than the query, never stricter (an address in any case; no `claimed` or `after`): a message it passes
    // over is one the query would not take.
    const mightTake = (r: WaitedRow) =>
      (since === undefined || r.received_at >= since) &&
      (workspaceId === undefined || (r.workspace_id !== null && workspaceId.includes(r.workspace_id))) &&
      (to === undefined || addressedTo([...r.rcpt_to, ...r.to_addrs, ...r.cc_addrs], to)) &&
      subjectHas(r.subject, q.subject);
    for (;;) {
      if (signal?.aborted) return { message: null, stopping: false };
      const found = workspaceId?.length === 0 ? undefined : take(q, workspaceId, since);
      if (found) {
        const read = deps.get(found.id);
        reading.add(read);
        let message: CaughtMessage;
        try {
          message = await read;
        } finally {
          reading.delete(read);
        }
        // The client went away while the message was read: the claim is taken back, for the next wait.
        if (signal?.aborted && found.at !== undefined) {
          store.unclaim(found.id, found.at);
          return { message: null, stopping: false };
        }
        return { message, stopping: false };
      }
      const left = deadline - performance.now();
      if (left <= 0 || !changes) return { message: null, stopping: false };
      // Woken by mail it might take (or its time, its client going away, the server stopping): it looks again. It
      // looked in this turn, and the catch tells of what it commits from now on (`caught`).
      const woken = new AbortController();
      const w = { mightTake, wake: () => woken.abort(WOKEN) };
      held.add(w);
      try {
        // Nothing notifies this topic: it is the change signal's wait for the time, an abort, or the server's stop.
        await changes.next('inbox-wait', left, signal ? AbortSignal.any([signal, woken.signal]) : woken.signal);
      } finally {
        held.delete(w);
      }
      if (changes.closed) return { message: null, stopping: true };
    }
  }

  return {
    wait,
    /**
     * Called by the catch once it has committed a message, with the message: the held waits that might take it are
     * woken (a wait passed over is one whose query would not take it), in the order they were held; those that are
     * not woken look at nothing. The message's fields come from the catch, which has them at hand: nothing is read
     * back for them.
     */
    caught(r: WaitedRow): void {
      for (const w of [...held]) if (w.mightTake(r)) w.wake();
    },
    /**
     * Called by the catch after `caught`, before the sink answers its client: resolves once the held waits it woke
     * have read the message they take (at once when no wait is held). Each woken wait takes its message in the
     * microtasks that follow the wake, before this turn is over; a wait's answer is then not read a turn at a time
     * beside the sender's own work on the sink's answer (the delivery's commit of `sent`: bench:latency).
     */
    async served(): Promise<void> {
      if (held.size === 0) return;
      await new Promise((r) => setImmediate(r));
      await Promise.allSettled([...reading]);
    },
  };
}
