// What a caller gives the client and gets back: the client's options, a call's, a reply, and a retry's report.
import type { Dispatcher } from 'undici';
import type { ResponseHeaders } from './errors.js';
import type { SessionStore } from './session.js';

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
  /** How many times a refused or failed call is retried (default: the client's `retries`). */
  retries?: number;
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
