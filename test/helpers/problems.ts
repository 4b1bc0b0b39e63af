// The Problem assertion shared by the integration suites (docs/api.md#errors, docs/errors.md).
import { expect } from 'vitest';
import type { Reply } from './server.js';

/** The API version the service answers with (written out here, not imported from src, so the tests check it). */
export const SERVICE_VERSION = '2026-08-01';
/** The format of X-Request-Id and of a Problem's `request_id`. */
export const REQUEST_ID = /^req_[0-9A-Za-z]{24}$/;

/**
 * Asserts a Problem response: the status (in the status line and the body), the code when given, the
 * application/problem+json media type, the Service-Version header, `type` and `title`, and the X-Request-Id header
 * (well formed) repeated as the body's `request_id`.
 */
export function expectProblem(r: Reply, status: number, code?: string): void {
  const summary = `${r.status} ${r.text}`;
  expect(r.status, summary).toBe(status);
  expect(r.headers.get('content-type'), summary).toMatch(/^application\/problem\+json\b/);
  expect(r.headers.get('service-version'), summary).toBe(SERVICE_VERSION);
  expect(r.body, summary).toBeTypeOf('object');
  if (code !== undefined) expect(r.body.code, summary).toBe(code);
  expect(r.body.status, summary).toBe(status);
  expect(r.body.type, summary).toBeTypeOf('string');
  expect(r.body.title, summary).toBeTypeOf('string');
  const requestId = r.headers.get('x-request-id');
  expect(requestId, summary).toMatch(REQUEST_ID);
  expect(r.body.request_id, summary).toBe(requestId);
}

/** The `errors[].path` values of a Problem. */
export function errorPaths(r: Reply): string[] {
  return (r.body?.errors ?? []).map((e: { path: string }) => e.path);
}
