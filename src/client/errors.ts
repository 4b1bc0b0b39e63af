import { ERROR_HELP, type ErrorHelp, type Problem } from '../contract/common.js';
import { INSTANCE_HEADER, isSandbox } from '../contract/sandbox-headers.js';
import { isInsecureBaseUrl } from './base-url.js';

/** fetch's Headers (a header's value in node:http's record is a string or an array, never a function). */
const isFetchHeaders = (raw: object): raw is Headers => typeof (raw as Headers).entries === 'function';

/** Response headers, looked up case-insensitively; repeated headers are joined with `, `. */
export class ResponseHeaders {
  readonly #map: Map<string, string>;
  constructor(raw: Record<string, string | string[] | undefined> | Headers) {
    this.#map = new Map();
    // Not `instanceof Headers`: reading the global Headers loads Node's bundled undici, a tenth of a command's run.
    const entries = isFetchHeaders(raw) ? raw.entries() : Object.entries(raw);
    for (const [k, v] of entries) {
      if (v === undefined) continue;
      const key = k.toLowerCase();
      const value = Array.isArray(v) ? v.join(', ') : v;
      // fetch's Headers gives each Set-Cookie line on its own.
      const before = this.#map.get(key);
      this.#map.set(key, before === undefined ? value : `${before}, ${value}`);
    }
  }
  get(name: string): string | null {
    return this.#map.get(name.toLowerCase()) ?? null;
  }
  /** The answer came from a local server (`svc serve`), which says so: sandbox hints apply. */
  get sandbox(): boolean {
    return isSandbox(this);
  }
  /** The local server's instance (a new one after `svc serve --reset`); null from the service itself. */
  get instance(): string | null {
    return this.get(INSTANCE_HEADER);
  }
}

/** The service refused the call: its status and Problem body (`code`, `detail`, `errors[]`, `request_id`). */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly problem: Problem,
    readonly headers: ResponseHeaders,
    /** The endpoint-table name of the call that was refused (`sendEmail`). */
    readonly operation: string,
    /** The credential the operation takes (`admin`: a sandbox route of a local server). */
    readonly auth: 'none' | 'session' | 'key' | 'either' | 'admin',
    /** The client's base URL (a 404 from one without `/v1` is a base URL missing it). */
    readonly baseUrl?: string,
  ) {
    super(`${problem.title} (${status} ${problem.code})${problem.detail ? `: ${problem.detail}` : ''}`);
    this.name = 'ApiError';
  }

  get code(): string {
    return this.problem.code;
  }

  /** How a person fixes it, from the contract's help for the code (ERROR_HELP); undefined for a code it does not know. */
  get fix(): string | undefined {
    return (ERROR_HELP as Record<string, ErrorHelp | undefined>)[this.problem.code]?.fix;
  }

  /** The answer came from a local server (`svc serve`), which says so in a header: sandbox hints apply. */
  get sandbox(): boolean {
    return this.headers.sandbox;
  }

  /** Seconds the service asked to wait (`Retry-After` on a 429), if it said. */
  get retryAfter(): number | undefined {
    const v = this.headers.get('retry-after');
    return v && /^\d+$/.test(v) ? Number(v) : undefined;
  }
}

/**
 * The service could not be reached (after the retries): refused, reset, timed out, or the name did not resolve; or its
 * port speaks the other scheme (`speaks`: https:// given to plain HTTP, http:// to HTTPS).
 */
export class ConnectionError extends Error {
  readonly code: string;
  constructor(
    readonly baseUrl: string,
    cause: unknown,
    speaks?: 'http:' | 'https:',
  ) {
    const code = errorCode(cause) ?? 'UNKNOWN';
    const what =
      code === 'UNKNOWN'
        ? innermostMessage(cause)
        : code === BAD_PORT
          ? `${code}: fetch connects to no port browsers block, such as 6000, 6665–6669 or 10080`
          : code;
    super(`could not reach ${baseUrl} (${what})${speaks ? otherSchemeAdvice(baseUrl, speaks) : NOT_REACHED_ADVICE}`, {
      cause,
    });
    this.name = 'ConnectionError';
    this.code = code;
  }
}

const NOT_REACHED_ADVICE = '; check the URL, or start a local service with `svc serve`';

/** `: 127.0.0.1:4010 speaks plain HTTP, not HTTPS; use http://127.0.0.1:4010/v1`. */
function otherSchemeAdvice(baseUrl: string, speaks: 'http:' | 'https:'): string {
  const given = new URL(baseUrl);
  const meant = new URL(baseUrl);
  meant.protocol = speaks;
  // The port stays the one that answered, also where it was the scheme's default.
  meant.port = given.port || (given.protocol === 'https:' ? '443' : '80');
  const [said, not] = speaks === 'http:' ? ['plain HTTP', 'HTTPS'] : ['HTTPS', 'plain HTTP'];
  const where = `${given.hostname}:${meant.port}`;
  // Plain HTTP goes to loopback only (base-url.ts): elsewhere the port is the mistake, not the scheme.
  const fix = isInsecureBaseUrl(meant)
    ? 'give the port its HTTPS is served on'
    : `use ${meant.origin}${given.pathname.replace(/\/+$/, '')}`;
  return `: ${where} speaks ${said}, not ${not}; ${fix}`;
}

/** A 2xx answer whose body does not match the contract: the base URL is not this service, or not this version of it. */
export class ContractError extends Error {
  constructor(
    readonly operation: string,
    readonly status: number,
    readonly issue: string,
    baseUrl: string,
  ) {
    super(
      `${operation}: the service at ${baseUrl} answered ${status} with a body that does not match the contract (${issue}); ` +
        'is it a svc service speaking Service-Version 2026-08-01?',
    );
    this.name = 'ContractError';
  }
}

/** A base URL the client will not use: not an absolute http(s) URL, or plain HTTP to a host that is not loopback. */
export class BaseUrlError extends Error {
  constructor(
    readonly baseUrl: string,
    readonly reason: 'invalid' | 'insecure',
  ) {
    super(
      reason === 'invalid'
        ? `${baseUrl} is not an http(s) URL; give the API's base URL, e.g. https://api.example.com/v1 or http://127.0.0.1:4010/v1`
        : `refusing to send credentials over plain HTTP to ${baseUrl}; use an https:// base URL, ` +
            'or reach the service through a loopback address (127.0.0.1, ::1, localhost), e.g. an SSH tunnel',
    );
    this.name = 'BaseUrlError';
  }
}

/** The session's refresh token was refused (already used, revoked or expired): only a new login helps. */
export class SessionEndedError extends Error {
  constructor(readonly problem: Problem) {
    super('the session has ended (its refresh token was refused: revoked, expired or already used)');
    this.name = 'SessionEndedError';
  }
}

/** The code of a URL whose port fetch refuses before it connects (the Fetch standard's "bad port"). */
const BAD_PORT = 'ERR_BAD_PORT';

/** The system error code of a failed request (`ECONNREFUSED`, `UND_ERR_HEADERS_TIMEOUT`), if it has one. */
export function errorCode(err: unknown): string | undefined {
  const e = err as { code?: unknown; cause?: { code?: unknown } } | undefined;
  const code = e?.code ?? e?.cause?.code;
  if (typeof code === 'string') return code;
  return innermostMessage(err) === 'bad port' ? BAD_PORT : undefined;
}

/** The message at the end of an error's chain of causes: fetch fails with "fetch failed" and says why in its cause. */
function innermostMessage(err: unknown): string {
  let e = err;
  while (e instanceof Error && e.cause instanceof Error) e = e.cause;
  return e instanceof Error ? e.message : String(e);
}
