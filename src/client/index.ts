// The API client: one typed call per entry of the contract's endpoint table, so the client and the server cannot
// disagree on a method, a path or a body; every 2xx body is parsed with the contract's schema and every refusal
// comes back as the service's Problem. With retries, idempotent sends and self-refreshing sessions.
//
// It speaks HTTP through Node's own http and https modules (transport.ts): fetch, and the undici package more so, cost
// a command-line run more than the request it makes.
import type { z } from 'zod';
import { Problem } from '../contract/common.js';
import { type AdminEndpointName, endpoints, type EndpointName, type V1EndpointName } from '../contract/endpoints.js';
import type { InboxEvent } from '../contract/inbox.js';
import { answerOf, type Endpointish } from './answer.js';
import { isInsecureBaseUrl, parseBaseUrl } from './base-url.js';
import { createCredentials, reveal } from './credentials.js';
import { BaseUrlError, ConnectionError, ResponseHeaders } from './errors.js';
import { createExchange, DEFAULT_TIMEOUT_MS, parseJson, utf8 } from './exchange.js';
import { inboxEvents } from './inbox-stream.js';
import type { CallOptions, ClientOptions, Reply } from './options.js';
import { createRequestHeaders, target } from './request.js';
import { readAll, send, type TransportResponse } from './transport.js';

export * from './errors.js';
export { SERVICE_VERSION } from '../contract/common.js';
export { memorySessionStore, type SessionStore, type SessionTokens } from './session.js';
export { isLoopbackHost } from './base-url.js';
export type { CallOptions, ClientOptions, Query, Reply, RetryInfo, Secret } from './options.js';

type Endpoints = typeof endpoints;
type SuccessOf<E> = E extends { success: readonly [number, infer S] }
  ? S extends z.ZodType
    ? z.output<S>
    : undefined
  : never;
type BodyOf<E> = E extends { body: z.ZodType } ? z.input<E['body']> : never;

/** The inbox stream sends a comment every 25 s: this long without a byte means the connection is gone. */
const STREAM_IDLE_MS = 60_000;

/**
 * The client of one service (`baseUrl`): `call` for each `/v1` operation, `sandbox` for each sandbox route of a local
 * server, `inboxStream` for its live inbox. Each call goes through the exchange (exchange.ts: its retries), with the
 * credential its operation takes (credentials.ts: sessions refreshed), and its answer parsed (answer.ts).
 */
export function createClient(opts: ClientOptions) {
  const parsed = parseBaseUrl(opts.baseUrl);
  if (!parsed) throw new BaseUrlError(opts.baseUrl, 'invalid');
  if (isInsecureBaseUrl(parsed)) throw new BaseUrlError(opts.baseUrl, 'insecure');
  const base = opts.baseUrl.replace(/\/+$/, '');
  // The sandbox routes live beside /v1 on the same origin.
  const sandboxBase = base.replace(/\/v1$/, '');
  const requestHeaders = createRequestHeaders(opts.userAgent ?? 'svc-client/0.1.0');
  const exchange = createExchange(opts, base);
  const credentials = createCredentials(opts, { base, exchange, requestHeaders });

  /**
   * Calls one operation of the endpoint table with the credential it takes: a `/v1` operation, or a sandbox route of a
   * local server (`svc serve`), beside `/v1` on the same origin, with its admin token.
   */
  async function request<N extends EndpointName>(
    name: N,
    o: CallOptions<BodyOf<Endpoints[N]>>,
  ): Promise<Reply<SuccessOf<Endpoints[N]>>> {
    const e = endpoints[name] as Endpointish;
    const url = target(e.auth === 'admin' ? sandboxBase : base, e, o);
    const { headers, body } = requestHeaders(o, name);
    const auth = await credentials.credential(e.auth ?? 'none');
    if (auth.bearer) headers.authorization = `Bearer ${auth.bearer}`;
    let res = await exchange(e.method, url, headers, body, o);
    if (
      res.status === 401 &&
      auth.session &&
      opts.session &&
      Problem.safeParse(parseJson(res.text)).data?.code === 'invalid_token'
    ) {
      const fresh = await credentials.refresh(opts.session, auth.bearer);
      if (fresh) {
        headers.authorization = `Bearer ${fresh}`;
        res = await exchange(e.method, url, headers, body, o);
      }
    }
    return answerOf(base, name, e, res);
  }

  /** Calls one `/v1` operation of the endpoint table. */
  const call = <N extends V1EndpointName>(name: N, o: CallOptions<BodyOf<Endpoints[N]>> = {}) => request(name, o);

  /** Calls one sandbox route of a local server (`svc serve`), with the admin token. */
  const sandbox = <N extends AdminEndpointName>(name: N, o: CallOptions<BodyOf<Endpoints[N]>> = {}) => request(name, o);

  /**
   * `GET /sandbox/stream` of a local server, with the admin token: the inbox's changes as they are committed, until
   * `signal` aborts or the server ends the stream. Resolves once the server has answered, by when it has subscribed
   * this reader, so nothing caught after that is missed. Opened once: a stream is no request to retry. `events`: only
   * the events of these names (a server from before `?events=` sends them all).
   */
  async function inboxStream(
    o: { signal?: AbortSignal; events?: InboxEvent['event'][] } = {},
  ): Promise<AsyncIterable<InboxEvent>> {
    const e: Endpointish = { method: 'GET', path: '/sandbox/stream', auth: 'admin', success: [200, null] };
    const adminToken = await reveal(opts.adminToken);
    const { headers } = requestHeaders({ headers: { accept: 'text/event-stream' } }, 'inboxStream');
    if (adminToken) headers.authorization = `Bearer ${adminToken}`;
    let r: TransportResponse;
    try {
      r = await send(
        target(sandboxBase, e, { query: o.events && { events: o.events.join(',') } }),
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
      answerOf(base, 'inboxStream', e, {
        status,
        headers: new ResponseHeaders(r.headers),
        text: utf8.decode(bytes),
        bytes,
      });
    }
    return inboxEvents(r.body, base, o.signal);
  }

  return { baseUrl: base, call, sandbox, inboxStream };
}
export type Client = ReturnType<typeof createClient>;
