// Caught mail: what the SMTP sink stores, what the sandbox routes, the inbox page and its live stream read, mark and
// delete. A message's body is parsed and its DKIM signature verified when it is first read, then kept.
import type {
  CaughtMessage,
  CaughtMessageEvent,
  CaughtMessageSummary,
  InboxEvent,
  OutboxMessage,
  WebhookAttempt,
  WebhookDelivery,
} from '../../contract/sandbox.js';
import { iso, type Clock } from '../../lib/clock.js';
import { timeOrderedIds } from '../../lib/ids.js';
import type { GroupCommit } from '../store/db.js';
import type { MessageRow } from '../store/messages.js';
import type { SinkAttachment, SinkRow, SinkStore, SinkSummaryRow } from '../store/sink.js';
import type { WebhookStore } from '../store/webhooks.js';
import { omittedNotes, readAttachment, readBody, readHtml } from './caught-body.js';
import { fail, unknownCursor } from './errors.js';
import type { Events } from './events.js';
import type { CaughtOrigin } from './message-ids.js';
import { parseSearch, tagsField } from './search.js';
import type { Webhooks } from './webhooks.js';

/** A caught message as read for its view: everything but its raw source. */
type Row = Omit<SinkRow, 'raw'>;

const NO_CAUGHT_MESSAGE = 'No caught message has this id; `svc inbox` lists them.';
const noMessage = () => fail('not_found', NO_CAUGHT_MESSAGE);

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

/** A message as the SMTP sink hands it over: its envelope, its header fields and a glance at its body. */
export interface CaughtMail {
  raw: Buffer;
  /** The envelope, and the client that gave it: its address and the name it said HELO/EHLO with. */
  envelope: { mailFrom: string | null; rcptTo: string[]; clientIp?: string | null; helo?: string | null };
  messageIdHeader: string | null;
  from: string | null;
  to: string[];
  cc: string[];
  subject: string | null;
  /** Every header field, in order. */
  headers: { name: string; value: string }[];
  /** Whether it has a DKIM-Signature field (verified when the message is first read). */
  signed: boolean;
  preview: string | null;
  hasAttachments: boolean;
  /** The body text the search finds it by. */
  text: string;
  /** The workspace whose API key the sending client logged in with (AUTH); null or absent for anonymous mail. */
  workspaceId?: string | null;
}

export interface CaughtBody {
  text: string | null;
  html: string | null;
  attachments: SinkAttachment[];
  /** What the view leaves out (caught-body.ts OMITTED bits). */
  omitted: number;
}

