// What a route handler is given and answers, typed from its entry of the endpoint table (contract/endpoints.ts): the
// body and query its schemas make, the path's parameters, and the caller its auth kind admits. Types only: http/routes/
// implement them, http/app.ts runs them.
import type { z } from 'zod';
import type { endpoints, EndpointName } from '../../contract/endpoints.js';
import type { CallerOf } from '../core/access.js';

export interface Reply {
  status?: number;
  body?: unknown;
  headers?: Record<string, string>;
  /** A non-JSON body (raw message source, HTML pages). */
  raw?: { body: string | Uint8Array; contentType: string };
}

export type BodyOf<E> = E extends { body: infer S extends z.ZodType } ? z.output<S> : undefined;
export type QueryOf<E> = E extends { query: infer S extends z.ZodType } ? z.output<S> : Record<string, never>;

/** The `:name` placeholders of a path (`/domains/:id/verify` → `id`). */
type ParamNames<P extends string> = P extends `${string}:${infer Name}/${infer Rest}`
  ? Name | ParamNames<`/${Rest}`>
  : P extends `${string}:${infer Name}`
    ? Name
    : never;
export type ParamsOf<E> = E extends { path: infer P extends string } ? Record<ParamNames<P>, string> : never;

export interface RequestContext<E> {
  body: BodyOf<E>;
  query: QueryOf<E>;
  params: ParamsOf<E>;
  /** The caller the endpoint's auth kind admits (core/access.ts CallerOf): a key-only operation's is an API key's. */
  caller: CallerOf<E>;
  ip: string;
  requestId: string;
  headers: Headers;
  /** Aborted when the client goes away before the answer (a long poll stops waiting). */
  signal: AbortSignal;
}

export type Handler<E> = (ctx: RequestContext<E>) => Promise<Reply | void> | Reply | void;

export type Handlers = { [N in EndpointName]: Handler<(typeof endpoints)[N]> };
