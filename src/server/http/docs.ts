// The error pages every Problem's `docs_url` points at: one short page per error code, and an index of them all.
import type { Hono } from 'hono';
import { ERROR_CODES, ERROR_HELP, type ErrorCode } from '../../contract/common.js';
import { ServiceError } from '../core/errors.js';
import { ERROR_DOCS_PATH } from '../core/problem.js';
import { escapeHtml } from '../../lib/html.js';

/** Escaped text in which `backticked` commands become code. */
function prose(text: string): string {
  return escapeHtml(text).replace(/`([^`]+)`/g, '<code>$1</code>');
}

function page(title: string, body: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(title)}</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>
body{font:16px/1.5 system-ui,sans-serif;margin:0;color:#1d2330;background:#fff}
main{max-width:46rem;margin:1.5rem auto;padding:0 1rem}
a{color:#1f4fb5} code{font:0.95em ui-monospace,monospace;background:#f1f3f6;padding:0 .2em}
table{border-collapse:collapse;width:100%} td,th{padding:.35rem .5rem;border-bottom:1px solid #dde1e7;text-align:left}
</style></head><body><main>${body}</main></body></html>`;
}

function codePage(code: ErrorCode): string {
  const [status, title] = ERROR_CODES[code];
  const help = ERROR_HELP[code];
  return page(
    `${code}: ${title} (${status})`,
    `<nav><a href="${ERROR_DOCS_PATH}">All error codes</a></nav>
<h1><code>${code}</code>: ${escapeHtml(title)}</h1>
<p>HTTP status ${status}</p>
<h2>What it means</h2><p>${prose(help.meaning)}</p>
<h2>How to fix it</h2><p>${prose(help.fix)}</p>`,
  );
}

function indexPage(): string {
  const rows = (Object.keys(ERROR_CODES) as ErrorCode[])
    .map((code) => {
      const [status, title] = ERROR_CODES[code];
      return `<tr><td><a href="${ERROR_DOCS_PATH}/${code}"><code>${code}</code></a></td><td>${status}</td><td>${escapeHtml(title)}</td></tr>`;
    })
    .join('\n');
  return page(
    'Error codes',
    `<h1>Error codes</h1>
<p>Every error response is a Problem (<code>application/problem+json</code>) whose <code>code</code> is one of these.</p>
<table><thead><tr><th scope="col">Code</th><th scope="col">Status</th><th scope="col">Title</th></tr></thead>
<tbody>${rows}</tbody></table>`,
  );
}

/** `GET /docs/errors` and `GET /docs/errors/{code}`; an unknown code is a 404 Problem. */
// biome-ignore lint/suspicious/noExplicitAny: any Hono app, whatever its bindings
export function docsRoutes(app: Hono<any>): void {
  app.get(ERROR_DOCS_PATH, (c) => c.html(indexPage()));
  app.get(`${ERROR_DOCS_PATH}/:code`, (c) => {
    const code = c.req.param('code');
    if (!Object.hasOwn(ERROR_CODES, code)) {
      throw new ServiceError(
        'not_found',
        `No error code "${code.slice(0, 64)}"; every code is listed at ${ERROR_DOCS_PATH}.`,
      );
    }
    return c.html(codePage(code as ErrorCode));
  });
}
