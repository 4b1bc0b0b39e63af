import { ERROR_CODES, problemType, type ErrorCode, type Problem } from '../../contract/common.js';
import { ServiceError } from '../core/errors.js';

export const PROBLEM_CONTENT_TYPE = 'application/problem+json';

/** The one mapping from an error code to a status and a Problem body. */
export function problemBody(err: ServiceError, requestId: string): Problem {
  const [status, title] = ERROR_CODES[err.code];
  return {
    type: problemType(err.code),
    title,
    status,
    code: err.code,
    ...(err.detail ? { detail: err.detail } : {}),
    request_id: requestId,
    docs_url: problemType(err.code),
    ...(err.extra.errors ? { errors: err.extra.errors } : {}),
    ...(err.extra.members ?? {}),
  };
}

export function problemResponse(err: ServiceError, requestId: string, headers: Record<string, string> = {}): Response {
  const body = problemBody(err, requestId);
  return new Response(JSON.stringify(body), {
    status: body.status,
    headers: { 'Content-Type': PROBLEM_CONTENT_TYPE, ...headers, ...(err.extra.headers ?? {}) },
  });
}

export function problem(code: ErrorCode, detail?: string, extra?: ServiceError['extra']): ServiceError {
  return new ServiceError(code, detail, extra);
}
