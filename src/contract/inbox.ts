// The caught mail of a local server (`/sandbox/messages`, `/sandbox/outbox`, `/sandbox/stream`): what its inbox
// page, `svc inbox` and svc-mail/testing read.
import * as z from 'zod';
import type { ClockState } from './clock.js';
import { Id, InputTimestamp, PageLimit, Timestamp, listOf } from './common.js';
import { lazySchema } from './lazy.js';
import { WebhookDelivery } from './webhook-endpoints.js';

/** Caught messages `svc serve` keeps unless told otherwise (`--max-messages`). */
export const DEFAULT_MAX_MESSAGES = 10_000;

/** One caught message as `GET /sandbox/messages` lists it. */
export const CaughtMessageSummary = lazySchema(() =>
  z.object({
    id: z.string(),
    message_id: z.string().nullable(),
    from: z.string().nullable(),
    to: z.array(z.string()),
    cc: z.array(z.string()),
    subject: z.string().nullable(),
    received_at: Timestamp,
    size: z.number().int(),
    /** The `/v1` message's current status (`delivered`, `bounced`, …); null for mail from other programs. */
    status: z.string().nullable(),
    /** The workspace that sent it through `/v1`; null for mail from other programs. */
    workspace: z.object({ id: z.string(), name: z.string() }).nullable(),
    /** The start of the body text, whitespace collapsed (at most 200 characters). */
    preview: z.string().nullable(),
    /** Whether the message carries attachments (inline images referenced from the HTML do not count). */
    has_attachments: z.boolean(),
    /** Whether it was marked read (the inbox page marks a message read when it is opened). */
    read: z.boolean(),
    /** Whether a wait for mail returned it (`POST /sandbox/messages/{id}/claim`): no later wait returns it again. */
    claimed: z.boolean(),
    /** The `/v1` message's tags; empty for mail from other programs. */
    tags: z.array(z.object({ name: z.string(), value: z.string() })),
  }),
);
export type CaughtMessageSummary = z.infer<typeof CaughtMessageSummary>;

/**
 * `POST /sandbox/messages/{id}/claim`: whether this call took the message (false: a wait had taken it before), and the
 * message in full, as `GET /sandbox/messages/{id}` gives it: a wait has what it came for in one round trip.
 */
export const ClaimedMessage = lazySchema(() => z.object({ taken: z.boolean(), message: CaughtMessage }));
export type ClaimedMessage = z.infer<typeof ClaimedMessage>;

/** A wait's `subject` filter: its text in the subject, in any case (none: every message). */
export const subjectHas = (subject: string | null, text: string | undefined) =>
  text === undefined || (subject ?? '').toLowerCase().includes(text.toLowerCase());

/**
 * A wait's `to` filter in a message's addresses (its envelope recipients, To and Cc): one of them, in any case. The
 * server's query reads the same rule from its index of them.
 */
export const addressedTo = (addresses: readonly string[], to: string) =>
  addresses.some((a) => a.toLowerCase() === to.toLowerCase());

/** Longest a `POST /sandbox/messages/wait` request is held, seconds. */
export const MAX_MESSAGE_WAIT = 60;

/**
 * `POST /sandbox/messages/wait`: the oldest caught message that the filters take and no wait has claimed, claimed for
 * this request (with `claim: false`, only shown: a caller that judges each message itself claims the one it wants by
 * id). `wait` holds the request up to that many seconds for such a message to be caught.
 */
export const MessageWaitRequest = lazySchema(() =>
  z.strictObject({
    /** An envelope recipient, or a To or Cc address, case-insensitively (the listing's `to`). */
    to: z.string().min(1).max(320).optional(),
    /** A workspace by id or name (the listing's `workspace`; one that no workspace has is a 404). */
    workspace: z.string().min(1).max(128).optional(),
    /** Text in the subject, in any case. */
    subject: z.string().max(998).optional(),
    /** Only mail received at or after this time (service clock). */
    since: InputTimestamp.optional(),
    /** Only mail caught after this message (a caller that passed over it). */
    after: Id('eml').optional(),
    /** Whether the message is claimed for this request (default); false: shown, left for a claim by id. */
    claim: z.boolean().optional(),
    /** Seconds (fractions too) to hold the request while no such message is caught (0, the default: answer at once). */
    wait: z.number().min(0).max(MAX_MESSAGE_WAIT).optional(),
  }),
);
export type MessageWaitRequest = z.output<typeof MessageWaitRequest>;

/** The message a wait found, in full (as `GET /sandbox/messages/{id}` gives it); null when none came in time. */
export const MessageWaitResult = lazySchema(() => z.object({ message: CaughtMessage.nullable() }));
export type MessageWaitResult = z.infer<typeof MessageWaitResult>;

