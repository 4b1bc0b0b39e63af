// Plain pages outside the API: the verify-email landing page and the inbox page.
import type { Context, Hono } from 'hono';
import { getCookie, setCookie } from 'hono/cookie';
import { iso } from '../../lib/clock.js';
import type { Core } from '../core/index.js';
import type { CaughtReader } from '../smtp/sink.js';
import { safeEqual } from '../core/deps.js';

export const ADMIN_COOKIE = 'svc_admin';

export function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (ch) => `&#${ch.charCodeAt(0)};`);
}

function page(title: string, body: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(title)}</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>
body{font:15px/1.45 system-ui,sans-serif;margin:0;color:#1d2330;background:#f6f7f9}
header{background:#1d2330;color:#fff;padding:.8rem 1.2rem;font-weight:600}
main{max-width:1000px;margin:1rem auto;padding:0 1rem}
table{width:100%;border-collapse:collapse;background:#fff}
td,th{padding:.45rem .6rem;border-bottom:1px solid #e3e6eb;text-align:left;vertical-align:top}
a{color:#2457c5;text-decoration:none} .muted{color:#6b7280} pre{white-space:pre-wrap;background:#fff;padding:.8rem;border:1px solid #e3e6eb}
iframe{width:100%;min-height:360px;border:1px solid #e3e6eb;background:#fff}
button{font:inherit;padding:.5rem 1rem}
</style></head><body><header>svc</header><main>${body}</main></body></html>`;
}

export function pages(app: Hono, core: Core, adminToken: string, caught: CaughtReader): void {
  const authed = (c: Context): boolean => {
    const token = c.req.query('token');
    if (token && safeEqual(token, adminToken)) {
      setCookie(c, ADMIN_COOKIE, token, { httpOnly: true, sameSite: 'Strict', path: '/' });
      return true;
    }
    const cookie = getCookie(c, ADMIN_COOKIE);
    return cookie != null && safeEqual(cookie, adminToken);
  };
  const denied = (c: Context) =>
    c.html(page('Inbox', '<p>Open the inbox with the URL <code>svc serve</code> printed (it carries the admin token).</p>'), 401);

  app.get('/verify-email', (c) =>
    c.html(
      page(
        'Confirm your email',
        `<h1>Confirm your email address</h1><p><button id="go">Confirm</button></p><p id="out" class="muted"></p>
<script>
document.getElementById('go').onclick = async () => {
  const token = new URLSearchParams(location.search).get('token') || '';
  const res = await fetch('/v1/auth/verify-email', {method:'POST', headers:{'Content-Type':'application/json'}, body: JSON.stringify({token})});
  const body = await res.json();
  document.getElementById('out').textContent = res.ok ? body.note : (body.detail || body.title);
};
</script>`,
      ),
    ),
  );

  app.get('/', (c) => {
    if (!authed(c)) return denied(c);
    const rows = core.sink.list({ limit: 100 }) ?? [];
    const items = rows
      .map(
        (r) => `<tr><td><a href="/inbox/${r.id}">${escapeHtml(r.subject ?? '(no subject)')}</a></td>
<td>${escapeHtml(r.from_addr ?? '')}</td><td>${escapeHtml((JSON.parse(r.to_addrs) as string[]).join(', '))}</td>
<td class="muted">${iso(r.received_at)}</td></tr>`,
      )
      .join('');
    return c.html(
      page(
        'Inbox',
        `<h1>Inbox</h1><table><thead><tr><th>Subject</th><th>From</th><th>To</th><th>Received</th></tr></thead>
<tbody>${items || '<tr><td colspan="4" class="muted">No mail caught yet.</td></tr>'}</tbody></table>`,
      ),
    );
  });

  app.get('/inbox/:id', async (c) => {
    if (!authed(c)) return denied(c);
    const r = core.sink.get(c.req.param('id'));
    if (!r) return c.html(page('Not found', '<p>No such message.</p>'), 404);
    const body = await caught.body(r);
    const headers = (JSON.parse(r.headers) as { name: string; value: string }[])
      .map((h) => `${escapeHtml(h.name)}: ${escapeHtml(h.value)}`)
      .join('\n');
    return c.html(
      page(
        r.subject ?? 'Message',
        `<p><a href="/">← Inbox</a></p><h1>${escapeHtml(r.subject ?? '(no subject)')}</h1>
<p class="muted">DKIM: ${await caught.dkim(r)}</p>
${body.html ? `<iframe sandbox="" srcdoc="${escapeHtml(body.html)}"></iframe>` : ''}
<h2>Text</h2><pre>${escapeHtml(body.text ?? '')}</pre><h2>Headers</h2><pre>${headers}</pre>`,
      ),
    );
  });
}
