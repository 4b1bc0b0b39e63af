import * as z from 'zod';
import { lazySchema } from './lazy.js';
import { Role, Workspace } from './auth.js';
import { Id, InputTimestamp, PageLimit, Timestamp, listOf } from './common.js';
import { ChecksQuery, MessageChecks } from './checks.js';
import { RecordKind } from './domains.js';
import { EventType } from './events.js';
import {
  CHAOS_MAX_DELAY_MS,
  CHAOS_MAX_RETRY_AFTER_S,
  CHAOS_MAX_RULES,
  CHAOS_MAX_SEED,
  CHAOS_MAX_TIMES,
  CHAOS_METHODS,
  SMTP_STAGES,
} from './chaos.js';

/** The demo account `svc serve` creates in a fresh data directory (and on every start with `--memory`). */
export const Seed = lazySchema(() =>
  z.object({
    email: z.string(),
    password: z.string(),
    user_id: z.string(),
    workspace_id: z.string(),
    domain: z.string(),
    domain_id: z.string(),
    api_key_test: z.string(),
    api_key_live: z.string(),
  }),
);
export type Seed = z.infer<typeof Seed>;

/**
 * The seed as the ready line reports it: on every start while the seeded account exists (its secrets are kept in the
 * data directory), with a key that was revoked since reported as null.
 */
export const ReadySeed = lazySchema(() =>
  Seed.extend({ api_key_test: z.string().nullable(), api_key_live: z.string().nullable() }),
);
export type ReadySeed = z.infer<typeof ReadySeed>;

/** Caught messages `svc serve` keeps unless told otherwise (`--max-messages`). */
export const DEFAULT_MAX_MESSAGES = 10_000;

/** What `svc serve` keeps (`--max-messages`, `--max-age`); null where there is no limit. */
export const Retention = lazySchema(() =>
  z.object({
    /** Caught messages kept, the newest; older ones are removed. */
    max_messages: z.number().int().nullable(),
    /** Seconds of service clock after which caught mail, and `/v1` messages and events, are removed. */
    max_age_seconds: z.number().int().nullable(),
  }),
);
export type Retention = z.infer<typeof Retention>;

/** The one JSON line `svc serve` prints on stdout once both listeners are up. */
export const ReadyLine = lazySchema(() =>
  z.object({
    ready: z.literal(true),
    api: z.string(),
    smtp: z.string(),
    inbox: z.string(),
    admin_token: z.string(),
    seed: ReadySeed.nullable(),
    retention: Retention,
    /** SMTP submission with STARTTLS (`smtp://HOST:PORT`): AUTH with an API key; null when turned off. */
    submission: z.string().nullable(),
    /** SMTP submission with implicit TLS (`smtps://HOST:PORT`); null when turned off. */
    submissions: z.string().nullable(),
    /** The certificate SMTP TLS presents (sink STARTTLS, submission): its file (null: made in memory) and fingerprint. */
    smtp_tls: z.object({ cert: z.string().nullable(), fingerprint_sha256: z.string() }),
  }),
);
export type ReadyLine = z.infer<typeof ReadyLine>;

/** How the admin token of `svc serve` begins (`adm_` + 32 base62 characters); it is no /v1 credential. */
export const ADMIN_TOKEN_PREFIX = 'adm_';

/** Sandbox routes of `svc serve` (outside `/v1`, admin token). Shared with the CLI's `svc sandbox` and `svc inbox`. */
export const CreateInviteRequest = lazySchema(() =>
  z.strictObject({
    max_uses: z.number().int().min(1).max(1_000_000).optional(),
    expires_at: InputTimestamp.optional(),
  }),
);
export const Invite = lazySchema(() =>
  z.object({ id: z.string(), code: z.string(), max_uses: z.number().int(), expires_at: Timestamp.nullable() }),
);

export const CreateSandboxWorkspaceRequest = lazySchema(() =>
  z.strictObject({
    email: z.email().max(254),
    name: z.string().trim().min(1).max(128),
    role: Role,
  }),
);

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

/** `POST /sandbox/messages/{id}/claim`: whether this call took the message (false: a wait had taken it before). */
export const ClaimedMessage = lazySchema(() => z.object({ taken: z.boolean(), message: CaughtMessageSummary }));
export type ClaimedMessage = z.infer<typeof ClaimedMessage>;

