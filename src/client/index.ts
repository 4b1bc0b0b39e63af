// The API client: one typed call per entry of the contract's endpoint tables, so the client and the server cannot
// disagree on a method, a path or a body; every 2xx body is parsed with the contract's schema and every refusal
// comes back as the service's Problem. With retries, idempotent sends and self-refreshing sessions.
//
// It speaks HTTP through Node's own http and https modules (transport.ts): fetch, and the undici package more so, cost
// a command-line run more than the request it makes.
import { randomUUID } from 'node:crypto';
import type { Dispatcher } from 'undici';
import type { z } from 'zod';
import { Problem, SERVICE_VERSION, VERSION_HEADER } from '../contract/common.js';
import { IDEMPOTENCY_HEADER } from '../contract/emails.js';
import { endpoints, fillPath, type AuthKind, type EndpointName } from '../contract/endpoints.js';
import { sandboxEndpoints, type InboxEvent, type SandboxEndpointName } from '../contract/sandbox.js';
import { API_CALL_BACKOFF, backoffDelay, retryAfterMs, sleep as realSleep } from './backoff.js';
import { isInsecureBaseUrl, parseBaseUrl } from './base-url.js';
import {
  ApiError,
  BaseUrlError,
  ConnectionError,
  ContractError,
  errorCode,
  ResponseHeaders,
  SessionEndedError,
} from './errors.js';
import { inboxEvents } from './inbox-stream.js';
import { expiresSoon, type SessionStore } from './session.js';
import { readAll, send, type Sent } from './transport.js';

export * from './errors.js';
export { SERVICE_VERSION } from '../contract/common.js';
export { memorySessionStore, type SessionStore, type SessionTokens } from './session.js';
export { isLoopbackHost } from './base-url.js';

type Endpoints = typeof endpoints;
type SandboxEndpoints = typeof sandboxEndpoints;
type SuccessOf<E> = E extends { success: readonly [number, infer S] }
  ? S extends z.ZodType
    ? z.output<S>
    : undefined
  : never;
type BodyOf<E> = E extends { body: z.ZodType } ? z.input<E['body']> : never;

/** Query values; an array repeats the parameter (`type=a&type=b`). */
export type Query = Record<string, string | number | boolean | readonly string[] | undefined>;

export interface CallOptions<Body = unknown> {
  params?: Record<string, string>;
  query?: Query;
  body?: Body;
  headers?: Record<string, string>;
  /** The Idempotency-Key of a send or batch; one is generated when not given, so a retry never sends twice. */
  idempotencyKey?: string;
  signal?: AbortSignal;
  /** Longest wait for the response headers, then for the body, in ms (default 30 s; a long poll gives more). */
  timeoutMs?: number;
}

export interface Reply<T> {
  status: number;
  /** The body parsed with the contract's schema. */
  body: T;
  /** The body exactly as received (JSON), for printing it unchanged. */
  raw: unknown;
  /** The body's text (UTF-8). */
  text: string;
  /** The body's bytes, exactly as received (a raw message need not be UTF-8). */
  bytes: Uint8Array;
  headers: ResponseHeaders;
}

/** A credential, or a function asked for it when a call needs it. */
export type Secret = string | (() => string | undefined | Promise<string | undefined>);

export interface ClientOptions {
  /** The API's base URL, with `/v1` (`https://api.example.com/v1`, `http://127.0.0.1:4010/v1`). */
  baseUrl: string;
  /** The API key for operations that take one (`svc_test_…`/`svc_live_…`). */
  apiKey?: Secret;
  /** A session, refreshed by the client before it expires and on a 401 `invalid_token`. */
  session?: SessionStore;
  /** Operations that take either credential use this one first when both are there (default: the session). */
  prefer?: 'key' | 'session';
  /** A bearer sent as is on every authenticated call, whatever the operation takes (no refresh). */
  token?: Secret;
  /** The admin token of a local server, for the sandbox routes. */
  adminToken?: Secret;
  /** Retries after a 429, a 5xx or a connection error (default 3). */
  retries?: number;
  /** Longest `Retry-After` waited out; a longer one fails the call at once with the service's answer (default 60 s). */
  maxRetryAfterMs?: number;
  /**
   * An undici dispatcher for every request (a connection pool, a proxy, or a MockAgent in tests): the requests then go
   * through Node's fetch, which takes one from the undici package.
   */
  dispatcher?: Dispatcher;
  userAgent?: string;
  /** How the client waits between retries; replaceable so that tests can see the delays without waiting them. */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  /** The local clock, for deciding that an access token expires soon. */
  now?: () => number;
  /**
   * Told of each retry before the client waits for it: what failed, which retry it is and how long the wait. The client
   * itself prints nothing; the command line says each on stderr.
   */
  onRetry?: (retry: RetryInfo) => void;
}

