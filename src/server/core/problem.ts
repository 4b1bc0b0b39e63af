import { STATUS_CODES } from 'node:http';
import { ERROR_CODES, ERROR_NAMES, problemType, type ErrorCode, type Problem } from '../../contract/common.js';
import type { ServiceError } from './errors.js';

/** Where the server serves a page per error code (http/docs.ts), which every Problem's `docs_url` points at. */
export const ERROR_DOCS_PATH = '/docs/errors';

/** Where the page of an error code lives on a server whose public origin is `origin`. */
export function docsUrl(origin: string, code: ErrorCode): string {
  return `${origin}${ERROR_DOCS_PATH}/${code}`;
}

/**
 * A refusal as the contract's Problem document: the one mapping from an error code to a status and a body, used for
 * an answer's body (http/problem.ts) and for a refused item of a batch, which the batch's result carries. `requestId`
 * is the request it refuses; `origin` the server's public origin, where `docs_url` points.
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
