// How a failure reaches the person: one line on stderr (what failed, the Problem's title and detail, its code and
// request id, a hint) and an exit code; with --json also `{"error": Problem}` on stdout. The client's errors are told
// apart by their classes, loaded only when a failure is reported: a command's start loads nothing of the HTTP client.
import type { ApiError } from '../client/errors.js';
import type { Problem } from '../contract/common.js';
import type { IO } from './io.js';

/** The client's error classes (client/errors.ts). */
export type ClientErrors = typeof import('../client/errors.js');
/** Loads the client's error classes: a failure that is not the command line's own may be one of them. */
export const clientErrors = (): Promise<ClientErrors> => import('../client/errors.js');

/** Exit codes: 0 success; 1 the service or the system refused; 2 usage error; 4 authentication needed. */
export const EXIT = { ok: 0, failed: 1, usage: 2, auth: 4 } as const;

/** A mistake in how the command was called; shown with a hint, exit 2. */
export class UsageError extends Error {
  constructor(
    message: string,
    readonly hint?: string,
  ) {
    super(message);
    this.name = 'UsageError';
  }
}

/** No credential for what the command needs (not signed in, no API key, no admin token): exit 4. */
export class AuthError extends Error {
  constructor(
    message: string,
    readonly hint?: string,
  ) {
    super(message);
    this.name = 'AuthError';
  }
}

/** The command could not do its work for a reason of its own (a wait that timed out, a batch item refused): exit 1. */
export class CommandError extends Error {
  constructor(
    message: string,
    readonly hint?: string,
    /** The API's body is already on stdout (--json): no `{"error": …}` after it. */
    readonly bodyPrinted = false,
  ) {
    super(message);
    this.name = 'CommandError';
  }
}

/**
 * What to do about a Problem, by code, in terms of this command line. Where a code has no entry here, the contract's
 * fix for it (ERROR_HELP, carried by the ApiError) is offered, else the Problem's `docs_url`.
 */
const HINTS: Record<string, (p: Problem, e: ApiError) => string | undefined> = {
  missing_credentials: (_p, e) => CREDENTIAL_HINTS[e.auth],
  invalid_credentials: () => 'check the email and password; `svc login` asks for them again',
  invalid_api_key: () =>
    'the key is unknown, revoked or expired: create one with `svc keys create --name NAME --scope emails:send --save`',
  invalid_token: (_p, e) => (e.auth === 'admin' ? ADMIN_TOKEN_HINT : 'sign in again with `svc login`'),
  invalid_refresh_token: () => 'sign in again with `svc login`',
  session_required: () => 'this needs a signed-in session, not an API key: `svc login`',
  api_key_required: () =>
    'this needs an API key: pass --api-key, set SVC_API_KEY, or save one with `svc keys create … --save`',
  workspace_required: () => 'choose a workspace: `svc login --workspace ID_OR_SLUG`',
  not_a_member: () => '`svc login` lists the workspaces this account belongs to',
  insufficient_scope: () => 'create a key with the scope this needs (`svc keys create --scope …`), or use `svc login`',
  forbidden: () => 'your role in this workspace cannot do this; an owner or admin can',
  invite_required: (p) =>
    `signup needs an invite code (--invite-code)${p.waitlist_url ? `; join the waitlist at ${p.waitlist_url}` : ''}`,
  unsupported_version: () => 'this svc speaks Service-Version 2026-08-01; update svc',
  domain_not_verified: (p, e) => {
    if (!e.sandbox) return 'publish its records (`svc domains dns ID`), then `svc domains verify ID --wait`';
    // A local server names the domain's id in the detail when the domain exists (else it is to be added first).
    const id = /\bdom_[A-Za-z0-9]+/.exec(p.detail ?? '')?.[0];
    return id
      ? `this is a local sandbox: publish its records in the sandbox zone with \`svc sandbox dns publish ${id}\`, then \`svc domains verify ${id}\``
      : 'this is a local sandbox: add the domain (`svc domains add NAME`), then `svc domains verify dom_… --publish` publishes its records in the sandbox zone and verifies it';
  },
  live_sending_locked: () =>
    'confirm your email address with `svc verify-email TOKEN` (or `svc verify-email --resend`), or use a test key',
  rate_limited: (_p, e) => (e.retryAfter !== undefined ? `try again in ${e.retryAfter} s` : 'try again shortly'),
  idempotency_conflict: () => 'this Idempotency-Key was used with a different message; use a new --idempotency-key',
  payload_too_large: (_p, e) =>
    e.operation === 'sendEmail'
      ? 'attach large files by URL, fetched by the service at delivery (--attach https://…), not from disk'
      : undefined,
  email_taken: () => 'sign in with `svc login` instead',
  verification_token_invalid: () => 'ask for a new email with `svc verify-email --resend`',
  not_found: (p, e) => (CAUGHT_MESSAGE_OPERATIONS.has(e.operation) ? caughtMessageHint(p) : undefined),
};

