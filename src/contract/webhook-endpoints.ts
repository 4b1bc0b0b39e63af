// Webhook endpoints of a workspace and their delivery attempts, managed through a local server's `/sandbox/webhooks`
// (`/v1/webhooks` is not served).
import * as z from 'zod';
import { Id, Timestamp } from './common.js';
import { EventType } from './events.js';
import { lazySchema } from './lazy.js';

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
