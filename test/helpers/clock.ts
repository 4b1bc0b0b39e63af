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

/**
 * Time sources for a real clock (`startTestServer({ clock: 'real', time })`) whose wall clock can be stepped apart
 * from the time that passes, as an NTP correction or a restored VM steps it.
 */
export function steppableTime(start = Date.now()) {
  let wall = start;
  let elapsed = 0;
  return {
    sources: { wall: () => wall, elapsed: () => elapsed },
    /** Time passes: both move. */
    pass(ms: number) {
      wall += ms;
      elapsed += ms;
    },
    /** The wall clock alone moves (back when negative). */
    step(ms: number) {
      wall += ms;
    },
  };
}
