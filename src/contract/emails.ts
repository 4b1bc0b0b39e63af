import * as z from 'zod';
import { lazySchema } from './lazy.js';
import { InputTimestamp, Timestamp } from './common.js';

export const MAX_RECIPIENTS = 50;
export const MAX_REPLY_TO = 10;
export const MAX_ATTACHMENTS = 20;
export const MAX_TAGS = 50;
export const MAX_SUBJECT = 998;
export const MAX_BATCH = 100;
/**
 * A custom header's value: at most one line of mail (RFC 5322 section 2.1.1), and at most MAX_HEADERS of them, so a
 * message's header block stays far below what mail readers take (1 MiB).
 */
export const MAX_HEADER_VALUE = 998;
export const MAX_HEADERS = 100;
export const IDEMPOTENCY_HEADER = 'Idempotency-Key';

export const Tag = lazySchema(() =>
  z.strictObject({
    name: z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, 'must be 1 to 64 letters, digits, _ or -'),
    value: z.string().min(1).max(128),
  }),
);
export type Tag = z.infer<typeof Tag>;

export const Attachment = lazySchema(() =>
  z.strictObject({
    filename: z.string().min(1).max(255),
    content: z.string().optional(),
    url: z.string().max(2048).optional(),
    /** The same as `url` (Resend's name for a remote attachment's address; its SDKs send it). */
    path: z.string().max(2048).optional(),
    content_type: z.string().max(255).optional(),
    content_id: z.string().max(255).optional(),
  }),
);
export type Attachment = z.infer<typeof Attachment>;

const Address = lazySchema(() => z.string().max(998));
/**
 * A list of at most `max` addresses, or one address given as a plain string (as other clients send `cc` and
 * `reply_to`), which becomes a list of one; one wording for a wrong type and for too many.
 */
function Addresses(max: number) {
  const wording = { error: `must be an address or an array of at most ${max} addresses` };
  return z
    .union([Address, z.array(Address, wording).max(max, wording)], wording)
    .transform((v) => (typeof v === 'string' ? [v] : v));
}
const TO_WORDING = { error: `must be an address or an array of 1 to ${MAX_RECIPIENTS} addresses` };

export const SendEmailRequest = lazySchema(() =>
  z.strictObject({
    from: Address,
    to: z.union([Address, z.array(Address, TO_WORDING).min(1, TO_WORDING).max(MAX_RECIPIENTS, TO_WORDING)], TO_WORDING),
    cc: Addresses(MAX_RECIPIENTS).optional(),
    bcc: Addresses(MAX_RECIPIENTS).optional(),
    reply_to: Addresses(MAX_REPLY_TO).optional(),
    subject: z.string().max(MAX_SUBJECT).optional(),
    html: z.string().optional(),
    text: z.string().optional(),
    template_id: z.string().max(255).optional(),
    template_data: z.record(z.string(), z.unknown()).optional(),
    attachments: z.array(Attachment).max(MAX_ATTACHMENTS).optional(),
    headers: z
      .record(z.string(), z.string().max(MAX_HEADER_VALUE))
      .refine((h) => Object.keys(h).length <= MAX_HEADERS, { error: `must have at most ${MAX_HEADERS} fields` })
      .optional(),
    tags: z.array(Tag).max(MAX_TAGS).optional(),
    tracking: z.strictObject({ opens: z.boolean().optional(), clicks: z.boolean().optional() }).optional(),
    scheduled_at: InputTimestamp.optional(),
  }),
);
export type SendEmailRequest = z.infer<typeof SendEmailRequest>;

/** A message's statuses (docs/api.md#message-statuses). */
export const MESSAGE_STATUSES = [
  'queued',
  'scheduled',
  'sending',
  'sent',
  'delivered',
  'bounced',
  'complained',
  'failed',
  'suppressed',
  'cancelled',
] as const;

export const MessageStatus = lazySchema(() => z.enum(MESSAGE_STATUSES));
export type MessageStatus = z.infer<typeof MessageStatus>;

export const MessageAccepted = lazySchema(() =>
  z.object({
    id: z.string(),
    status: z.enum(['queued', 'scheduled']),
    created_at: Timestamp,
  }),
);
export type MessageAccepted = z.infer<typeof MessageAccepted>;

export const TimelineEntry = lazySchema(() =>
  z.object({
    type: z.string(),
    occurred_at: Timestamp,
    detail: z.record(z.string(), z.unknown()),
  }),
);

export const Message = lazySchema(() =>
  z.object({
    id: z.string(),
    status: MessageStatus,
    plane: z.enum(['mailbox', 'transactional', 'campaign']),
    from: z.string(),
    to: z.array(z.string()),
    cc: z.array(z.string()),
    bcc: z.array(z.string()),
    subject: z.string(),
    tags: z.array(Tag),
    scheduled_at: Timestamp.nullable(),
    created_at: Timestamp,
    events: z.array(TimelineEntry),
  }),
);
export type Message = z.infer<typeof Message>;

export const CancelledMessage = lazySchema(() => z.object({ id: z.string(), status: z.literal('cancelled') }));

/** A batch is a JSON array of send requests; each item is validated on its own (207 per item). */
export const SendBatchRequest = lazySchema(() => z.array(z.unknown()).min(1).max(MAX_BATCH));

export const BatchItemResult = lazySchema(() =>
  z.union([
    z.object({ status: z.literal(202), id: z.string(), message_status: z.enum(['queued', 'scheduled']) }),
    z.object({ status: z.number().int(), error: z.record(z.string(), z.unknown()) }),
  ]),
);
export const BatchResult = lazySchema(() => z.object({ data: z.array(BatchItemResult) }));
