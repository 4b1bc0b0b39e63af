// The service clock as the integration suites see it (the test server runs a manual clock).
import { expect } from 'vitest';
import type { TestServer } from './server.js';

/** A service timestamp: ISO 8601 in UTC with milliseconds. */
export const ISO_MS_Z = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/** The service clock, in milliseconds (GET /sandbox/clock). */
export async function serviceNow(s: TestServer): Promise<number> {
  const r = await s.admin('GET', '/sandbox/clock');
  expect(r.status).toBe(200);
  return Date.parse(r.body.now);
}
