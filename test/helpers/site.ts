// A real website on loopback for the links check: pages that answer 200, a 301 → 302 chain, a 404, a page that
// never answers, one that refuses HEAD, an image and a page served as one; every request is recorded.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer as createHttp, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttps } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface Site {
  /** `http://127.0.0.1:PORT` (or https:// with a self-signed certificate). */
  origin: string;
  /** Every request, `METHOD /path`, in order of arrival. */
  requests: string[];
  close(): Promise<void>;
}

function route(req: IncomingMessage, res: ServerResponse): boolean {
  const path = req.url ?? '/';
  const html = { 'content-type': 'text/html; charset=utf-8' };
  if (path.split('?')[0] === '/ok') res.writeHead(200, html).end('<p>ok</p>');
  else if (path === '/old') res.writeHead(301, { location: '/older' }).end();
  else if (path === '/older') res.writeHead(302, { location: '/ok' }).end();
  else if (path === '/loop') res.writeHead(301, { location: '/loop' }).end();
  else if (path === '/no-head') res.writeHead(req.method === 'HEAD' ? 405 : 200, html).end();
  else if (path === '/logo.png') res.writeHead(200, { 'content-type': 'image/png' }).end(Buffer.alloc(8));
  else if (path === '/page.png') res.writeHead(200, html).end('<p>not an image</p>');
  else if (path.split('?')[0] === '/slow') return false;
  else res.writeHead(404, html).end('<p>not found</p>');
  return true;
}

/** Starts the site on 127.0.0.1:0; `tls`: over https with a certificate no client trusts. */
export async function startSite(opts: { tls?: boolean } = {}): Promise<Site> {
  const hanging = new Set<ServerResponse>();
  const site: Site = {
    origin: '',
    requests: [],
    async close() {
      for (const res of hanging) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  const handler = (req: IncomingMessage, res: ServerResponse) => {
    site.requests.push(`${req.method} ${req.url}`);
    if (!route(req, res)) hanging.add(res);
  };
  let server: Server;
  if (opts.tls) {
    // A self-signed certificate made for this run with the system's openssl.
    const dir = mkdtempSync(join(tmpdir(), 'svc-site-'));
    try {
      execFileSync(
        'openssl',
        ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '1', '-subj', '/CN=127.0.0.1'].concat([
          '-keyout',
          join(dir, 'key.pem'),
          '-out',
          join(dir, 'cert.pem'),
        ]),
        { stdio: 'ignore' },
      );
      server = createHttps(
        { key: readFileSync(join(dir, 'key.pem')), cert: readFileSync(join(dir, 'cert.pem')) },
        handler,
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  } else {
    server = createHttp(handler);
  }
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  site.origin = `${opts.tls ? 'https' : 'http'}://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return site;
}
