// The API client the command line uses: one typed call per operation of the contract's endpoint table, so the
// client and the server cannot disagree on a method, a path or a body. Errors come back as the service's Problem.
import type { z } from 'zod';
import { Problem, SERVICE_VERSION, VERSION_HEADER } from '../contract/common.js';
import { endpoints, fillPath, type EndpointName } from '../contract/endpoints.js';

type Endpoints = typeof endpoints;
type Success<N extends EndpointName> = Endpoints[N]['success'][1] extends z.ZodType ? z.output<Endpoints[N]['success'][1]> : undefined;
type RequestBody<N extends EndpointName> = Endpoints[N] extends { body: z.ZodType } ? z.input<Endpoints[N]['body']> : never;

/** The service refused the call: its status and Problem body (`code`, `detail`, `errors[]`). */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly problem: Problem,
    readonly headers: Headers,
  ) {
    super(`${problem.title} (${status} ${problem.code})${problem.detail ? `: ${problem.detail}` : ''}`);
    this.name = 'ApiError';
  }
}

/** The service could not be reached at all. */
export class ConnectionError extends Error {
  constructor(baseUrl: string, cause: unknown) {
    const why = (cause as { cause?: { code?: string } })?.cause?.code ?? (cause as Error)?.message ?? String(cause);
    super(`could not reach ${baseUrl} (${why}); check the URL, or start a local service with \`svc serve\``);
    this.name = 'ConnectionError';
  }
}

export interface CallOptions<N extends EndpointName> {
  params?: Record<string, string>;
  query?: Record<string, string | number | undefined>;
  body?: RequestBody<N>;
  headers?: Record<string, string>;
}

export interface Reply<N extends EndpointName> {
  status: number;
  body: Success<N>;
  headers: Headers;
}

export interface ClientOptions {
  /** The API's base URL, with `/v1` (`http://127.0.0.1:4010/v1`). */
  baseUrl: string;
  /** A session's access token or an API key; a function is asked on every call. */
  token?: string | (() => string | undefined);
  fetch?: typeof fetch;
}

export function createClient(opts: ClientOptions) {
  const base = opts.baseUrl.replace(/\/+$/, '');
  const doFetch = opts.fetch ?? fetch;

  async function call<N extends EndpointName>(name: N, o: CallOptions<N> = {}): Promise<Reply<N>> {
    const e = endpoints[name];
    const url = new URL(base + fillPath(e.path, o.params));
    for (const [k, v] of Object.entries(o.query ?? {})) if (v !== undefined) url.searchParams.append(k, String(v));
    const headers: Record<string, string> = { [VERSION_HEADER]: SERVICE_VERSION, accept: 'application/json', ...o.headers };
    const token = typeof opts.token === 'function' ? opts.token() : opts.token;
    if (token) headers.authorization = `Bearer ${token}`;
    if (o.body !== undefined) headers['content-type'] = 'application/json';

    let res: Response;
    try {
      res = await doFetch(url, { method: e.method, headers, body: o.body === undefined ? undefined : JSON.stringify(o.body) });
    } catch (err) {
      throw new ConnectionError(base, err);
    }
    const text = await res.text();
    const json = text ? safeJson(text) : undefined;
    // A batch answers 207 with a result per item: a success, like any 2xx.
    if (res.ok) return { status: res.status, body: json as Success<N>, headers: res.headers };
    const problem = Problem.safeParse(json);
    throw new ApiError(
      res.status,
      problem.success
        ? problem.data
        : { type: 'about:blank', title: res.statusText || 'Error', status: res.status, code: 'unexpected_response', detail: text.slice(0, 200) },
      res.headers,
    );
  }

  return { call };
}
export type Client = ReturnType<typeof createClient>;

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