export const CaughtAttachment = lazySchema(() =>
  z.object({
    filename: z.string().nullable(),
    content_type: z.string(),
    size: z.number().int(),
    content_id: z.string().nullable(),
  }),
);

/** One delivery attempt of an event to an endpoint. */
export const WebhookAttempt = lazySchema(() =>
  z.object({
    /** The same for every attempt of one delivery (a redelivery is another). */
    delivery_id: z.number().int(),
    endpoint_id: z.string(),
    event_id: z.string(),
    event_type: z.string(),
    /** 1 for the first attempt of a delivery (a redelivery starts again at 1). */
    attempt: z.number().int(),
    /** When the attempt started, service clock. */
    at: Timestamp,
    /** The receiver's HTTP status; null when no response came (connection error, timeout). */
    status_code: z.number().int().nullable(),
    /** Why the attempt failed (connection refused, timeout, a redirect, a non-2xx status); null on success. */
    error: z.string().nullable(),
    duration_ms: z.number().int(),
    ok: z.boolean(),
  }),
);
export type WebhookAttempt = z.infer<typeof WebhookAttempt>;

/** One delivery of an event to a webhook endpoint (a redelivery is another), with its attempts so far, oldest first. */
export const WebhookDelivery = lazySchema(() =>
  z.object({
    delivery_id: z.number().int(),
    endpoint_id: z.string(),
    /** The endpoint's URL; null once the endpoint has been removed. */
    url: z.string().nullable(),
    attempts: z.array(WebhookAttempt),
  }),
);
export type WebhookDelivery = z.infer<typeof WebhookDelivery>;

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
    /** The `/v1` message's events timeline, oldest first; null for mail from other programs. */
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
 * `GET /sandbox/messages/{id}/html`: `remote_images=allow` lets the HTML load remote images and styles; `appearance`
 * shows it as a reader in that mode sees it: `light` or `dark` (its `prefers-color-scheme` styles for that scheme,
 * whatever the browser prefers), or `inverted` (its light styles with colours inverted, images kept, as some
 * dark-mode clients force). Without it, the HTML is left to the browser's preference.
 */
/**
 * A view token (`view_…`): what the inbox page gives the views it opens by address alone (a message's HTML in its
 * frame, a download link, an image) instead of its session, which it sends only in a header. One opens that one
 * message's views for as long as the page's session lasts (docs/local-server.md#who-can-open-the-inbox).
 */
const viewToken = () => z.string().max(200).optional();
export const ViewQuery = lazySchema(() => z.strictObject({ view: viewToken() }));

export const MessageHtmlQuery = lazySchema(() =>
  z.strictObject({
    view: viewToken(),
    remote_images: z.enum(['allow']).optional(),
    appearance: z.enum(['light', 'dark', 'inverted']).optional(),
  }),
);
export type MessageAppearance = NonNullable<z.infer<typeof MessageHtmlQuery>['appearance']>;

export const ClockState = lazySchema(() => z.object({ now: Timestamp, mode: z.enum(['real', 'manual']) }));
export type ClockState = z.infer<typeof ClockState>;

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
export const MoveClockRequest = lazySchema(() =>
  z
    .strictObject({
      advance_seconds: z
        .number()
        .min(0)
        .max(10 * 365 * 86400)
        .optional(),
      to: InputTimestamp.optional(),
    })
    .refine((b) => (b.advance_seconds === undefined) !== (b.to === undefined), {
      message: 'give exactly one of advance_seconds and to',
    }),
);
export const MovedClock = lazySchema(() => z.object({ now: Timestamp, ran: z.number().int() }));
export type MovedClock = z.infer<typeof MovedClock>;

export const PublishDomainRequest = lazySchema(() =>
  z.strictObject({
    kinds: z.array(RecordKind).min(1).optional(),
    state: z.enum(['visible', 'propagating']).optional(),
  }),
);
export const ZoneRecord = lazySchema(() =>
  z.object({
    host: z.string(),
    type: z.string(),
    values: z.array(z.string()),
    state: z.enum(['visible', 'propagating']),
  }),
);
export const PutDnsRequest = lazySchema(() =>
  z.strictObject({
    host: z.string().min(1).max(253),
    type: z.enum(['TXT', 'CNAME', 'MX']),
    values: z.array(z.string().max(4096)).min(1).max(50),
    state: z.enum(['visible', 'propagating']).optional(),
  }),
);
export const DeleteDnsQuery = lazySchema(() =>
  z.strictObject({ host: z.string().min(1).max(253), type: z.enum(['TXT', 'CNAME', 'MX']) }),
);

