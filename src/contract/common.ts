import * as z from 'zod';
import { lazySchema } from './lazy.js';
import { ID_CHARS } from './ids.js';

/** The only dated version served; also the default when a request names none (docs/api.md#versioning). */
export const SERVICE_VERSION = '2026-08-01';
export const VERSION_HEADER = 'Service-Version';
export const DOCS_BASE = 'https://docs.svc.dev/errors/';

/** The largest request body of an operation that names no other limit (docs/api.md#body-limits-and-timeouts). */
export const DEFAULT_BODY_LIMIT = 64 * 1024;
/** Where attachments travel (`POST /emails`, `/emails/batch`): 40 MiB. */
export const ATTACHMENT_BODY_LIMIT = 40 * 1024 * 1024;

/** Every error code the service answers with, its HTTP status and its title (docs/errors.md). */
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
  relay_recipient_not_allowed: [403, 'Recipient not allowed by the relay'],
  not_found: [404, 'Not found'],
  method_not_allowed: [405, 'Method not allowed'],
  idempotency_conflict: [409, 'Idempotency key reused with a different body'],
  conflict: [409, 'Conflict'],
  relay_not_configured: [409, 'No relay configured'],
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
  request_timeout: [408, 'Request timeout'],
  rate_limited: [429, 'Too many requests'],
  content_blocked: [451, 'Content blocked'],
  internal_error: [500, 'Internal error'],
  relay_refused: [502, 'The relay refused the message'],
  relay_unreachable: [502, 'The relay could not be reached'],
  unavailable: [503, 'Service unavailable'],
  insufficient_storage: [507, 'Insufficient storage'],
} as const satisfies Record<string, readonly [number, string]>;

export type ErrorCode = keyof typeof ERROR_CODES;

/**
 * Each error code's `name` member: the kind of error in the words of Resend's API, whose SDKs read a failed call's
 * `name`, `message` and `statusCode` (docs/resend.md). Several of our codes share one of its names.
 */
export const ERROR_NAMES = {
  invalid_request: 'validation_error',
  invalid_json: 'validation_error',
  unsupported_content_type: 'validation_error',
  unsupported_version: 'invalid_parameter',
  missing_credentials: 'missing_api_key',
  invalid_credentials: 'invalid_access',
  invalid_api_key: 'invalid_api_key',
  invalid_token: 'invalid_access',
  invalid_refresh_token: 'invalid_access',
  insufficient_scope: 'restricted_api_key',
  ip_not_allowed: 'invalid_access',
  workspace_suspended: 'invalid_access',
  invite_required: 'invalid_access',
  session_required: 'invalid_access',
  api_key_required: 'invalid_access',
  workspace_required: 'invalid_access',
  not_a_member: 'invalid_access',
  forbidden: 'invalid_access',
  domain_not_allowed: 'invalid_from_address',
  live_sending_locked: 'invalid_access',
  not_found: 'not_found',
  method_not_allowed: 'method_not_allowed',
  idempotency_conflict: 'invalid_idempotent_request',
  conflict: 'invalid_parameter',
  relay_not_configured: 'application_error',
  relay_recipient_not_allowed: 'invalid_access',
  payload_too_large: 'validation_error',
  validation_failed: 'validation_error',
  password_too_short: 'validation_error',
  password_breached: 'validation_error',
  email_taken: 'validation_error',
  verification_token_invalid: 'validation_error',
  domain_not_verified: 'validation_error',
  domain_exists: 'validation_error',
  domain_in_use: 'validation_error',
  message_not_cancellable: 'validation_error',
  endpoint_limit_reached: 'validation_error',
  template_not_found: 'not_found',
  request_timeout: 'application_error',
  rate_limited: 'rate_limit_exceeded',
  content_blocked: 'security_error',
  internal_error: 'internal_server_error',
  relay_refused: 'application_error',
  relay_unreachable: 'application_error',
  unavailable: 'application_error',
  insufficient_storage: 'application_error',
} as const satisfies Record<ErrorCode, string>;

export function statusOf(code: ErrorCode): number {
  return ERROR_CODES[code][0];
}

/** What an error code means and how a person at a terminal fixes it. */
export interface ErrorHelp {
  meaning: string;
  fix: string;
}

/**
 * Per error code, what it means and how to fix it: the server serves it as the page a Problem's `docs_url` names,
 * and the command-line client shows the fix as a hint. Commands named here are those of `svc` itself.
 */
