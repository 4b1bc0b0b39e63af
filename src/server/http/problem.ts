import type { ServiceError } from '../core/errors.js';
import { problemBody } from '../core/problem.js';

export const PROBLEM_CONTENT_TYPE = 'application/problem+json';

/** The headers an error's Problem is answered with: `Retry-After` when the error says how long to wait. */
export function problemHeaders(err: ServiceError): Record<string, string> {
  const wait = err.extra.retryAfterSeconds;
  return wait === undefined ? {} : { 'Retry-After': String(wait) };
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
    headers: { 'Content-Type': PROBLEM_CONTENT_TYPE, ...headers, ...problemHeaders(err) },
  });
}

/**
 * A refusal a route answers with headers of its own beside the Problem's (a send's `X-RateLimit-*`): thrown by the
 * route, answered by the app's error handler like the ServiceError it carries.
 */
export class RouteRefusal extends Error {
  constructor(
    readonly error: ServiceError,
    readonly headers: Record<string, string>,
  ) {
    super(error.message);
    this.name = 'RouteRefusal';
  }
}
