// The events of a `/v1` message, raised in one place with the status change that raises them: the change is one
// conditional update of the message's row (store/emails.ts), and its event goes to the outbox (events.ts) only when
// that update made the change, in the same transaction, so two workers racing for one message raise one event.
// Sending (emails.ts), delivery (delivery.ts) and tracking (tracking.ts) raise a message's events through it
// (docs/api.md#message-statuses); a change that raises none (claimed for sending, requeued, cancelled) is the store's.
import type { MessageStatus, Tag } from '../../contract/emails.js';
import type { EmailStore, MessageRow } from '../store/emails.js';
import type { Deps } from './deps.js';
import type { Events } from './events.js';

/** Final statuses by precedence: a later outcome may only raise a message's status. */
const OUTCOME_RANK: MessageStatus[] = ['sent', 'delivered', 'complained', 'bounced'];

/** An event of a message: its type, what it adds to the message's fields, and whom it concerns (all recipients). */
export interface MessageEvent {
  type: string;
  detail?: Record<string, unknown>;
  to?: string | string[];
}

export function createMessageEvents(deps: Pick<Deps, 'clock'> & { store: EmailStore; events: Events }) {
  const { store, clock, events } = deps;

  function allRecipients(m: MessageRow): string[] {
    return [...m.to_addrs, ...m.cc_addrs, ...m.bcc_addrs];
  }

  /** Emits a message event into the outbox and the message's timeline. */
  function emit(m: MessageRow, e: MessageEvent): void {
    const base = { message_id: m.id, from: m.from_header, subject: m.subject, tags: m.tags as Tag[] };
    events.emit(m.workspace_id, e.type, { ...base, to: e.to ?? allRecipients(m), ...e.detail }, m.id);
  }

  return {
    allRecipients,

    /** An event that changes no status: a message accepted, a simulated deferral, an open, a click. */
    emit,

    /**
     * Moves a message from `from` (or any of several) to `to` and, when this call made the change, emits `happened`
     * (each of them: one per recipient). Whether it made it.
     */
    change(
      m: MessageRow,
      from: MessageStatus | MessageStatus[],
      to: MessageStatus,
      ...happened: MessageEvent[]
    ): boolean {
      const now = clock.now();
      const moved = Array.isArray(from) ? store.raise(m.id, from, to, now) : store.transition(m.id, from, to, now);
      if (moved) for (const e of happened) emit(m, e);
      return moved;
    },

    /**
     * A recipient's outcome after the hand-over (delivered, complained, bounced): its event, and the message's status
     * raised to it when it ranks above the status the message has.
     */
    outcome(m: MessageRow, to: 'delivered' | 'complained' | 'bounced', e: MessageEvent): void {
      emit(m, e);
      store.raise(m.id, OUTCOME_RANK.slice(0, OUTCOME_RANK.indexOf(to)), to, clock.now());
    },
  };
}
export type MessageEvents = ReturnType<typeof createMessageEvents>;