/** The sandbox operations that read one caught message by its id (`svc inbox show|check`, `svc mcp`'s tools). */
const CAUGHT_MESSAGE_OPERATIONS = new Set([
  'getMessage',
  'getRawMessage',
  'getMessageChecks',
  'claimMessage',
  'releaseMessage',
]);

/**
 * A caught message not found, by the kind of id: a `/v1` message's (msg_…), whose detail says where it is and names
 * `svc emails get`, or caught mail's (eml_…), which `svc inbox` lists. Never the API's ids (keys, domains).
 */
function caughtMessageHint(p: Problem): string {
  return /\bmsg_\w/.test(p.detail ?? '')
    ? 'a msg_… id opens its message once the sink has caught it; `svc inbox --follow` shows mail as it arrives'
    : '`svc inbox` lists caught mail with its eml_… ids; the msg_… id `svc emails send` prints works too';
}

/** How to give the credential an operation takes. */
const CREDENTIAL_HINTS: Record<ApiError['auth'], string | undefined> = {
  none: undefined,
  session: 'sign in with `svc login`',
  key: 'pass --api-key, set SVC_API_KEY, or save a key with `svc keys create … --save`',
  either: 'sign in with `svc login`, or give an API key (--api-key, SVC_API_KEY)',
  admin:
    'give the admin token of the local server: --admin-token or SVC_ADMIN_TOKEN (found by itself for a local `svc serve`)',
};

/** A sandbox route refused the admin token sent: it belongs to another server (or to this one before a reset). */
const ADMIN_TOKEN_HINT =
  "that is not this server's admin token: give the admin_token of its ready line (--admin-token or SVC_ADMIN_TOKEN), " +
  'or set neither: the token of a local `svc serve` is found by itself';

/** Codes whose contract fix says only to read the errors list: printed with the list itself, they need no hint. */
const LISTED = new Set(['validation_failed', 'invalid_request']);

export function hintFor(e: ApiError): string | undefined {
  if (LISTED.has(e.problem.code) && e.problem.errors?.length) return undefined;
  const v1 = missingV1(e);
  if (v1) return `did you mean ${v1}? The API is under /v1 of the service's address (--base-url, SVC_BASE_URL)`;
  return (
    HINTS[e.problem.code]?.(e.problem, e) ?? e.fix ?? (e.problem.docs_url ? `see ${e.problem.docs_url}` : undefined)
  );
}

/**
 * The base URL the person meant, when a `/v1` operation was answered 404 under a base URL without `/v1`
 * (`--base-url http://localhost:4010`) or ending in another version (`…/v2`): every path of the API is missing there,
 * whatever the id.
 */
function missingV1(e: ApiError): string | undefined {
  if (e.status !== 404 || e.auth === 'admin' || !e.baseUrl) return undefined;
  const base = e.baseUrl.replace(/\/+$/, '');
  return /\/v1$/.test(base) ? undefined : `${base.replace(/\/v\d+$/, '')}/v1`;
}