export const ERROR_HELP = {
  invalid_request: {
    meaning:
      'The request is malformed: the body is not a JSON object, a required field is missing, a field has the wrong ' +
      'JSON type or is unknown, or a header or query value is malformed.',
    fix:
      'Read the errors list of the response: each entry names a field and says what it must be (an unknown field ' +
      'names the nearest known one). Correct those fields and send the request again.',
  },
  invalid_json: {
    meaning: 'The request body is not valid JSON encoded as UTF-8.',
    fix: 'Send well-formed JSON in UTF-8; the detail says where parsing stopped.',
  },
  unsupported_content_type: {
    meaning: 'The request has a body that is not declared as JSON.',
    fix: 'Send the body as JSON with the header "Content-Type: application/json".',
  },
  unsupported_version: {
    meaning: 'The Service-Version header names a version this service does not serve.',
    fix: `Send "Service-Version: ${SERVICE_VERSION}", or leave the header out to get that version.`,
  },
  missing_credentials: {
    meaning: 'The request carries no credential in an "Authorization: Bearer …" header.',
    fix:
      'Sign in with `svc login` for account and key operations, or pass an API key (`--api-key` or SVC_API_KEY; ' +
      'create one with `svc keys create`) to send mail. Sandbox routes take the admin token `svc serve` prints.',
  },
  invalid_credentials: {
    meaning: 'The email address or the password is wrong.',
    fix: 'Check both and sign in again with `svc login`. Repeated failures are throttled for up to 15 minutes.',
  },
  invalid_api_key: {
    meaning: 'The API key is unknown, revoked or expired.',
    fix: 'Create a new key with `svc keys create` and use it; `svc keys list` shows which keys are revoked or expired.',
  },
  invalid_token: {
    meaning:
      'The access token is malformed, tampered with or expired (access tokens live 15 minutes), or the bearer is not ' +
      'an access token at all.',
    fix:
      'Sign in again with `svc login`; the client refreshes its session by itself. The sandbox admin token works only ' +
      'on /sandbox routes and the inbox, never on /v1.',
  },
  invalid_refresh_token: {
    meaning:
      'The refresh token is unknown, expired or revoked, or was already used: each works once, and reusing one ends ' +
      'its whole session.',
    fix: 'Sign in again with `svc login`.',
  },
  insufficient_scope: {
    meaning: 'The API key lacks the scope this operation needs.',
    fix: 'Create a key that has it, e.g. `svc keys create --name deploy --scope emails:send`, and use that key.',
  },
  ip_not_allowed: {
    meaning: 'The API key has an IP allowlist, and the request came from an address outside it.',
    fix: 'Call from an allowed address, or create a key whose allowlist includes this one (`svc keys create --allow-ip …`).',
  },
  workspace_suspended: {
    meaning: 'The workspace is suspended or closed, so its API calls are refused (signing in still works).',
    fix: 'Ask the operator of the service to reactivate it; on a local server: `svc sandbox workspaces activate ID`.',
  },
  invite_required: {
    meaning: 'Registration is invite-only, and the invite code is missing, wrong, expired or used up.',
    fix:
      'Join the waitlist at the waitlist_url of the response, or sign up with a valid code: `svc signup --invite-code ' +
      'CODE`. On a local server `svc sandbox invites create` makes one.',
  },
  session_required: {
    meaning: 'This operation manages the account and takes a session, not an API key.',
    fix: 'Sign in with `svc login` and call it with the session.',
  },
  api_key_required: {
    meaning: 'This operation sends or reads mail and takes an API key, not a session.',
    fix: 'Create a key with `svc keys create` and pass it with `--api-key` or SVC_API_KEY.',
  },
  workspace_required: {
    meaning: 'The session has no workspace selected: its user belongs to several and none was chosen.',
    fix: 'Sign in again choosing one: `svc login --workspace WS`.',
  },
  not_a_member: {
    meaning: 'The user is not a member of the workspace named.',
    fix: 'Choose one of your workspaces: `svc login` lists them and asks; `svc whoami` shows the current one.',
  },
  forbidden: {
    meaning: 'Your role in this workspace (member) may read but not change this.',
    fix: 'Ask an owner or admin of the workspace to do it, or to make you an admin.',
  },
  domain_not_allowed: {
    meaning: 'The API key may send only from one domain, and the message is from another.',
    fix: "Send from the key's domain, or use a key without a domain restriction (`svc keys create` without --domain).",
  },
  live_sending_locked: {
    meaning: "Live keys send only once the workspace owner's email address is confirmed.",
    fix:
      'Confirm it with the token from the verification email: `svc verify-email TOKEN` (`svc verify-email --resend` ' +
      'sends a new one). Test keys send meanwhile.',
  },
  not_found: {
    meaning:
      "Nothing has this id here, or the path names no route. Another workspace's resources are not found either.",
    fix:
      'Check the id and the path: `svc keys list`, `svc domains list` and `svc inbox` show ids. The API lives under ' +
      '/v1 and GET /v1/openapi.json describes it.',
  },
  method_not_allowed: {
    meaning: 'The path exists, but not with this HTTP method.',
    fix: 'Use one of the methods the Allow header of the response lists.',
  },
  idempotency_conflict: {
    meaning: 'This Idempotency-Key was used in the last 24 hours with a different request body.',
    fix: 'Use a new Idempotency-Key for a new request; repeat a key only to retry the very same request.',
  },
  conflict: {
    meaning:
      'The request does not fit the state of the local server: its clock is real, and only a manual clock moves.',
    fix: 'Restart the local server with `svc serve --clock manual` to move its clock.',
  },
  payload_too_large: {
    meaning: 'The request body is larger than this route takes (40 MiB where attachments travel).',
    fix: 'Send less: give large attachments as a url instead of content, or split a batch into several.',
  },
  validation_failed: {
    meaning:
      'The request is well-formed, but a value breaks a rule: a format, a length, a count, a range or a reference.',
    fix: 'Read the errors list of the response: each entry names a field and the rule it breaks. Correct them and send again.',
  },
  password_too_short: {
    meaning: 'The password is shorter than 12 characters.',
    fix: 'Choose a password of at least 12 characters; a few unrelated words make a good one.',
  },
  password_breached: {
    meaning: 'The password is on a list of passwords leaked in data breaches.',
    fix: 'Choose another password, one you use nowhere else.',
  },
  email_taken: {
    meaning: 'An account with this email address already exists.',
    fix: 'Sign in with `svc login` instead.',
  },
  verification_token_invalid: {
    meaning: 'The verification token is unknown or expired (tokens are valid 24 hours).',
    fix: 'Ask for a new email with `svc verify-email --resend` and use the token it carries.',
  },
  domain_not_verified: {
    meaning: "The sender's domain is not a verified (or degraded) domain of this workspace.",
    fix: 'Add it with `svc domains add NAME`, publish the records it prints, then run `svc domains verify ID --wait`.',
  },
  domain_exists: {
    meaning: 'This workspace already has a domain of this name.',
    fix: 'Use the existing one: `svc domains list` shows its id.',
  },
  domain_in_use: {
    meaning:
      'The domain cannot be deleted while an active API key is restricted to it or mail from it is queued or scheduled.',
    fix: 'Revoke those keys (`svc keys revoke ID`) and cancel the messages (`svc emails cancel ID`) or let them go, then delete again.',
  },
  message_not_cancellable: {
    meaning: 'The message was already handed to the provider; only queued or scheduled messages can be cancelled.',
    fix: 'There is nothing to cancel; follow the message with `svc emails get ID`.',
  },
  endpoint_limit_reached: {
    meaning: 'The workspace has 5 webhook endpoints, the most it may have.',
    fix: 'Remove one first: `svc sandbox webhooks list`, then `svc sandbox webhooks remove ID`.',
  },
  template_not_found: {
    meaning: 'No template has this template_id: templates are not served yet.',
    fix: 'Send the content as html or text instead of template_id.',
  },
  rate_limited: {
    meaning: 'Too many requests in a short time.',
    fix: 'Wait the seconds the Retry-After header gives, then retry; the client retries by itself.',
  },
  content_blocked: {
    meaning:
      'The abuse filter refused the message: it holds a spam or virus test string or matches a blocked pattern. ' +
      'Nothing was stored or sent.',
    fix: 'Remove the flagged content and send again.',
  },
  internal_error: {
    meaning: 'Something failed on the server; the request may not have taken effect.',
    fix: 'Retry in a moment (a send with the same Idempotency-Key is safe to retry); if it persists, report the request_id.',
  },
  relay_not_configured: {
    meaning: 'A release sends a caught message through a relay, and this local server was started without one.',
    fix: 'Start it with `svc serve --relay-url smtp://user:pass@host:port` (or SVC_RELAY_URL), then release again.',
  },
  relay_recipient_not_allowed: {
    meaning:
      "A recipient of the release is outside the relay's allow-list (`svc serve --relay-allow`): nothing was sent.",
    fix: 'Release to an address the allow-list admits (the detail names it), or start the server with a wider one.',
  },
  relay_refused: {
    meaning: "The relay refused the message; the detail quotes its reply. The release is on the message's timeline.",
    fix: "Fix what the relay's reply names (credentials, sender, recipient), then release again.",
  },
  relay_unreachable: {
    meaning: 'The relay could not be reached (connection refused, timed out, or its TLS failed): nothing was sent.',
    fix: 'Check that the relay of `--relay-url` is up and its address right (`?tls=skip-verify` for a self-signed one).',
  },
  request_timeout: {
    meaning:
      'The request body did not arrive within the time a request may take (60 seconds), so the server stopped ' +
      'waiting for it.',
    fix: 'Send the request again in one go; if it holds large attachments, check the connection is not stalling.',
  },
  unavailable: {
    meaning: 'The server is starting or shutting down, and takes no requests for the moment.',
    fix: 'Try again after the number of seconds in the Retry-After header; the client does so by itself.',
  },
  insufficient_storage: {
    meaning:
      "The disk that holds the server's data is full, so nothing new can be written. Everything accepted before is " +
      'kept, and reading still works.',
    fix:
      'Free space on that disk (the detail names the data directory), or lower what the local server keeps ' +
      '(`svc serve --max-messages`); writes are accepted again by themselves, without a restart.',
  },
} as const satisfies Record<ErrorCode, ErrorHelp>;

