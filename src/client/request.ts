// A call's request: its URL from the endpoint's path, parameters and query, and its headers and JSON body.
import { SERVICE_VERSION, VERSION_HEADER } from '../contract/common.js';
import { IDEMPOTENCY_HEADER } from '../contract/emails.js';
import { fillPath } from '../contract/endpoints.js';
import { randomUuid } from '../lib/uuid.js';
import type { Endpointish } from './answer.js';
import { lower } from './exchange.js';
import type { CallOptions } from './options.js';

/** The sends that carry an Idempotency-Key (docs/api.md#sending): the only POSTs a retry may repeat. */
const IDEMPOTENT_SENDS = new Set<string>(['sendEmail', 'sendBatch']);

/** The request's URL: the endpoint's path under `root`, its parameters filled in, the query appended. */
export function target(root: string, e: Endpointish, o: CallOptions): URL {
  const url = new URL(root + fillPath(e.path, o.params));
  for (const [k, v] of Object.entries(o.query ?? {})) {
    if (v === undefined) continue;
    for (const one of Array.isArray(v) ? v : [v]) url.searchParams.append(k, String(one));
  }
  return url;
}

export type RequestHeadersFn = (
  o: CallOptions,
  name: string,
) => { headers: Record<string, string>; body: string | undefined };

/** The headers (version, user agent, an Idempotency-Key on a send) and the JSON body of a call. */
export function createRequestHeaders(userAgent: string): RequestHeadersFn {
  return function requestHeaders(
    o: CallOptions,
    name: string,
  ): { headers: Record<string, string>; body: string | undefined } {
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
      headers[IDEMPOTENCY_HEADER] = o.idempotencyKey ?? randomUuid();
    }
    return { headers, body };
  };
}
