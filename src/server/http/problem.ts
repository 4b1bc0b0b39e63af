import { STATUS_CODES } from 'node:http';
import { ERROR_CODES, ERROR_NAMES, problemType, type Problem } from '../../contract/common.js';
import type { ServiceError } from '../core/errors.js';
import { docsUrl } from './docs.js';

export const PROBLEM_CONTENT_TYPE = 'application/problem+json';

/**
 * The one mapping from an error code to a status and a Problem body. It needs no request framework, so a refusal
 * made below the router answers the same body; `origin` is the server's public origin, where `docs_url` points.
 */
export function problemBody(err: ServiceError, requestId: string, origin: string): Problem {
  const [own, title] = ERROR_CODES[err.code];
  const status = err.extra.status ?? own;
  const shownTitle = status === own ? title : (STATUS_CODES[status] ?? title);
  return {
    type: problemType(err.code),
    title: shownTitle,
    status,
    code: err.code,
    ...(err.detail ? { detail: err.detail } : {}),
    request_id: requestId,
    docs_url: docsUrl(origin, err.code),
    ...(err.extra.errors ? { errors: err.extra.errors } : {}),
    ...(err.extra.members ?? {}),
    // Extension members (RFC 9457 section 3.2) that Resend's SDKs read as a failed call's error (docs/resend.md).
    name: ERROR_NAMES[err.code],
    message: err.detail ?? shownTitle,
    statusCode: status,
  };
}

export function problemResponse(
  err: ServiceError,
  requestId: string,
  origin: string,
  headers: Record<string, string> = {},
): Response {
  const body = problemBody(err, requestId, origin);
  return new Response(JSON.stringify(body), {
    status: body.status,
    headers: { 'Content-Type': PROBLEM_CONTENT_TYPE, ...headers, ...(err.extra.headers ?? {}) },
  });
}