export const CaughtAttachment = lazySchema(() =>
  z.object({
    filename: z.string().nullable(),
    content_type: z.string(),
    size: z.number().int(),
    content_id: z.string().nullable(),
  }),
);

/** One entry of a `/v1` message's events timeline (the events `GET /v1/emails/{id}` lists, with their ids). */
export const CaughtMessageEvent = lazySchema(() =>
  z.object({
    id: z.string(),
    type: z.string(),
    occurred_at: Timestamp,
    detail: z.record(z.string(), z.unknown()),
    /** Its webhook deliveries, grouped by endpoint (in the order of their first attempt), then by delivery. */
    deliveries: z.array(WebhookDelivery),
  }),
);
export type CaughtMessageEvent = z.infer<typeof CaughtMessageEvent>;

export const CaughtMessage = lazySchema(() =>
  CaughtMessageSummary.extend({
    envelope: z.object({ mail_from: z.string().nullable(), rcpt_to: z.array(z.string()) }),
    headers: z.array(z.object({ name: z.string(), value: z.string() })),
    text: z.string().nullable(),
    html: z.string().nullable(),
    attachments: z.array(CaughtAttachment),
    /**
     * Whether the view leaves part of the message out: its text or HTML past their first 1 MiB, parts past its first
     * 500, a part's header fields past 1 MiB. The raw source always has all of it.
     */
    truncated: z.boolean().default(false),
    /** What the view leaves out, in words (empty when nothing is). */
    omitted: z.array(z.string()).default([]),
    dkim: z.enum(['pass', 'fail', 'none']),
    /** The `d=` domain of the message's (first) DKIM signature; null when unsigned. */
    dkim_domain: z.string().nullable(),
    /**
     * The message's timeline, oldest first: the `/v1` message's events, and what the relay did with it (`relay.…`
     * entries: releases, relay rules); null for mail from other programs that the relay never had.
     */
    events: z.array(CaughtMessageEvent).nullable(),
  }),
);
export type CaughtMessage = z.infer<typeof CaughtMessage>;

export const MessagesQuery = lazySchema(() =>
  z.strictObject({
    to: z.string().min(1).max(320).optional(),
    workspace_id: Id('ws').optional(),
    /** A workspace by id or name: its mail (sent with its keys, or caught from a client that logged in with one). */
    workspace: z.string().min(1).max(128).optional(),
    limit: PageLimit.optional(),
    after: Id('eml').optional(),
    /** Only mail received at or after this time (service clock). */
    since: InputTimestamp.optional(),
    /** Only mail a wait has claimed (`true`), or that none has (`false`). */
    claimed: z.enum(['true', 'false']).optional(),
    /**
     * A search: words match the subject, sender, recipients and body text (a word matches as a prefix, a "quoted
     * phrase" exactly); `to:`, `from:` and `subject:` limit a word or phrase to that field; `cc:`, `tag:`, `status:`,
     * `before:`, `after:`, `larger:`, `smaller:`, `is:unread`, `is:read` and `has:attachment` filter; `-` before a
     * part excludes it. Every part must match; an unknown operator is a 400.
     */
    q: z.string().max(500).optional(),
  }),
);

/** A `/v1` message not caught yet, as `GET /sandbox/outbox` lists it. */
export const OutboxMessage = lazySchema(() =>
  z.object({
    /** The `/v1` message's id (`msg_…`): once it is caught, every `/sandbox/messages/{id}` route takes it. */
    id: z.string(),
    /** `queued` also while a deferred hand-over waits for its next attempt. */
    status: z.enum(['scheduled', 'queued', 'sending']),
    from: z.string(),
    to: z.array(z.string()),
    cc: z.array(z.string()),
    subject: z.string(),
    created_at: Timestamp,
    scheduled_at: Timestamp.nullable(),
    workspace: z.object({ id: z.string(), name: z.string() }),
  }),
);
export type OutboxMessage = z.infer<typeof OutboxMessage>;

export const OutboxQuery = lazySchema(() =>
  z.strictObject({
    /** Any recipient of the message (To, Cc or Bcc), in any case. */
    to: z.string().min(1).max(320).optional(),
    /** A workspace by id or name. */
    workspace: z.string().min(1).max(128).optional(),
    limit: PageLimit.optional(),
  }),
);

/**
 * A view token (`view_…`): what the inbox page gives the views it opens by address alone (a message's HTML in its
 * frame, a download link, an image) instead of its session, which it sends only in a header. One opens that one
 * message's views for as long as the page's session lasts (docs/local-server.md#who-can-open-the-inbox).
 */
const viewToken = () => z.string().max(200).optional();
export const ViewQuery = lazySchema(() => z.strictObject({ view: viewToken() }));

