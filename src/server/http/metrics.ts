// GET /metrics: the server's metrics in Prometheus' text format (core/metrics.ts), for a scraper. Served beside /livez
// and /readyz rather than as an entry of the endpoint table: its answer is not JSON, no client of the contract calls
// it, and who may read it depends on a flag of the server (`--metrics-open`), which the table's fixed credential kinds
// cannot say. With the admin token as the bearer (as the sandbox routes take it), or with no token at all under
// --metrics-open, which options.ts allows only on a loopback host.
import type { Hono } from 'hono';
import type { Metrics } from '../core/metrics.js';
import { ServiceError } from '../core/errors.js';
import { bearerOf } from './request.js';

export interface MetricsDeps {
  metrics: Pick<Metrics, 'scrape'>;
  /** Whether the bearer is the admin token (or an inbox session made with it). */
  isAdmin(bearer: string | null): boolean;
  /** `--metrics-open`: anyone may read them. */
  open: boolean;
}

const HOW =
  '/metrics takes the admin token `svc serve` prints (admin_token of its ready line, also in the admin-token file of its data directory) as "Authorization: Bearer <admin_token>", or no token when the server runs with --metrics-open.';

// biome-ignore lint/suspicious/noExplicitAny: any Hono app, whatever its bindings
export function metricsRoute(app: Hono<any>, deps: MetricsDeps): void {
  app.get('/metrics', async (c) => {
    if (!deps.open) {
      const bearer = bearerOf(c);
      // Thrown, the app answers it as every sandbox route's refusal: a 401 Problem with WWW-Authenticate.
      if (!bearer) throw new ServiceError('missing_credentials', `No credential: ${HOW}`);
      if (!deps.isAdmin(bearer)) throw new ServiceError('invalid_token', `This is not the admin token: ${HOW}`);
    }
    const { body, contentType } = await deps.metrics.scrape();
    return c.body(body, 200, { 'Content-Type': contentType, 'Cache-Control': 'no-store' });
  });
}
