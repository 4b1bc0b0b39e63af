// One caught message read: in full for its view (its body parsed and its DKIM signature verified on first read, then
// kept; a `/v1` message's timeline), as its raw bytes, its HTML part or an attachment.
import type { CaughtMessage, CaughtMessageEvent } from '../../contract/inbox.js';
import type { WebhookAttempt, WebhookDelivery } from '../../contract/webhook-endpoints.js';
import { iso } from '../../lib/clock.js';
import type { GroupCommit } from '../store/db.js';
import type { MessageRow } from '../store/emails.js';
import type { InboxAttachment, InboxStore } from '../store/inbox.js';
import type { RelayStore } from '../store/relays.js';
import { omittedNotes, readAttachment, readBody, readHtml } from './rules/caught-body.js';
import { fail } from './errors.js';
import type { Events } from './events.js';
import { summaryOf } from './inbox-list.js';
import type { Webhooks } from './webhooks.js';
import { hop } from '../../lib/hops.js';

/** A caught message as read for its view: everything but its raw source. */
type Row = NonNullable<ReturnType<InboxStore['get']>>;

const NO_CAUGHT_MESSAGE = 'No caught message has this id; `svc inbox` lists them.';
export const noMessage = () => fail('not_found', NO_CAUGHT_MESSAGE);

/**
 * Why a `/v1` message has no caught copy, by its status (none: no message has this id), and the command that follows
 * a message by that id.
 */
function notCaught(id: string, m: Pick<MessageRow, 'status' | 'scheduled_at'> | undefined): never {
  const follow = `\`svc emails get ${id}\` shows its status and events`;
  if (!m) {
    return fail(
      'not_found',
      `No message has this id: ${id} was not sent through this server, or has been removed since; \`svc inbox\` lists the caught mail.`,
    );
  }
  const why: Record<string, string> = {
    scheduled: `is scheduled for ${m.scheduled_at === null ? 'later' : iso(m.scheduled_at)}: it is caught once it is sent`,
    queued: 'is queued: on its way to the sink, not caught yet (a deferred one waits for its next attempt)',
    sending: 'is being handed over to the sink: not caught yet',
    cancelled: 'was cancelled before it was sent: nothing was caught',
    failed: 'failed before it was caught',
    suppressed: 'was suppressed: every recipient is on the suppression list, so nothing was sent',
  };
  return fail(
    'not_found',
    `${id} ${why[m.status] ?? `was handed over (${m.status}), but its caught copy is gone: deleted, or removed by the inbox's retention`}; ${follow}.`,
  );
}

export type DkimVerdict = 'pass' | 'fail' | 'none';

export interface CaughtBody {
  text: string | null;
  html: string | null;
  attachments: InboxAttachment[];
  /** What the view leaves out (caught-body.ts OMITTED bits). */
  omitted: number;
}

/**
 * Attempts (oldest first) as each event's deliveries: grouped by endpoint, endpoints in the order of their first
 * attempt, then by delivery (a redelivery after the original); `urls` names the endpoints that still exist.
 */
export function deliveriesByEvent(
  attempts: WebhookAttempt[],
  urls: Map<string, string>,
): Map<string, WebhookDelivery[]> {
  const byEvent = new Map<string, Map<string, Map<number, WebhookDelivery>>>();
  for (const a of attempts) {
    let endpoints = byEvent.get(a.event_id);
    if (!endpoints) byEvent.set(a.event_id, (endpoints = new Map()));
    let deliveries = endpoints.get(a.endpoint_id);
    if (!deliveries) endpoints.set(a.endpoint_id, (deliveries = new Map()));
    let d = deliveries.get(a.delivery_id);
    if (!d)
      deliveries.set(
        a.delivery_id,
        (d = {
          delivery_id: a.delivery_id,
          endpoint_id: a.endpoint_id,
          url: urls.get(a.endpoint_id) ?? null,
          attempts: [],
        }),
      );
    d.attempts.push(a);
  }
  const out = new Map<string, WebhookDelivery[]>();
  for (const [eventId, endpoints] of byEvent) {
    out.set(
      eventId,
      [...endpoints.values()].flatMap((deliveries) =>
        [...deliveries.values()].sort((x, y) => x.delivery_id - y.delivery_id),
      ),
    );
  }
  return out;
}

/** The `d=` tag of the first DKIM-Signature field. */
export function dkimDomain(headers: { name: string; value: string }[]): string | null {
  const sig = headers.find((h) => h.name.toLowerCase() === 'dkim-signature');
  return sig ? (/(?:^|;)\s*d\s*=\s*([^;\s]+)/i.exec(sig.value)?.[1]?.toLowerCase() ?? null) : null;
}

export interface ReadDeps {
  store: InboxStore;
  /** The timelines of `/v1` messages, with their webhook deliveries. */
  events?: Pick<Events, 'timeline'>;
  webhooks?: Pick<Webhooks, 'list' | 'attemptsOfEvents'>;
  /** Verifies a message's DKIM signatures against the configured DNS (on first read); 'none' without it. */
  verifyDkim?: (raw: Buffer) => Promise<DkimVerdict>;
  /** A `/v1` message's status (why a `msg_…` id has no caught copy). */
  message?: (id: string) => Pick<MessageRow, 'status' | 'scheduled_at'> | undefined;
  /** What the relay did with caught messages (releases, relay rules), which joins their timelines. */
  relays?: Pick<RelayStore, 'list'>;
  /**
   * The group commit a first read's results are kept through, with the next commit and not waited for (without it,
   * core's tests: written at once).
   */
  commit?: GroupCommit;
}