/** A retry about to happen (ClientOptions.onRetry). */
export interface RetryInfo {
  method: string;
  /** The request's URL. */
  url: string;
  /** The status that was answered, for a retry after an answer (429, 5xx). */
  status?: number;
  /** The Problem's code of that answer, or the connection error's (`ECONNREFUSED`, `UND_ERR_HEADERS_TIMEOUT`). */
  code?: string;
  /** Which retry this is, from 1, and how many there may be in all. */
  retry: number;
  retries: number;
  /** How long the client waits before it (Retry-After when the answer gave one). */
  delayMs: number;
}

/** The sends that carry an Idempotency-Key (docs/api.md#sending): the only POSTs a retry may repeat. */
const IDEMPOTENT_SENDS = new Set<string>(['sendEmail', 'sendBatch']);

/** Failures where the request certainly never reached the service: retrying them cannot do anything twice. */
const NOT_SENT = new Set(['ECONNREFUSED', 'EAI_AGAIN', 'ENETUNREACH', 'EHOSTUNREACH', 'UND_ERR_CONNECT_TIMEOUT']);
/** A name that does not resolve now will not resolve a second later, nor will fetch take a port it refused. */
const HOPELESS = new Set(['ENOTFOUND', 'ERR_BAD_PORT']);

const DEFAULT_TIMEOUT_MS = 30_000;
/** The inbox stream sends a comment every 25 s: this long without a byte means the connection is gone. */
const STREAM_IDLE_MS = 60_000;
const utf8 = new TextDecoder();

interface Exchange {
  status: number;
  headers: ResponseHeaders;
  text: string;
  bytes: Uint8Array;
}

interface Endpointish {
  method: string;
  path: string;
  auth?: AuthKind;
  success: readonly [number, z.ZodType | null];
}