/** The stable `type` URI of a Problem with this code. */
export function problemType(code: string): string {
  return `${DOCS_BASE}${code}`;
}

export const FieldError = lazySchema(() =>
  z.object({
    path: z.string(),
    code: z.string(),
    message: z.string(),
  }),
);
export type FieldError = z.infer<typeof FieldError>;

/** RFC 9457 problem details, as every error response carries (docs/api.md#errors). */
export const Problem = lazySchema(() =>
  z.object({
    type: z.string(),
    title: z.string(),
    status: z.number().int(),
    code: z.string(),
    detail: z.string().optional(),
    request_id: z.string().optional(),
    docs_url: z.string().optional(),
    errors: z.array(FieldError).optional(),
    waitlist_url: z.string().optional(),
    /** The error's kind as Resend's API names it (ERROR_NAMES), for its SDKs. */
    name: z.string().optional(),
    /** The detail (or the title, without one): what Resend's SDKs show as the error's message. */
    message: z.string().optional(),
    /** The status again, as Resend's SDKs read it. */
    statusCode: z.number().int().optional(),
  }),
);
export type Problem = z.infer<typeof Problem>;

/** A timestamp the service writes: UTC with `Z`. */
export const Timestamp = lazySchema(() => z.iso.datetime({ offset: false }));
/** A timestamp a client sends: any UTC offset is accepted. */
export const InputTimestamp = lazySchema(() => z.iso.datetime({ offset: true }));

/** The kinds of id a request may carry (docs/api.md#basics), as a message names each. */
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
  const wording = { error: `must be ${ID_KINDS[kind]}: ${kind}_ followed by ${ID_CHARS} letters and digits` };
  return z.string(wording).regex(new RegExp(`^${kind}_[0-9A-Za-z]{${ID_CHARS}}$`), wording);
}

const LIMIT_WORDING = { error: 'must be a whole number from 1 to 100' };
/** The `limit` query parameter: 1–100 items a page. */
export const PageLimit = lazySchema(() =>
  z
    .string(LIMIT_WORDING)
    .regex(/^\d+$/, LIMIT_WORDING)
    .transform(Number)
    .pipe(z.number(LIMIT_WORDING).int(LIMIT_WORDING).min(1, LIMIT_WORDING).max(100, LIMIT_WORDING)),
);

/** `limit` (1–100, default 20) and `after` (the id of the last item seen: an id of the listed kind). */
export function listQuery(kind: IdKind) {
  return z.strictObject({ limit: PageLimit.optional(), after: Id(kind).optional() });
}

export function listOf<T extends z.ZodType>(item: T) {
  return z.object({ data: z.array(item), has_more: z.boolean() });
}

export const Empty = lazySchema(() => z.strictObject({}));
