// Caught mail: what the SMTP sink stores (inbox-catch.ts), what the sandbox routes, the inbox page and its live stream
// list (inbox-list.ts) and read (inbox-read.ts), and here mark, claim and delete, and the changes the live stream
// is told of.
import type { CaughtMessage, CaughtMessageSummary, InboxEvent } from '../../contract/inbox.js';
import type { WebhookStore } from '../store/webhooks.js';
import { type CatchDeps, createCatch } from './inbox-catch.js';
import { createInboxList, summaryOf } from './inbox-list.js';
import { createInboxRead, noMessage, type ReadDeps } from './inbox-read.js';
import { createInboxWait } from './inbox-wait.js';
import type { Changes } from '../../lib/changes.js';

export interface InboxDeps extends CatchDeps, ReadDeps {
  /** The webhook attempts, for the live stream. */
  attempts?: Pick<WebhookStore, 'attemptedAfter' | 'lastAttemptId'>;
  /** The change signal the sink's commits raise: what wakes a held wait (without it, a wait looks once). */
  changes?: Changes;
}

export function createInbox(deps: InboxDeps) {
  const { store, clock } = deps;
  const read = createInboxRead(deps);
  const listing = createInboxList(deps);
  const listeners = new Set<(e: InboxEvent) => void>();
  const publish = (e: InboxEvent) => {
    for (const fn of [...listeners]) fn(e);
  };

  const waits = createInboxWait({ ...deps, get: read.get, workspacesOf: listing.workspacesOf });

  return {
    catch: createCatch({ ...deps, caught: waits.caught, served: waits.served }),
    list: listing.list,
    caughtId: read.caughtId,
    outbox: listing.outbox,
    get: read.get,
    raw: read.raw,
    size: read.size,
    html: read.html,
    attachment: read.attachment,

    remove(id: string): void {
      if (!store.remove(id)) noMessage();
      publish({ event: 'deleted', data: { ids: [id] } });
    },
    clear(): void {
      store.clear();
      publish({ event: 'deleted', data: { all: true } });
    },
    /**
     * Takes a message for a wait (`svc inbox wait`, `inbox.waitFor`, `wait_for_message`): marks it claimed now unless a
     * wait did already. `taken` says whether this call took it: of two waits racing for one message, exactly one does.
     * The mark is kept with the message, so a wait in another process sees it. The message comes with the answer in
     * full, as `get` reads it: what the wait came for.
     */
    async claim(id: string): Promise<{ taken: boolean; message: CaughtMessage }> {
      const taken = store.claim(id, clock.now());
      return { taken, message: await read.get(id) };
    },
    /**
     * Waits for caught mail (`POST /sandbox/messages/wait`): the oldest message the filters take that no wait took,
     * claimed (as `claim` would) and in full, held until one is caught (inbox-wait.ts).
     */
    wait: waits.wait,
    /** Marks a message read (now) or unread; the message as listed. */
    markRead(id: string, read: boolean): CaughtMessageSummary {
      if (!store.setRead(id, read ? clock.now() : null)) noMessage();
      publish({ event: 'read', data: { id, read } });
      return summaryOf(store.summary(id)!);
    },

    workspaces: listing.workspaces,

    /** Tells every listener (the live stream) of a change that is not read back from the store. */
    publish,
    /** Calls `fn` with every published change; returns the unsubscribe function. */
    listen(fn: (e: InboxEvent) => void): () => void {
      listeners.add(fn);
      return () => void listeners.delete(fn);
    },

    /** Where the live stream starts: the newest caught message, event and webhook attempt. */
    positions: () => ({
      caught: store.lastSeq(),
      event: store.lastEventSeq(),
      attempt: deps.attempts?.lastAttemptId() ?? 0,
    }),
    /** Messages caught after `seq`, oldest first, as listed. */
    caughtAfter: (seq: number, limit: number) =>
      store.caughtAfter(seq, limit).map((r) => ({ seq: r.seq, summary: summaryOf(r) })),
    /** The `/v1` messages with an event after the event `seq` (the live status badges). */
    statusChangesAfter: (seq: number, limit: number) => store.statusChangesAfter(seq, limit),
    /** The webhook attempts recorded after attempt `id`, in order, with their events. */
    attemptedAfter: (id: number, limit: number) => deps.attempts?.attemptedAfter(id, limit) ?? [],
  };
}
export type Inbox = ReturnType<typeof createInbox>;