export const WebhookStatus = lazySchema(() => z.enum(['active', 'disabled_by_failures']));
/** A webhook endpoint of a workspace (managed through the sandbox: `/v1/webhooks` is not served). */
export const WebhookEndpoint = lazySchema(() =>
  z.object({
    id: z.string(),
    workspace_id: z.string(),
    url: z.string(),
    /** The event types delivered; null for every type. */
    events: z.array(z.string()).nullable(),
    /** `whsec_…`; signs every delivery. */
    secret: z.string(),
    status: WebhookStatus,
    created_at: Timestamp,
    disabled_at: Timestamp.nullable(),
    /** Until when (service clock) the secret before the last rotation still signs beside the new one; null if none. */
    previous_secret_expires_at: Timestamp.nullable(),
    /** The most recent attempts, newest first. */
    recent_attempts: z.array(WebhookAttempt),
  }),
);
export type WebhookEndpoint = z.infer<typeof WebhookEndpoint>;
export const CreateWebhookRequest = lazySchema(() =>
  z.strictObject({
    workspace_id: Id('ws'),
    url: z.string().max(2048),
    events: z.array(EventType).min(1).max(16).optional(),
  }),
);
export const WebhooksQuery = lazySchema(() => z.strictObject({ workspace_id: Id('ws').optional() }));
/** `GET /sandbox/webhooks`: the endpoints, oldest first, and the names of their workspaces. */
export const WebhookList = lazySchema(() =>
  z.object({
    data: z.array(WebhookEndpoint),
    workspaces: z.array(z.object({ id: z.string(), name: z.string() })),
  }),
);
export type WebhookList = z.infer<typeof WebhookList>;
export const RedeliverRequest = lazySchema(() => z.strictObject({ endpoint_id: Id('whk').optional() }));
/** 202 to a redelivery: one new delivery per endpoint, attempts numbered from 1. */
export const Redelivery = lazySchema(() => z.object({ event_id: z.string(), endpoint_ids: z.array(z.string()) }));
export type Redelivery = z.infer<typeof Redelivery>;

const WHOLE = 'must be a whole number';
/** A whole number from `min` to `max`: a fraction is a broken rule (422 naming the field), not a wrong type. */
const whole = (min: number, max: number) =>
  z
    .number()
    .min(min)
    .max(max)
    .refine((n) => Number.isInteger(n), WHOLE);

/**
 * What a chaos rule matches: `/v1` requests by `method` and `path` (a `/v1` path, `{name}` standing for one segment:
 * `/v1/emails/{id}`; both optional, so `{}` is every `/v1` request), or one stage of the SMTP sink's sessions (`smtp`).
 */