export function createClient(opts: ClientOptions) {
  const parsed = parseBaseUrl(opts.baseUrl);
  if (!parsed) throw new BaseUrlError(opts.baseUrl, 'invalid');
  if (isInsecureBaseUrl(parsed)) throw new BaseUrlError(opts.baseUrl, 'insecure');
  const base = opts.baseUrl.replace(/\/+$/, '');
  // The sandbox routes live beside /v1 on the same origin.
  const sandboxBase = base.replace(/\/v1$/, '');
  const retries = opts.retries ?? API_CALL_BACKOFF.retries;
  const maxRetryAfterMs = opts.maxRetryAfterMs ?? 60_000;
  const wait = opts.sleep ?? realSleep;
  const now = opts.now ?? Date.now;
  const userAgent = opts.userAgent ?? 'svc-client/0.1.0';

  const reveal = async (s: Secret | undefined) => (typeof s === 'function' ? await s() : s) || undefined;

  /** One HTTP exchange, retried after 429/5xx/connection errors where a retry cannot act twice. */
  async function exchange(
    method: string,
    url: URL,
    headers: Record<string, string>,
    body: string | undefined,
    o: CallOptions,
  ): Promise<Exchange> {
    const idempotent =
      method === 'GET' || method === 'PUT' || method === 'DELETE' || IDEMPOTENCY_HEADER.toLowerCase() in lower(headers);
    const timeout = o.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    for (let attempt = 0; ; attempt++) {
      let res: Exchange;
      try {
        const r = await send(
          url,
          { method, headers, body },
          { headersMs: timeout, idleMs: timeout, signal: o.signal, dispatcher: opts.dispatcher },
        );
        const bytes = await readAll(r);
        res = {
          status: r.status,
          headers: new ResponseHeaders(r.headers),
          text: utf8.decode(bytes),
          bytes,
        };
      } catch (err) {
        if (o.signal?.aborted) throw o.signal.reason ?? err;
        const code = errorCode(err) ?? '';
        // A reset or a timeout may come after the service acted: only a request safe to repeat is tried again.
        if (attempt < retries && !HOPELESS.has(code) && (NOT_SENT.has(code) || idempotent)) {
          const delayMs = backoffDelay(API_CALL_BACKOFF, attempt);
          opts.onRetry?.({ method, url: url.href, code: code || undefined, retry: attempt + 1, retries, delayMs });
          await wait(delayMs, o.signal);
          continue;
        }
        throw new ConnectionError(base, err);
      }
      // 429 and 503 are refusals before any work; another 5xx may come after it, so only a safe request repeats it.
      const retryable = res.status === 429 || res.status === 503 || (res.status >= 500 && idempotent);
      if (attempt < retries && retryable) {
        const delay = retryAfterMs(res.headers.get('retry-after'), now()) ?? backoffDelay(API_CALL_BACKOFF, attempt);
        if (delay <= maxRetryAfterMs) {
          if (opts.onRetry) {
            const code = (parseJson(res.text) as { code?: unknown } | undefined)?.code;
            opts.onRetry({
              method,
              url: url.href,
              status: res.status,
              code: typeof code === 'string' ? code : undefined,
              retry: attempt + 1,
              retries,
              delayMs: delay,
            });
          }
          await wait(delay, o.signal);
          continue;
        }
      }
      return res;
    }
  }

  function target(root: string, e: Endpointish, o: CallOptions): URL {
    const url = new URL(root + fillPath(e.path, o.params));
    for (const [k, v] of Object.entries(o.query ?? {})) {
      if (v === undefined) continue;
      for (const one of Array.isArray(v) ? v : [v]) url.searchParams.append(k, String(one));
    }
    return url;
  }

  function requestHeaders(o: CallOptions, name: string): { headers: Record<string, string>; body: string | undefined } {
    const headers: Record<string, string> = {
      [VERSION_HEADER]: SERVICE_VERSION,
      accept: 'application/json',
      'user-agent': userAgent,
      ...o.headers,
    };
    let body: string | undefined;
    if (o.body !== undefined) {
      headers['content-type'] = 'application/json';
      body = JSON.stringify(o.body);
    }
    if (IDEMPOTENT_SENDS.has(name) && !(IDEMPOTENCY_HEADER.toLowerCase() in lower(headers))) {
      headers[IDEMPOTENCY_HEADER] = o.idempotencyKey ?? randomUUID();
    }
    return { headers, body };
  }

  /** A 2xx parsed with the contract's schema; anything else thrown as an ApiError carrying the Problem. */
  function finish<T>(
    name: string,
    e: Endpointish,
    res: Exchange,
    auth: AuthKind | 'admin' = e.auth ?? 'none',
  ): Reply<T> {
    const json = parseJson(res.text);
    if (res.status >= 200 && res.status < 300) {
      const schema = e.success[1];
      if (!schema)
        return {
          status: res.status,
          body: undefined as T,
          raw: json,
          text: res.text,
          bytes: res.bytes,
          headers: res.headers,
        };
      const checked = schema.safeParse(json);
      if (!checked.success) {
        const issue = checked.error.issues[0];
        const where = issue?.path.length ? issue.path.join('.') : 'body';
        throw new ContractError(
          name,
          res.status,
          json === undefined ? 'not JSON' : `${where}: ${issue?.message}`,
          base,
        );
      }
      return {
        status: res.status,
        body: checked.data as T,
        raw: json,
        text: res.text,
        bytes: res.bytes,
        headers: res.headers,
      };
    }
    const problem = Problem.safeParse(json);
    throw new ApiError(
      res.status,
      problem.success
        ? problem.data
        : {
            type: 'about:blank',
            title: statusText(res.status),
            status: res.status,
            code: 'unexpected_response',
            detail: res.text.slice(0, 200) || undefined,
            request_id: res.headers.get('x-request-id') ?? undefined,
          },
      res.headers,
      name,
      auth,
      base,
    );
  }

  /** Rotates the session under the store's lock; `failed` is the access token the service just refused, if any. */
  async function refresh(store: SessionStore, failed: string | undefined): Promise<string | undefined> {
    return store.withLock(async () => {
      // Read again inside the lock: another process may have rotated the tokens while this one waited.
      const current = await store.load();
      if (!current) return undefined;
      if (current.access_token !== failed && !expiresSoon(current, now())) return current.access_token;
      const e = endpoints.refreshSession;
      const { headers, body } = requestHeaders({ body: { refresh_token: current.refresh_token } }, 'refreshSession');
      const res = await exchange(e.method, target(base, e, {}), headers, body, {});
      if (res.status === 401) {
        const problem = Problem.safeParse(parseJson(res.text));
        if (problem.success && problem.data.code === 'invalid_refresh_token') {
          await store.clear();
          throw new SessionEndedError(problem.data);
        }
      }
      const session = finish<z.output<(typeof e.success)[1]>>('refreshSession', e, res).body;
      const next = {
        access_token: session.access_token,
        refresh_token: session.refresh_token,
        expires_at: session.expires_at,
      };
      await store.save(next);
      return next.access_token;
    });
  }

  /** The session's access token, refreshed first when it expires within a minute; undefined without a session. */
  async function sessionToken(): Promise<string | undefined> {
    if (!opts.session) return undefined;
    const tokens = await opts.session.load();
    if (!tokens) return undefined;
    return expiresSoon(tokens, now()) ? refresh(opts.session, undefined) : tokens.access_token;
  }

  /**
   * The bearer for an operation, and whether it is the session's (so a 401 `invalid_token` may refresh it). With no
   * credential the call goes without one, and the service's 401 `missing_credentials` says so.
   */
  async function credential(kind: AuthKind): Promise<{ bearer?: string; session?: boolean }> {
    if (kind === 'none') return {};
    const token = await reveal(opts.token);
    if (token) return { bearer: token };
    if (kind === 'key' || (kind === 'either' && opts.prefer === 'key')) {
      const key = await reveal(opts.apiKey);
      if (key || kind === 'key') return { bearer: key };
    }
    const access = await sessionToken();
    if (access) return { bearer: access, session: true };
    return { bearer: kind === 'either' ? await reveal(opts.apiKey) : undefined };
  }

  /** Calls one `/v1` operation of the endpoint table. */
  async function call<N extends EndpointName>(
    name: N,
    o: CallOptions<BodyOf<Endpoints[N]>> = {},
  ): Promise<Reply<SuccessOf<Endpoints[N]>>> {
    const e = endpoints[name] as Endpointish;
    const url = target(base, e, o);
    const { headers, body } = requestHeaders(o, name);
    const auth = await credential(e.auth ?? 'none');
    if (auth.bearer) headers.authorization = `Bearer ${auth.bearer}`;
    let res = await exchange(e.method, url, headers, body, o);
    if (
      res.status === 401 &&
      auth.session &&
      opts.session &&
      Problem.safeParse(parseJson(res.text)).data?.code === 'invalid_token'
    ) {
      const fresh = await refresh(opts.session, auth.bearer);
      if (fresh) {
        headers.authorization = `Bearer ${fresh}`;
        res = await exchange(e.method, url, headers, body, o);
      }
    }
    return finish(name, e, res);
  }

  /** Calls one sandbox route of a local server (`svc serve`), with the admin token. */
  async function sandbox<N extends SandboxEndpointName>(
    name: N,
    o: CallOptions<BodyOf<SandboxEndpoints[N]>> = {},
  ): Promise<Reply<SuccessOf<SandboxEndpoints[N]>>> {
    const e = sandboxEndpoints[name] as Endpointish;
    const adminToken = await reveal(opts.adminToken);
    const { headers, body } = requestHeaders(o, name);
    if (adminToken) headers.authorization = `Bearer ${adminToken}`;
    return finish(name, e, await exchange(e.method, target(sandboxBase, e, o), headers, body, o), 'admin');
  }

  /**
   * `GET /sandbox/stream` of a local server, with the admin token: the inbox's changes as they are committed, until
   * `signal` aborts or the server ends the stream. Resolves once the server has answered, by when it has subscribed
   * this reader, so nothing caught after that is missed. Opened once: a stream is no request to retry.
   */
  async function inboxStream(o: { signal?: AbortSignal } = {}): Promise<AsyncIterable<InboxEvent>> {
    const e: Endpointish = { method: 'GET', path: '/sandbox/stream', success: [200, null] };
    const adminToken = await reveal(opts.adminToken);
    const { headers } = requestHeaders({ headers: { accept: 'text/event-stream' } }, 'inboxStream');
    if (adminToken) headers.authorization = `Bearer ${adminToken}`;
    let r: Sent;
    try {
      r = await send(
        target(sandboxBase, e, {}),
        { method: 'GET', headers },
        { headersMs: DEFAULT_TIMEOUT_MS, idleMs: STREAM_IDLE_MS, signal: o.signal, dispatcher: opts.dispatcher },
      );
    } catch (err) {
      if (o.signal?.aborted) throw o.signal.reason ?? err;
      throw new ConnectionError(base, err);
    }
    const { status } = r;
    if (status < 200 || status >= 300) {
      const bytes = await readAll(r).catch((err: unknown) => {
        throw new ConnectionError(base, err);
      });
      finish(
        'inboxStream',
        e,
        { status, headers: new ResponseHeaders(r.headers), text: utf8.decode(bytes), bytes },
        'admin',
      );
    }
    return inboxEvents(r.body, base, o.signal);
  }

  return { baseUrl: base, call, sandbox, inboxStream };
}
export type Client = ReturnType<typeof createClient>;

/** The standard reason phrase of a status (node:http's table, loaded only for an answer that is not a Problem). */
function statusText(status: number): string {
  return process.getBuiltinModule('node:http').STATUS_CODES[status] ?? 'Error';
}

function lower(headers: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v]));
}

function parseJson(text: string): unknown {
  if (!text) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