/**
 * `GET /sandbox/messages/{id}/html`: `remote_images=allow` lets the HTML load remote images and styles; `appearance`
 * shows it as a reader in that mode sees it: `light` or `dark` (its `prefers-color-scheme` styles for that scheme,
 * whatever the browser prefers), or `inverted` (its light styles with colours inverted, images kept, as some
 * dark-mode clients force). Without it, the HTML is left to the browser's preference.
 */
export const MessageHtmlQuery = lazySchema(() =>
  z.strictObject({
    view: viewToken(),
    remote_images: z.enum(['allow']).optional(),
    appearance: z.enum(['light', 'dark', 'inverted']).optional(),
  }),
);
export type MessageAppearance = NonNullable<z.infer<typeof MessageHtmlQuery>['appearance']>;

/**
 * What `GET /sandbox/stream` (`text/event-stream`) sends: one server-sent event per change, named by `event:`, its
 * `data` one line of JSON. `message`: a message was caught (its summary); `status`: a `/v1` message's status changed;
 * `deleted`: messages were deleted (`ids`), or all of them (`all: true`); `read`: a message was marked read or
 * unread; `clock`: the service clock was moved; `webhooks`: webhook attempts were recorded (`event_ids`: the events
 * they delivered) or an endpoint was added, changed or removed (`event_ids` empty). A comment line every 25 s keeps
 * the connection open.
 */
export const InboxStatusChange = lazySchema(() =>
  z.object({ message_id: z.string(), status: z.string(), event_type: z.string() }),
);
export const InboxDeleted = lazySchema(() =>
  z.object({ ids: z.array(z.string()).optional(), all: z.boolean().optional() }),
);
export const InboxRead = lazySchema(() => z.object({ id: z.string(), read: z.boolean() }));
export const InboxWebhooks = lazySchema(() => z.object({ event_ids: z.array(z.string()) }));
export type InboxEvent =
  | { event: 'message'; data: CaughtMessageSummary }
  | { event: 'status'; data: z.infer<typeof InboxStatusChange> }
  | { event: 'deleted'; data: z.infer<typeof InboxDeleted> }
  | { event: 'read'; data: z.infer<typeof InboxRead> }
  | { event: 'clock'; data: z.infer<typeof ClockState> }
  | { event: 'webhooks'; data: z.infer<typeof InboxWebhooks> };
/**
 * The events' names. `GET /sandbox/stream?events=message,status` sends only the events named (comma-separated; every
 * one when absent): a wait for mail asks for `message` alone.
 */
export const INBOX_EVENT_NAMES = [
  'message',
  'status',
  'deleted',
  'read',
  'clock',
  'webhooks',
] as const satisfies readonly InboxEvent['event'][];
/** A page of caught messages, as `GET /sandbox/messages` answers. */
export const CaughtMessagePage = lazySchema(() => listOf(CaughtMessageSummary));
export type CaughtMessagePage = z.infer<typeof CaughtMessagePage>;

/** The `/v1` messages not caught yet, as `GET /sandbox/outbox` answers. */
export const OutboxPage = lazySchema(() => listOf(OutboxMessage));

/**
 * `POST /sandbox/messages/{id}/release`: sends the caught message, its bytes as caught, through the relay
 * (`svc serve --relay-url`) to `to` (one address or several), each of which the relay's allow-list
 * (`--relay-allow`) must admit.
 */
export const ReleaseRequest = lazySchema(() =>
  z.strictObject({
    to: z.union([z.string().min(3).max(320), z.array(z.string().min(3).max(320)).min(1).max(50)]),
  }),
);
export type ReleaseRequest = z.infer<typeof ReleaseRequest>;

/** `GET /sandbox/relay`: the relay of this server as the sandbox shows it, never with its credentials. */
export const RelayInfo = lazySchema(() =>
  z.object({
    configured: z.boolean(),
    /** The relay's URL with its password replaced by `***`; null without a relay. */
    relay: z.string().nullable(),
    /** The envelope sender of what it sends (`--relay-from`); null: each caught message's own. */
    from: z.string().nullable(),
    /** Whom releases and relay rules may reach (`--relay-allow`); empty: anyone. */
    allow: z.array(z.string()),
    /** The relay rules (`--relay-matching`): live mail to matching recipients is relayed as it is caught. */
    matching: z.array(z.string()),
  }),
);
export type RelayInfo = z.infer<typeof RelayInfo>;

/** A release the relay accepted: to whom, through which relay (its URL without the password), and its reply. */
export const ReleaseResult = lazySchema(() =>
  z.object({
    id: z.string(),
    to: z.array(z.string()),
    mail_from: z.string(),
    relay: z.string(),
    /** The relay's reply to the message (`250 2.0.0 Ok: queued as …`). */
    response: z.string(),
    released_at: Timestamp,
  }),
);
export type ReleaseResult = z.infer<typeof ReleaseResult>;
