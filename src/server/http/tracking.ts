import type { Hono } from 'hono';
import type { Core } from '../core/index.js';
import { ServiceError } from '../core/errors.js';
import { clientIp, type Env } from './request.js';

// A transparent 1×1 GIF.
const PIXEL = Buffer.from('R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7', 'base64');

/** The click redirect and the open pixel that tracked links and images point at. */
export function trackingRoutes(app: Hono<Env>, core: Core, trustProxy: boolean): void {
  app.get('/t/c/:token', (c) => {
    const url = core.tracking.click(c.req.param('token'), {
      user_agent: c.req.header('user-agent') ?? null,
      ip: clientIp(c, trustProxy),
    });
    if (!url) throw new ServiceError('not_found', 'This tracking link is not valid.');
    return c.redirect(url, 302);
  });
  app.get('/t/o/:token', (c) => {
    core.tracking.open(c.req.param('token'), {
      user_agent: c.req.header('user-agent') ?? null,
      ip: clientIp(c, trustProxy),
    });
    return new Response(new Uint8Array(PIXEL), {
      headers: { 'Content-Type': 'image/gif', 'Cache-Control': 'no-store, max-age=0' },
    });
  });
}