export const ChaosMatch = lazySchema(() =>
  z.strictObject({
    method: z
      .string()
      .transform((m) => m.toUpperCase())
      .pipe(z.enum(CHAOS_METHODS))
      .optional(),
    path: z
      .string()
      .max(512)
      .regex(/^\/v1\/[^?#\s]*$/, 'must be a /v1 path such as /v1/emails or /v1/emails/{id} (no query string)')
      .optional(),
    smtp: z.enum(SMTP_STAGES).optional(),
  }),
);

/**
 * What a chaos rule does, one of: `status` (a Problem of that status, with `retry_after` seconds in `Retry-After`),
 * `delay_ms` (hold the request, then handle it as usual), `reset` (drop the connection), or for an SMTP match `code`
 * (answer the stage with that reply, and `message`).
 */
export const ChaosAction = lazySchema(() =>
  z.strictObject({
    status: whole(400, 599).optional(),
    retry_after: whole(0, CHAOS_MAX_RETRY_AFTER_S).optional(),
    delay_ms: whole(0, CHAOS_MAX_DELAY_MS).optional(),
    reset: z.literal(true).optional(),
    code: whole(400, 599).optional(),
    message: z
      .string()
      .min(1)
      .max(200)
      .regex(/^[^\r\n]*$/, 'must be one line')
      .optional(),
  }),
);

const HTTP_ACTIONS = ['status', 'delay_ms', 'reset'] as const;

/** One chaos rule as `PUT /sandbox/chaos` takes it. */
export const ChaosRule = lazySchema(() =>
  z
    .strictObject({
      match: ChaosMatch,
      action: ChaosAction,
      /** Apply to the next N matches, then retire. */
      times: whole(1, CHAOS_MAX_TIMES).optional(),
      /** The chance (0–1) that a match is applied, drawn from the seed. */
      probability: z.number().min(0).max(1).optional(),
    })
    .superRefine((rule, ctx) => {
      const { match, action } = rule;
      const issue = (path: (string | number)[], message: string) => ctx.addIssue({ code: 'custom', path, message });
      const smtp = match.smtp !== undefined;
      if (smtp) {
        for (const k of ['method', 'path'] as const) {
          if (match[k] !== undefined) issue(['match', k], 'an SMTP match (smtp) takes no method or path');
        }
      }
      const given = [...HTTP_ACTIONS, 'code' as const].filter((k) => action[k] !== undefined);
      const [first, second] = given;
      if (first === undefined) {
        issue(['action'], smtp ? 'must give code (the SMTP reply)' : 'must give one of status, delay_ms or reset');
      } else if (second !== undefined) {
        issue(['action', second], `give one action: ${given.join(' and ')} cannot go together`);
      }
      for (const k of given) {
        if (smtp && k !== 'code') issue(['action', k], 'an SMTP match takes only a code action');
        if (!smtp && k === 'code') {
          issue(['action', 'code'], 'code answers an SMTP stage: give match.smtp, or status for an HTTP answer');
        }
      }
      if (action.retry_after !== undefined && action.status === undefined) {
        issue(['action', 'retry_after'], 'goes with status');
      }
      if (action.message !== undefined && action.code === undefined) issue(['action', 'message'], 'goes with code');
    }),
);
export type ChaosRule = z.input<typeof ChaosRule>;

export const SetChaosRequest = lazySchema(() =>
  z.strictObject({
    rules: z.array(ChaosRule).max(CHAOS_MAX_RULES),
    /** Seeds the draws of `probability`: the same seed and the same requests fail the same way. */
    seed: whole(0, CHAOS_MAX_SEED).optional(),
  }),
);

/** A rule as listed: as given, with how many more matches it applies to (null: no limit). */
export const ListedChaosRule = lazySchema(() =>
  z.object({
    match: z.object({
      method: z.string().optional(),
      path: z.string().optional(),
      smtp: z.enum(SMTP_STAGES).optional(),
    }),
    action: z.object({
      status: z.number().int().optional(),
      retry_after: z.number().int().optional(),
      delay_ms: z.number().int().optional(),
      reset: z.literal(true).optional(),
      code: z.number().int().optional(),
      message: z.string().optional(),
    }),
    times: z.number().int().optional(),
    probability: z.number().optional(),
    remaining: z.number().int().nullable(),
  }),
);
export type ListedChaosRule = z.infer<typeof ListedChaosRule>;
/** The rules in force, in order (a rule's index is its place here, the `Svc-Chaos` header), and the seed. */
export const ChaosState = lazySchema(() => z.object({ rules: z.array(ListedChaosRule), seed: z.number().int() }));
export type ChaosState = z.infer<typeof ChaosState>;

export const sandboxEndpoints = {
  createInvite: { method: 'POST', path: '/sandbox/invites', body: CreateInviteRequest, success: [201, Invite] },
  createSandboxWorkspace: {
    method: 'POST',
    path: '/sandbox/workspaces',
    body: CreateSandboxWorkspaceRequest,
    success: [201, Workspace],
  },
  suspendWorkspace: { method: 'POST', path: '/sandbox/workspaces/:id/suspend', success: [200, Workspace] },
  activateWorkspace: { method: 'POST', path: '/sandbox/workspaces/:id/activate', success: [200, Workspace] },
  closeWorkspace: { method: 'POST', path: '/sandbox/workspaces/:id/close', success: [200, Workspace] },
  listMessages: {
    method: 'GET',
    path: '/sandbox/messages',
    query: MessagesQuery,
    success: [200, lazySchema(() => listOf(CaughtMessageSummary))],
  },
  /** The `/v1` messages not caught yet (scheduled, queued, being handed over), newest first. */
  listOutbox: {
    method: 'GET',
    path: '/sandbox/outbox',
    query: OutboxQuery,
    success: [200, lazySchema(() => listOf(OutboxMessage))],
  },
  getMessage: { method: 'GET', path: '/sandbox/messages/:id', success: [200, CaughtMessage] },
  getRawMessage: {
    method: 'GET',
    path: '/sandbox/messages/:id/raw',
    query: ViewQuery,
    views: true,
    success: [200, null],
  },
  deleteMessages: { method: 'DELETE', path: '/sandbox/messages', success: [204, null] },
  deleteMessage: { method: 'DELETE', path: '/sandbox/messages/:id', success: [204, null] },
  getMessageHtml: {
    method: 'GET',
    path: '/sandbox/messages/:id/html',
    query: MessageHtmlQuery,
    views: true,
    success: [200, null],
  },
  getAttachment: {
    method: 'GET',
    path: '/sandbox/messages/:id/attachments/:n',
    query: ViewQuery,
    views: true,
    success: [200, null],
  },
  getMessageChecks: {
    method: 'GET',
    path: '/sandbox/messages/:id/checks',
    query: ChecksQuery,
    success: [200, MessageChecks],
  },
  markMessageRead: { method: 'POST', path: '/sandbox/messages/:id/read', success: [200, CaughtMessageSummary] },
  markMessageUnread: { method: 'POST', path: '/sandbox/messages/:id/unread', success: [200, CaughtMessageSummary] },
  claimMessage: { method: 'POST', path: '/sandbox/messages/:id/claim', success: [200, ClaimedMessage] },
  getClock: { method: 'GET', path: '/sandbox/clock', success: [200, ClockState] },
  moveClock: { method: 'POST', path: '/sandbox/clock', body: MoveClockRequest, success: [200, MovedClock] },
  publishDomain: {
    method: 'POST',
    path: '/sandbox/domains/:id/publish',
    body: PublishDomainRequest,
    success: [200, lazySchema(() => z.object({ records: z.array(ZoneRecord) }))],
  },
  // Up to 50 values of 4,096 characters.
  putDns: {
    method: 'PUT',
    path: '/sandbox/dns',
    body: PutDnsRequest,
    maxBody: 1024 * 1024,
    success: [200, ZoneRecord],
  },
  deleteDns: { method: 'DELETE', path: '/sandbox/dns', query: DeleteDnsQuery, success: [204, null] },
  createWebhook: {
    method: 'POST',
    path: '/sandbox/webhooks',
    body: CreateWebhookRequest,
    success: [201, WebhookEndpoint],
  },
  listWebhooks: { method: 'GET', path: '/sandbox/webhooks', query: WebhooksQuery, success: [200, WebhookList] },
  deleteWebhook: { method: 'DELETE', path: '/sandbox/webhooks/:id', success: [204, null] },
  rotateWebhookSecret: { method: 'POST', path: '/sandbox/webhooks/:id/rotate-secret', success: [200, WebhookEndpoint] },
  enableWebhook: { method: 'POST', path: '/sandbox/webhooks/:id/enable', success: [200, WebhookEndpoint] },
  redeliverEvent: {
    method: 'POST',
    path: '/sandbox/events/:id/redeliver',
    body: RedeliverRequest,
    success: [202, Redelivery],
  },
  getChaos: { method: 'GET', path: '/sandbox/chaos', success: [200, ChaosState] },
  setChaos: { method: 'PUT', path: '/sandbox/chaos', body: SetChaosRequest, success: [200, ChaosState] },
  clearChaos: { method: 'DELETE', path: '/sandbox/chaos', success: [204, null] },
} as const satisfies Record<
  string,
  {
    method: string;
    path: string;
    body?: z.ZodType;
    maxBody?: number;
    query?: z.ZodType;
    /** A view of a caught message the inbox page opens by address: also admitted with its view token (`?view=`). */
    views?: true;
    success: readonly [number, z.ZodType | null];
  }
>;
export type SandboxEndpointName = keyof typeof sandboxEndpoints;
/** A page of caught messages, as `GET /sandbox/messages` answers. */
export type CaughtMessagePage = z.infer<(typeof sandboxEndpoints)['listMessages']['success'][1]>;
