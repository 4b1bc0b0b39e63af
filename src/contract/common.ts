import { z } from 'zod';
import { ID_CHARS } from '../lib/ids.js';

/** The only dated version served; also the default when a request names none (§9). */
export const SERVICE_VERSION = '2026-08-01';
export const VERSION_HEADER = 'Service-Version';
export const DOCS_BASE = 'https://docs.svc.dev/errors/';

/** Every error code the service answers with, its HTTP status and its title (decisions.md "Error codes"). */
export const ERROR_CODES = {
  invalid_request: [400, 'Invalid request'],
  invalid_json: [400, 'Invalid JSON'],
  unsupported_content_type: [400, 'Unsupported content type'],
  unsupported_version: [400, 'Unsupported version'],
  missing_credentials: [401, 'Missing credentials'],
  invalid_credentials: [401, 'Invalid email or password'],
  invalid_api_key: [401, 'Invalid API key'],
  invalid_token: [401, 'Invalid access token'],
  invalid_refresh_token: [401, 'Invalid refresh token'],
  insufficient_scope: [403, 'Insufficient scope'],
  ip_not_allowed: [403, 'IP address not allowed'],
  workspace_suspended: [403, 'Workspace suspended'],
  invite_required: [403, 'Invite required'],
  session_required: [403, 'Session required'],
  api_key_required: [403, 'API key required'],
  workspace_required: [403, 'Workspace required'],
  not_a_member: [403, 'Not a member of this workspace'],
  forbidden: [403, 'Forbidden'],
  domain_not_allowed: [403, 'Domain not allowed for this key'],
  live_sending_locked: [403, 'Live sending locked'],
  not_found: [404, 'Not found'],
  method_not_allowed: [405, 'Method not allowed'],
  idempotency_conflict: [409, 'Idempotency key reused with a different body'],
  conflict: [409, 'Conflict'],
  payload_too_large: [413, 'Payload too large'],
  validation_failed: [422, 'Validation failed'],
  password_too_short: [422, 'Password too short'],
  password_breached: [422, 'Password found in a breach'],
  email_taken: [422, 'Email already registered'],
  verification_token_invalid: [422, 'Verification token invalid'],
  domain_not_verified: [422, 'Domain not verified'],
  domain_exists: [422, 'Domain already exists'],
  domain_in_use: [422, 'Domain in use'],
  message_not_cancellable: [422, 'Message not cancellable'],
  endpoint_limit_reached: [422, 'Webhook endpoint limit reached'],
  template_not_found: [422, 'Template not found'],
  rate_limited: [429, 'Too many requests'],
  content_blocked: [451, 'Content blocked'],
  internal_error: [500, 'Internal error'],
} as const satisfies Record<string, readonly [number, string]>;

export type ErrorCode = keyof typeof ERROR_CODES;

export function statusOf(code: ErrorCode): number {
  return ERROR_CODES[code][0];
}

/** The stable `type` URI of a Problem with this code; `docs_url` is the same page. */
export function problemType(code: string): string {
  return `${DOCS_BASE}${code}`;
}

export const FieldError = z.object({
  path: z.string(),
  code: z.string(),
  message: z.string(),
});
export type FieldError = z.infer<typeof FieldError>;

/** RFC 9457 problem details, as every error response carries (§2 Problem). */
export const Problem = z.object({
  type: z.string(),
  title: z.string(),
  status: z.number().int(),
  code: z.string(),
  detail: z.string().optional(),
  request_id: z.string().optional(),
  docs_url: z.string().optional(),
  errors: z.array(FieldError).optional(),
  waitlist_url: z.string().optional(),
});
export type Problem = z.infer<typeof Problem>;

/** A timestamp the service writes: UTC with `Z`. */
export const Timestamp = z.iso.datetime({ offset: false });
/** A timestamp a client sends: any UTC offset is accepted. */
export const InputTimestamp = z.iso.datetime({ offset: true });

/** The kinds of id a request may carry (decisions.md "ids"), as a message names each. */
const ID_KINDS = {
  dom: 'a domain id',
  ws: 'a workspace id',
  key: 'an API key id',
  msg: 'a message id',
  evt: 'an event id',
  whk: 'a webhook endpoint id',
  eml: 'a caught message id',
} as const;
export type IdKind = keyof typeof ID_KINDS;

/**
 * An id of one kind as a request carries it (prefix + `_` + 24 base62 characters): the one rule every id field and
 * query parameter follows, so a malformed id is refused before any lookup.
 */
export function Id(kind: IdKind) {
  const message = `must be ${ID_KINDS[kind]}: ${kind}_ followed by ${ID_CHARS} letters and digits`;
  return z.string({ error: message }).regex(new RegExp(`^${kind}_[0-9A-Za-z]{${ID_CHARS}}$`));
}

/** The `limit` query parameter: 1–100 items a page. */
export const PageLimit = z
  .string({ error: 'must be a whole number from 1 to 100' })
  .regex(/^\d+$/)
  .transform(Number)
  .pipe(z.number({ error: 'must be a whole number from 1 to 100' }).int().min(1).max(100));

/** `limit` (1–100, default 20) and `after` (the id of the last item seen: an id of the listed kind). */
export function listQuery(kind: IdKind) {
  return z.strictObject({ limit: PageLimit.optional(), after: Id(kind).optional() });
}
export type ListQuery = z.output<ReturnType<typeof listQuery>>;

export function listOf<T extends z.ZodType>(item: T) {
  return z.object({ data: z.array(item), has_more: z.boolean() });
}

export const Empty = z.strictObject({});
