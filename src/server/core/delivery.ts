import type { Tag } from '../../contract/emails.js';
import { iso } from '../../lib/clock.js';
import type { MessageRow, EmailStore } from '../store/emails.js';
import type { DomainStore } from '../store/domains.js';
import { simulatorMailbox } from './rules/addresses.js';
import type { Deps } from './deps.js';
import type { StoredAttachment } from './emails.js';
import type { MessageEvents } from './message-events.js';
import { SIMULATED_DEFERRAL_MS } from './rules/retry-policy.js';

interface BounceSpec {
  class: 'hard' | 'soft' | 'block' | 'technical';
  smtp_code: string;
  subtype: string;
  suppress: boolean;
}
const BOUNCES: Record<string, BounceSpec> = {
  bounce: { class: 'hard', smtp_code: '550', subtype: 'general', suppress: true },
  softbounce: { class: 'soft', smtp_code: '452', subtype: 'mailbox_full', suppress: false },
  block: { class: 'block', smtp_code: '554', subtype: 'policy', suppress: false },
  technical: { class: 'technical', smtp_code: '421', subtype: 'service_unavailable', suppress: false },
};

/** What the worker needs to build and hand over a message. */
export interface OutgoingMessage {
  row: MessageRow;
  html: string | null;
  /** The text as its UTF-8 bytes (store/emails.ts content). */
  text: Buffer | null;
  recipients: string[];
  attachments: StoredAttachment[];
  tags: Tag[];
  headers: Record<string, string>;
  tracking: { opens: boolean; clicks: boolean };
  domain: { name: string; mailFrom: string; trackingHost: string | null };
}

/**
 * The delivery rules: claiming a message, suppression, hand-over results and the simulator outcomes of
 * docs/local-server.md#simulator-recipients. Every status change is one conditional update; one that raises an
 * event is made with it by message-events.ts, in the same transaction.
 */