export function createInboxRead(deps: ReadDeps) {
  const { store } = deps;
  const row = (id: string) => store.get(id) ?? noMessage();
  const rawOf = (id: string) => store.raw(id) ?? noMessage();

  /**
   * The parsed body of a caught message, as its view shows it (bounded: caught-body.ts), and its DKIM verdict: both
   * worked out on its first read (the body parsed with mailparser while the verdict's DNS answers come), then kept.
   * The raw source is read once for both. What a first read found is kept by one write that commits with the next
   * group commit, not waited for: the answer does not wait on a commit of its own (bench:latency), and a write that
   * fails (a full disk) leaves the next read to work it out again.
   */
  async function firstRead(r: Row): Promise<{ body: CaughtBody; dkim: DkimVerdict }> {
    const kept: CaughtBody = { text: r.text, html: r.html, attachments: r.attachments, omitted: (r.parsed ?? 0) & ~1 };
    if (r.parsed && r.dkim !== 'pending') return { body: kept, dkim: r.dkim };
    const raw = rawOf(r.id);
    const [body, dkim] = await Promise.all([
      r.parsed ? kept : readBody(raw),
      r.dkim !== 'pending' ? r.dkim : deps.verifyDkim ? deps.verifyDkim(raw) : ('none' as const),
    ]);
    const keep = () => {
      if (!r.parsed) store.setBody(r.id, { ...body, parsed: 1 | body.omitted });
      if (r.dkim === 'pending') store.setDkim(r.id, dkim);
    };
    if (deps.commit) deps.commit(keep).catch(() => {});
    else keep();
    return { body, dkim };
  }

  /**
   * The timeline of a caught message: the events of the `/v1` message it is, with each event's webhook deliveries,
   * and what the relay did with it (releases, relay rules), in time order; null for other mail the relay never had.
   */
  function timelineOf(r: Row): CaughtMessageEvent[] | null {
    const relayed: CaughtMessageEvent[] = (deps.relays?.list(r.id) ?? []).map((e) => ({
      id: `rly_${e.id}`,
      type: e.type,
      occurred_at: iso(e.at),
      detail: e.detail,
      deliveries: [],
    }));
    const events = eventsOf(r);
    if (!events) return relayed.length ? relayed : null;
    if (!relayed.length) return events;
    // Both are in time order already; a stable sort keeps each one's own order among equal times.
    return [...events, ...relayed].sort((a, b) => Date.parse(a.occurred_at) - Date.parse(b.occurred_at));
  }

  /** The events of the `/v1` message a caught message is, with each event's webhook deliveries. */
  function eventsOf(r: Row): CaughtMessageEvent[] | null {
    if (!r.svc_message_id || !deps.events) return null;
    const entries = deps.events.timeline(r.svc_message_id);
    const webhooks = deps.webhooks;
    const attempts = webhooks ? webhooks.attemptsOfEvents(entries.map((e) => e.id)) : [];
    // The endpoints' URLs are read only for attempts to name them by (most mail has none when it is first read).
    const urls = new Map(
      attempts.length && r.workspace_id && webhooks ? webhooks.list(r.workspace_id).map((e) => [e.id, e.url]) : [],
    );
    const deliveries = deliveriesByEvent(attempts, urls);
    return entries.map((e) => ({ ...e, deliveries: deliveries.get(e.id) ?? [] }));
  }

  return {
    /**
     * The caught message a `/sandbox/messages/{id}` path names: an `eml_…` id as it is, or the `msg_…` id of a `/v1`
     * message, which names its caught copy (the first one caught: store.caughtOf). A `/v1` message with none is a 404
     * that says why, from its status.
     */
    caughtId(id: string): string {
      if (!id.startsWith('msg_')) return id;
      return store.caughtOf(id) ?? notCaught(id, deps.message?.(id));
    },

    /** One message in full: envelope, headers, body, DKIM verdict and, for a `/v1` message, its timeline. */
    async get(id: string): Promise<CaughtMessage> {
      const r = row(id);
      const headers: CaughtMessage['headers'] = r.headers;
      const events = timelineOf(r);
      const {
        body: { omitted, ...body },
        dkim,
      } = await firstRead(r);
      hop('read: body parsed, DKIM verified');
      return {
        ...summaryOf(r.summary),
        envelope: { mail_from: r.mail_from, rcpt_to: r.rcpt_to },
        headers,
        ...body,
        truncated: omitted !== 0,
        omitted: omittedNotes(omitted),
        dkim,
        dkim_domain: dkimDomain(headers),
        events,
      };
    },

    /** The message's bytes as caught. */
    raw: rawOf,
    /** The size of a message as caught, without reading it (0 for none). */
    size: (id: string): number => store.summary(id)?.size ?? 0,

    /** The message's HTML part, as its view shows it (bounded), `cid:` images inlined. */
    async html(id: string): Promise<string> {
      const html = await readHtml(rawOf(id));
      if (html === null)
        fail('not_found', 'This message has no HTML part that can be shown; its raw source has it all.');
      return html as string;
    },

    /** Attachment `n` (from 0, as the message's view lists them) with its content. */
    async attachment(
      id: string,
      n: string,
    ): Promise<{ index: number; attachment: { filename: string | null; contentType: string; content: Buffer } }> {
      const index = /^\d{1,4}$/.test(n) ? Number(n) : -1;
      const attachment =
        (index >= 0 ? await readAttachment(rawOf(id), index) : null) ??
        fail('not_found', `This message has no attachment ${n}; they are numbered from 0.`);
      return { index, attachment };
    },
  };
}
