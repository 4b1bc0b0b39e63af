// Health for supervisors (systemd, Docker, Kubernetes, a test runner waiting for the server): no token, no body to
// send, JSON out. `/livez` answers while the process runs; `/readyz` only while the server can do its work.
import type { Hono } from 'hono';
import { isDiskFull } from '../../lib/disk-full.js';
import { ServiceError } from '../core/errors.js';
import { problemResponse } from './problem.js';

export interface HealthDeps {
  /** Whether both listeners are up (the API's and the SMTP sink's). */
  listening(): boolean;
  stopping(): boolean;
  /** A write that touches the disk and leaves nothing behind; rejects when the database cannot be written. */
  probeWrite(): Promise<void>;
  /** What is full when a write finds no room ("the disk holding the data directory … is full"). */
  storage: string;
  origin(): string;
}

// biome-ignore lint/suspicious/noExplicitAny: any Hono app, whatever its bindings
export function healthRoutes(app: Hono<any>, deps: HealthDeps): void {
  app.get('/livez', (c) => c.json({ status: 'ok' }));
  app.get('/readyz', async (c) => {
    const checks = { listeners: deps.listening() ? 'ok' : 'down', database: 'ok' };
    const reasons: string[] = [];
    if (deps.stopping()) reasons.push('the server is shutting down');
    else if (!deps.listening()) reasons.push('the server is still starting');
    try {
      await deps.probeWrite();
    } catch (err) {
      checks.database = isDiskFull(err) ? 'full' : 'unwritable';
      reasons.push(isDiskFull(err) ? deps.storage : `the database cannot be written (${(err as Error).message})`);
    }
    if (reasons.length === 0) return c.json({ status: 'ready', checks });
    const err = new ServiceError('unavailable', `Not ready: ${reasons.join('; ')}.`, {
      headers: { 'Retry-After': '1' },
      members: { checks },
    });
    return problemResponse(err, c.get('requestId') as string, deps.origin());
  });
}