export function createDelivery(deps: Deps & { store: EmailStore; domains: DomainStore; messageEvents: MessageEvents }) {
  const { store, clock, commit, jobs, messageEvents: events } = deps;

  function outcome(m: MessageRow, recipient: string, attempt: number): void {
    const box = simulatorMailbox(recipient);
    const now = clock.now();
    const bounce = box ? BOUNCES[box] : undefined;
    if ((box === 'softbounce' || box === 'defer') && attempt === 1) {
      const next = now + SIMULATED_DEFERRAL_MS;
      events.emit(m, {
        type: 'email.deferred',
        detail: {
          smtp_code: '452',
          reason: 'Mailbox temporarily unavailable (simulated); the provider will retry.',
          next_attempt_at: iso(next),
        },
        to: recipient,
      });
      jobs.enqueue('outcome', { message_id: m.id, recipient, attempt: 2 }, { runAt: next, lane: m.workspace_id });
      return;
    }
    if (bounce) {
      const detail = { bounce: { class: bounce.class, subtype: bounce.subtype, smtp_code: bounce.smtp_code } };
      events.outcome(m, 'bounced', { type: 'email.bounced', detail, to: recipient });
      if (bounce.suppress) store.suppress(m.workspace_id, recipient, 'hard_bounce', now);
      return;
    }
    events.outcome(m, 'delivered', { type: 'email.delivered', to: recipient });
    if (box === 'complaint') {
      events.outcome(m, 'complained', { type: 'email.complained', to: recipient });
      store.suppress(m.workspace_id, recipient, 'complaint', now);
    }
  }

  return {
    /** Whether a recipient is on the workspace's suppression list. */
    isSuppressed: (workspaceId: string, email: string): boolean => store.isSuppressed(workspaceId, email),

    /**
     * Claims a message for hand-over: `scheduled → queued` when its time has come, then `queued → sending`.
     * A message already `sending` (its worker died) is resumed. Null when there is nothing to send: cancelled,
     * done, or every recipient suppressed (then `suppressed` with `email.failed`).
     */
    claim(id: string): Promise<OutgoingMessage | null> {
      return commit((): OutgoingMessage | null => {
        let m = store.get(id);
        if (!m) return null;
        const now = clock.now();
        if (m.status === 'scheduled' && events.change(m, 'scheduled', 'queued', { type: 'email.queued' }))
          m = { ...m, status: 'queued' };
        if (m.status === 'queued') {
          if (!store.transition(id, 'queued', 'sending', now)) return null;
          m = { ...m, status: 'sending', updated_at: now };
        } else if (m.status !== 'sending') {
          return null;
        }
        const recipients = events
          .allRecipients(m)
          .filter((r) => simulatorMailbox(r) !== 'suppressed' && !store.isSuppressed(m!.workspace_id, r));
        if (recipients.length === 0) {
          events.change(m, 'sending', 'suppressed', { type: 'email.failed', detail: { reason: 'suppressed' } });
          return null;
        }
        const domain = deps.domains.sendingInfo(m.domain_id);
        const content = store.content(id);
        return {
          row: m,
          html: content?.html ?? null,
          text: content?.text ?? null,
          recipients,
          attachments: m.attachments,
          tags: m.tags,
          headers: m.headers,
          tracking: m.tracking,
          domain: {
            name: domain?.name ?? m.from_email.split('@')[1] ?? '',
            mailFrom: domain?.mail_from_subdomain ?? 'bounces',
            trackingHost: domain?.tracking_host ?? null,
          },
        };
      });
    },

    /** About how many bytes the message is as sent (html, text, attachments), read without loading any of them. */
    sizeOf: (id: string): number => store.sizeOf(id) ?? 0,

    /** The stored bytes of a message's attachments, by attachment index, in pieces of about 1 MiB. */
    attachmentChunks: (id: string): Map<number, Buffer[]> => store.chunks(id),

    /** Whether the provider refuses the message outright (the `fail@` simulator recipient). */
    refusedByProvider: (out: OutgoingMessage) => out.recipients.some((r) => simulatorMailbox(r) === 'fail'),

    /**
     * `sending → failed` with `email.failed {reason}`; also from `queued`, where a message waits between attempts
     * when its last one could not hand it over.
     */
    failed(id: string, reason: string): Promise<void> {
      return commit(() => {
        const m = store.get(id);
        if (m) events.change(m, ['queued', 'sending'], 'failed', { type: 'email.failed', detail: { reason } });
      });
    },

    /** Back to `queued` so the retried job claims it again (the compose thread died under it: no event). */
    requeue(id: string): Promise<boolean> {
      return commit(() => store.transition(id, 'sending', 'queued', clock.now()));
    },

    /**
     * A temporary refusal at hand-over (a 4xx from the sink or the relay, or no connection): back to `queued`, with an
     * `email.deferred` per recipient saying why and when the next attempt is (`retryInMs` from now, the job's).
     */
    deferred(
      out: OutgoingMessage,
      why: { smtpCode: number | null; reason: string; retryInMs: number },
    ): Promise<boolean> {
      return commit(() => {
        const detail = {
          smtp_code: why.smtpCode === null ? null : String(why.smtpCode),
          reason: why.reason,
          next_attempt_at: iso(clock.now() + why.retryInMs),
        };
        const deferred = out.recipients.map((to) => ({ type: 'email.deferred', detail, to }));
        return events.change(out.row, 'sending', 'queued', ...deferred);
      });
    },

    /** `sending → sent` once the provider accepted it, then the simulated outcome of each recipient. */
    sent(out: OutgoingMessage): Promise<void> {
      return commit(() => {
        if (!events.change(out.row, 'sending', 'sent', { type: 'email.sent' })) return;
        for (const r of out.recipients) outcome(out.row, r, 1);
      });
    },

    /** A later attempt for a deferred recipient (job `outcome`). */
    retryOutcome(id: string, recipient: string, attempt: number): Promise<void> {
      return commit(() => {
        const m = store.get(id);
        if (m) outcome(m, recipient, attempt);
      });
    },
  };
}
export type Delivery = ReturnType<typeof createDelivery>;