export function summaryOf(r: SinkSummaryRow): CaughtMessageSummary {
  return {
    id: r.id,
    message_id: r.svc_message_id,
    from: r.from_addr,
    to: r.to_addrs,
    cc: r.cc_addrs,
    subject: r.subject,
    received_at: iso(r.received_at),
    size: r.size,
    status: r.status,
    workspace: r.workspace_id && r.workspace_name != null ? { id: r.workspace_id, name: r.workspace_name } : null,
    preview: r.preview,
    has_attachments: r.has_attachments === 1,
    read: r.read_at != null,
    claimed: r.claimed_at != null,
    tags: r.tags ?? [],
  };
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

export interface InboxDeps {
  store: SinkStore;
  clock: Clock;
  /** Group commit for caught mail (one commit for the messages caught in one turn); without it, one transaction each. */
  commit?: GroupCommit;
  /** Reads a Message-ID header: the `/v1` message it carries, or the service's own mail (a second copy is ignored). */
  origin?: (messageIdHeader: string) => CaughtOrigin;
  /** The timelines of `/v1` messages, with their webhook deliveries. */
  events?: Pick<Events, 'timeline'>;
  webhooks?: Pick<Webhooks, 'list' | 'attemptsOfEvents'>;
  /** The webhook attempts, for the live stream. */
  attempts?: Pick<WebhookStore, 'attemptedAfter' | 'lastAttemptId'>;
  /** Verifies a message's DKIM signatures against the configured DNS (on first read); 'none' without it. */
  verifyDkim?: (raw: Buffer) => Promise<DkimVerdict>;
  /** Called after a message is stored. */
  onCaught?: (id: string) => void;
  /** A `/v1` message's status (why a `msg_…` id has no caught copy). */
  message?: (id: string) => Pick<MessageRow, 'status' | 'scheduled_at'> | undefined;
}

export function createInbox(deps: InboxDeps) {
  const { store, clock } = deps;
  // Ids in the order mail arrived, after those already kept, whatever the clock does (docs/api.md).
  const nextId = timeOrderedIds('eml', store.newestId());
  const listeners = new Set<(e: InboxEvent) => void>();
  const publish = (e: InboxEvent) => {
    for (const fn of [...listeners]) fn(e);
  };

  /**
   * The parsed body of a caught message, as its view shows it (bounded: caught-body.ts): parsed with mailparser on
   * first read, then kept.
   */
  async function bodyOf(row: Row): Promise<CaughtBody> {
    if (row.parsed) {
      return { text: row.text, html: row.html, attachments: row.attachments, omitted: row.parsed & ~1 };
    }
    const body = await readBody(rawOf(row.id));
    store.setBody(row.id, { ...body, parsed: 1 | body.omitted });
    return body;
  }

  /** The DKIM result of a caught message: verified on first read, then kept. */
  async function dkimOf(row: Row): Promise<DkimVerdict> {
    if (row.dkim !== 'pending') return row.dkim;
    const result = deps.verifyDkim ? await deps.verifyDkim(rawOf(row.id)) : 'none';
    store.setDkim(row.id, result);
    return result;
  }

  /** The timeline of the `/v1` message a caught message is, with each event's webhook deliveries. */
  function timelineOf(r: Row): CaughtMessageEvent[] | null {
    if (!r.svc_message_id || !deps.events) return null;
    const entries = deps.events.timeline(r.svc_message_id);
    const webhooks = deps.webhooks;
    const urls = new Map(r.workspace_id && webhooks ? webhooks.list(r.workspace_id).map((e) => [e.id, e.url]) : []);
    const deliveries = deliveriesByEvent(webhooks ? webhooks.attemptsOfEvents(entries.map((e) => e.id)) : [], urls);
    return entries.map((e) => ({ ...e, deliveries: deliveries.get(e.id) ?? [] }));
  }

  const row = (id: string) => store.get(id) ?? noMessage();
  const rawOf = (id: string) => store.raw(id) ?? noMessage();

  /** The workspaces a filter names by id or name (404 when none has it); undefined: no filter. */
  function workspacesOf(q: { workspace_id?: string; workspace?: string }): string[] | undefined {
    if (q.workspace === undefined) return q.workspace_id === undefined ? undefined : [q.workspace_id];
    const named = store.workspacesNamed(q.workspace);
    if (named.length === 0) {
      fail('not_found', `No workspace has the id or name "${q.workspace.slice(0, 128)}"; \`svc whoami\` names yours.`);
    }
    return q.workspace_id ? named.filter((id) => id === q.workspace_id) : named;
  }

  return {
    /**
     * Stores a caught message and its search entry before the sink answers; its id, or null for a second copy of the
     * service's own mail (same Message-ID), which is not stored.
     */
    async catch(mail: CaughtMail): Promise<string | null> {
      const origin = mail.messageIdHeader ? deps.origin?.(mail.messageIdHeader) : undefined;
      // Time-ordered: caught mail arrives fast and in order, and each id lands at the end of the table's id index.
      const now = clock.now();
      const id = nextId(now);
      const caught = {
        id,
        message_id_header: mail.messageIdHeader,
        svc_message_id: origin?.messageId ?? null,
        from_service: origin?.fromService ? 1 : 0,
        // A `/v1` message is its sender's; other mail is the workspace whose key the client logged in with, if any.
        workspace_id: origin?.workspaceId ?? mail.workspaceId ?? null,
        mail_from: mail.envelope.mailFrom,
        rcpt_to: mail.envelope.rcptTo,
        client_ip: mail.envelope.clientIp ?? null,
        helo: mail.envelope.helo ?? null,
        from_addr: mail.from,
        to_addrs: mail.to,
        cc_addrs: mail.cc,
        subject: mail.subject,
        text: null,
        html: null,
        headers: mail.headers,
        parsed: 0,
        attachments: [] as SinkAttachment[],
        // Signatures are verified when the message is first read (dkimOf): most caught mail is never opened, and
        // verification is the largest part of catching a message.
        dkim: mail.signed ? 'pending' : 'none',
        size: mail.raw.length,
        raw: mail.raw,
        received_at: now,
        preview: mail.preview,
        has_attachments: mail.hasAttachments ? 1 : 0,
        tags: tagsField(mail.headers),
      } as const;
      const index = { body: mail.text };
      const commit = deps.commit;
      const stored = commit
        ? await commit(() => {
            const seq = store.add(caught);
            // The search entry is written at the end of the transaction, with those of the other messages it commits.
            // FTS5 writes out what it holds at every savepoint, and each write of a group commit has its own, so entries
            // written with their messages made one index segment (and merges) a message: replaying the sink's writes
            // eight messages a commit, the index cost 75–84 µs a message that way and 36–43 µs at the end.
            if (seq !== null) commit.atEnd(() => store.index(seq, caught, index));
            return seq !== null;
          })
        : store.insert(caught, index);
      if (!stored) return null;
      deps.onCaught?.(id);
      return id;
    },

    /**
     * GET /sandbox/messages: newest first, filtered and searched, paged by the last id seen. `workspace` names a
     * workspace by id or name (404 when none has it).
     */
    list(q: {
      to?: string;
      workspace_id?: string;
      workspace?: string;
      since?: string;
      claimed?: 'true' | 'false';
      limit?: number;
      after?: string;
      q?: string;
    }) {
      const limit = q.limit ?? 20;
      const workspaceId = workspacesOf(q);
      if (workspaceId?.length === 0) return { data: [], has_more: false };
      const rows =
        store.list({
          to: q.to,
          workspaceId,
          since: q.since ? Date.parse(q.since) : undefined,
          claimed: q.claimed === undefined ? undefined : q.claimed === 'true',
          limit,
          after: q.after,
          search: q.q ? (parseSearch(q.q) ?? undefined) : undefined,
        }) ?? unknownCursor();
      return { data: rows.slice(0, limit).map(summaryOf), has_more: rows.length > limit };
    },

    /**
     * The caught message a `/sandbox/messages/{id}` path names: an `eml_…` id as it is, or the `msg_…` id of a `/v1`
     * message, which names its caught copy (the first one caught: store.caughtOf). A `/v1` message with none is a 404
     * that says why, from its status.
     */
    caughtId(id: string): string {
      if (!id.startsWith('msg_')) return id;
      return store.caughtOf(id) ?? notCaught(id, deps.message?.(id));
    },

    /** GET /sandbox/outbox: the `/v1` messages not caught yet, the last sent first. */
    outbox(q: { to?: string; workspace?: string; limit?: number }): { data: OutboxMessage[]; has_more: boolean } {
      const limit = q.limit ?? 20;
      const workspaceId = workspacesOf(q);
      if (workspaceId?.length === 0) return { data: [], has_more: false };
      const rows = store.outbox({ to: q.to, workspaceId, limit: limit + 1 });
      return {
        data: rows.slice(0, limit).map((r) => ({
          id: r.id,
          status: r.status,
          from: r.from_header,
          to: r.to_addrs,
          cc: r.cc_addrs,
          subject: r.subject,
          created_at: iso(r.created_at),
          scheduled_at: r.scheduled_at === null ? null : iso(r.scheduled_at),
          workspace: { id: r.workspace_id, name: r.workspace_name },
        })),
        has_more: rows.length > limit,
      };
    },

    /** One message in full: envelope, headers, body, DKIM verdict and, for a `/v1` message, its timeline. */
    async get(id: string): Promise<CaughtMessage> {
      const r = row(id);
      const headers: CaughtMessage['headers'] = r.headers;
      const events = timelineOf(r);
      const { omitted, ...body } = await bodyOf(r);
      return {
        ...summaryOf(store.summary(r.id)!),
        envelope: { mail_from: r.mail_from, rcpt_to: r.rcpt_to },
        headers,
        ...body,
        truncated: omitted !== 0,
        omitted: omittedNotes(omitted),
        dkim: await dkimOf(r),
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
     * The mark is kept with the message, so a wait in another process sees it.
     */
    claim(id: string): { taken: boolean; message: CaughtMessageSummary } {
      const taken = store.claim(id, clock.now());
      const summary = store.summary(id) ?? noMessage();
      return { taken, message: summaryOf(summary) };
    },
    /** Marks a message read (now) or unread; the message as listed. */
    markRead(id: string, read: boolean): CaughtMessageSummary {
      if (!store.setRead(id, read ? clock.now() : null)) noMessage();
      publish({ event: 'read', data: { id, read } });
      return summaryOf(store.summary(id)!);
    },

    /** The workspaces whose mail the inbox holds, by name (the inbox's workspace filter). */
    workspaces: () => store.workspaces(),

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