/**
 * A Problem's detail and field errors in one piece of a line, each field once. The service's detail is often a
 * summary of the errors list already (its first few entries): the whole list then stands in its place. A detail
 * about one field in words of its own (`domain_not_verified`) says all its one entry would.
 */
export function problemDetail(p: Pick<Problem, 'detail' | 'errors'>): string {
  const fields = [...new Set((p.errors ?? []).map((f) => `${f.path}: ${f.message}`))];
  if (!p.detail) return fields.join('; ');
  if (fields.some((f) => p.detail!.includes(f))) return fields.join('; ');
  return fields.length > 1 ? `${p.detail} (${fields.join('; ')})` : p.detail;
}

/** The exit code of a failure (`c`: the client's error classes; none when the failure is the command line's own). */
export function exitCodeOf(err: unknown, c?: ClientErrors): number {
  if (err instanceof UsageError || (c && err instanceof c.BaseUrlError)) return EXIT.usage;
  if (err instanceof AuthError || (c && err instanceof c.SessionEndedError)) return EXIT.auth;
  if (c && err instanceof c.ApiError) return err.status === 401 ? EXIT.auth : EXIT.failed;
  return EXIT.failed;
}

/** A failure as a Problem, for `{"error": …}` with --json: the service's own, or one describing a local failure. */
export function problemOf(err: unknown, c?: ClientErrors): Problem {
  if (c && err instanceof c.ApiError) return err.problem;
  const kinds: (readonly [new (...args: never[]) => Error, string])[] = [
    [UsageError, 'usage'],
    [AuthError, 'credentials_required'],
    ...(c
      ? ([
          [c.SessionEndedError, 'session_ended'],
          [c.ConnectionError, 'connection_failed'],
          [c.ContractError, 'unexpected_response'],
          [c.BaseUrlError, 'invalid_base_url'],
        ] as const)
      : []),
  ];
  const code = kinds.find(([kind]) => err instanceof kind)?.[1] ?? 'failed';
  const e = err as Error;
  return { type: 'about:blank', title: e?.message ?? String(err), status: 0, code };
}

/** The one line (and exit code) a failure is reported with; `hint` replaces the hint of a refusal by the service. */
export function describeError(
  err: unknown,
  command: string,
  c?: ClientErrors,
  given?: string,
): { line: string; code: number } {
  const code = exitCodeOf(err, c);
  if (c && err instanceof c.ApiError) {
    const p = err.problem;
    const ids = [p.code, p.request_id].filter(Boolean).join(', ');
    const hint = given ?? hintFor(err);
    const detail = problemDetail(p);
    return {
      code,
      line: `${command}: ${p.title}${detail ? ` — ${detail}` : ''} [${ids}]${hint ? `; hint: ${hint}` : ''}`,
    };
  }
  const e = err as Error & { hint?: string };
  // Ctrl-C at a prompt (@inquirer's ExitPromptError): the person knows what happened.
  if (e?.name === 'ExitPromptError') return { code, line: `${command}: cancelled` };
  let hint = e?.hint;
  if (c && err instanceof c.SessionEndedError) hint = 'sign in again with `svc login`';
  return { code, line: `${command}: ${e?.message ?? String(err)}${hint ? `; hint: ${hint}` : ''}` };
}

/** Reports a failure and returns its exit code. */
export async function reportError(
  io: IO,
  err: unknown,
  o: { command: string; json?: boolean; hint?: string },
): Promise<number> {
  const own = err instanceof UsageError || err instanceof AuthError || err instanceof CommandError;
  const c = own ? undefined : await clientErrors();
  const { line, code } = describeError(err, o.command, c, o.hint);
  if (o.json && !(err instanceof UsageError) && !(err instanceof CommandError && err.bodyPrinted))
    io.print(JSON.stringify({ error: problemOf(err, c) }, null, 2));
  io.info(`${io.err.red('error:')} ${line}`);
  return code;
}
