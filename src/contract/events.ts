import * as z from 'zod';
import { lazySchema } from './lazy.js';
import { Timestamp, listQuery } from './common.js';
import type { DomainStatus, Finding } from './domains.js';
import type { Tag } from './emails.js';

/** Every event type (docs/api.md#events); the service produces the `email.*` and `domain.*` ones. */
export const EVENT_TYPES = [
  'email.queued',
  'email.sent',
  'email.delivered',
  'email.deferred',
  'email.bounced',
  'email.complained',
  'email.failed',
  'email.opened',
  'email.clicked',
  'contact.unsubscribed',
  'domain.verified',
  'domain.degraded',
  'campaign.completed',
  'campaign.throttled',
  'campaign.blocked',
  'tenant.limit_reached',
] as const;
export const EventType = lazySchema(() => z.enum(EVENT_TYPES));
export type EventType = z.infer<typeof EventType>;

/** Longest a `GET /events?wait=` request is held, seconds. */
export const MAX_EVENTS_WAIT = 30;

/**
 * An event as listed by `GET /events` and as POSTed to a webhook endpoint (docs/api.md#delivery). `type` is a
 * plain string here so that a client keeps reading a stream that gains a new type.
 */
export const Event = lazySchema(() =>
  z.object({
    id: z.string(),
    type: z.string(),
    created_at: Timestamp,
    api_version: z.string(),
    data: z.record(z.string(), z.unknown()),
  }),
);
export type Event = z.infer<typeof Event>;

/** `type` may be repeated (`type=a&type=b`) or comma-separated (`type=a,b`). */
const TypeFilter = lazySchema(() =>
  z.preprocess(
    (v) => (Array.isArray(v) ? v : [v]).flatMap((s) => String(s).split(',')).filter((s) => s !== ''),
    z.array(EventType).min(1).max(EVENT_TYPES.length),
  ),
);

/** `GET /events`: oldest first after `after`; `wait` holds the request up to that many seconds for a newer event. */
const WAIT_WORDING = { error: `must be a whole number of seconds from 0 to ${MAX_EVENTS_WAIT}` };
export const EventsQuery = lazySchema(() =>
  listQuery('evt').extend({
    type: TypeFilter.optional(),
    wait: z
      .string(WAIT_WORDING)
      .regex(/^\d+$/, WAIT_WORDING)
      .transform(Number)
      .pipe(z.number(WAIT_WORDING).int(WAIT_WORDING).min(0, WAIT_WORDING).max(MAX_EVENTS_WAIT, WAIT_WORDING))
      .optional(),
  }),
);
export type EventsQuery = z.output<typeof EventsQuery>;

/** What every `email.*` event's `data` holds (docs/api.md#events). */
export interface EmailEventBase {
  message_id: string;
  /** The From header as sent. */
  from: string;
  subject: string;
  tags: Tag[];
}

/** An `email.*` event about the whole message: `to` lists every recipient. */
export interface MessageEventData extends EmailEventBase {
  to: string[];
}

/** An `email.*` event about one recipient. */
export interface RecipientEventData extends EmailEventBase {
  to: string;
}

/** `domain.verified` and `domain.degraded`. */
export interface DomainEventData {
  domain_id: string;
  name: string;
  status: DomainStatus;
  findings: Finding[];
}

/** The `data` of each event type the service produces (docs/api.md#events). */
export interface EventDataMap {
  'email.queued': MessageEventData;
  'email.sent': MessageEventData;
  /** `reason`: why (`suppressed` when every recipient was), quoting the provider's last answer otherwise. */
  'email.failed': MessageEventData & { reason: string };
  'email.delivered': RecipientEventData;
  /** `smtp_code` is null when no answer came; the next attempt is at `next_attempt_at`. */
  'email.deferred': RecipientEventData & { smtp_code: string | null; reason: string; next_attempt_at: string };
  'email.bounced': RecipientEventData & {
    bounce: { class: 'hard' | 'soft' | 'block' | 'technical'; subtype: string; smtp_code: string };
  };
  'email.complained': RecipientEventData;
  'email.opened': RecipientEventData & { user_agent: string | null; ip: string };
  'email.clicked': RecipientEventData & { url: string; user_agent: string | null; ip: string };
  'domain.verified': DomainEventData;
  'domain.degraded': DomainEventData;
}

/** The `data` of an event of type `T`; a type the service does not produce yet has plain JSON there. */
export type EventData<T extends EventType = EventType> = T extends keyof EventDataMap
  ? EventDataMap[T]
  : Record<string, unknown>;

/**
 * An event as a webhook receives it, typed by its `type`: a union that narrows `data` when `type` is checked
 * (`if (e.type === 'email.bounced') e.data.bounce.class`).
 */
export type TypedEvent<T extends EventType = EventType> = {
  [K in T]: { id: string; type: K; created_at: string; api_version: string; data: EventData<K> };
}[T];
