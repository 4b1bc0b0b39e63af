// Health for supervisors (systemd, Docker, Kubernetes, a test runner waiting for the server): no token, no body to
// send, JSON out. `/livez` answers while the process runs; `/readyz` only while the server can do its work, and says
// why not without naming a file: anyone who can reach the server may ask.
import type { Hono } from 'hono';
import { isDiskFull } from '../../lib/disk-full.js';
import type { Logger } from '../../lib/log.js';
import { ServiceError } from '../core/errors.js';
import { problemResponse } from './problem.js';

export interface HealthDeps {
  /** Whether both listeners are up (the API's and the SMTP sink's). */
  listening(): boolean;
  stopping(): boolean;
  /** A write that touches the disk and leaves nothing behind; rejects when the database cannot be written. */
  probeWrite(): Promise<void>;
  /**
   * What is full when a write finds no room, without paths ("the disk holding the data directory is full"): anyone who
   * can reach the server reads it.
   */
  storage: string;
  origin(): string;
  log: Logger;
}

// biome-ignore lint/suspicious/noExplicitAny: any Hono app, whatever its bindings
export function healthRoutes(app: Hono<any>, deps: HealthDeps): void {
  // The error itself (which may name files) goes to the server's log, once while it lasts.
  let logged = '';
  app.get('/livez', (c) => c.json({ status: 'ok' }));
  app.get('/readyz', async (c) => {
    const checks = { listeners: deps.listening() ? 'ok' : 'down', database: 'ok' };
    const reasons: string[] = [];
    if (deps.stopping()) reasons.push('the server is shutting down');
    else if (!deps.listening()) reasons.push('the server is still starting');
    try {
      await deps.probeWrite();
      logged = '';
    } catch (err) {
      checks.database = isDiskFull(err) ? 'full' : 'unwritable';
      reasons.push(isDiskFull(err) ? deps.storage : 'the database cannot be written (the server log says why)');
      if (String(err) !== logged) deps.log.warn('not ready: the database cannot be written', { error: String(err) });
      logged = String(err);
    }
    if (reasons.length === 0) return c.json({ status: 'ready', checks });
    const err = new ServiceError('unavailable', `Not ready: ${reasons.join('; ')}.`, {
      retryAfterSeconds: 1,
      members: { checks },
    });
    return problemResponse(err, c.get('requestId') as string, deps.origin());
  });
}
