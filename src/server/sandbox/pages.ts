// Plain pages outside the API: the verify-email landing page and the inbox page (its shell, script and styles, and
// sign-in from the printed URL), plus the inbox's live stream.
import type { Context, Hono } from 'hono';
import { getCookie, setCookie } from 'hono/cookie';
import type { Inbox } from '../core/inbox.js';
import { ADMIN_COOKIE, type SandboxAuth } from './auth.js';
import { inboxScript } from './inbox-script.js';
import { INBOX_CSS } from './inbox-style.js';
import type { InboxStream } from './stream.js';
import { escapeHtml } from '../../lib/html.js';

/** The inbox's own pages run only our script and styles; nothing may frame them. */
const PAGE_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "frame-src 'self'",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

const PAGE_HEADERS = {
  'Content-Security-Policy': PAGE_CSP,
  'Referrer-Policy': 'no-referrer',
  'X-Content-Type-Options': 'nosniff',
  'Cache-Control': 'no-store',
};

/** The page's theme as the reader chose it in this browser (the switch's cookie), else the system's. */
export const THEME_COOKIE = 'svc_theme';
type Theme = 'light' | 'dark' | null;
const themeOf = (c: Context): Theme => {
  const t = getCookie(c, THEME_COOKIE);
  return t === 'light' || t === 'dark' ? t : null;
};

function page(title: string, body: string, opts: { script?: boolean; bodyClass?: string; theme?: Theme } = {}): string {
  // The chosen theme is in the served page itself: no flash of the other one before the script runs.
  return `<!doctype html><html lang="en"${opts.theme ? ` data-theme="${opts.theme}"` : ''}><head><meta charset="utf-8"><title>${escapeHtml(title)}</title>
<meta name="viewport" content="width=device-width, initial-scale=1"><meta name="color-scheme" content="light dark">
<link rel="icon" href="data:,"><link rel="stylesheet" href="/inbox.css">${opts.script ? '\n<script src="/inbox.js" defer></script>' : ''}
</head><body${opts.bodyClass ? ` class="${opts.bodyClass}"` : ''}>${body}</body></html>`;
}

/**
 * The page without the cookie: where the admin token is, and a form that signs in with it as the printed address
 * does. `problem` says why the last try failed.
 */
function signInPage(theme: Theme, problem?: string): string {
  return page(
    'Sign in · svc inbox',
    `<main class="signin"><h1>svc inbox</h1>
<p>Sign in with the admin token of this <code>svc serve</code>. You find it</p>
<ul>
<li>in the <code>inbox</code> address of the server's ready line, the first line it prints
(<code class="wrap">{"ready":true,…,"inbox":"http://…/?token=adm_…"}</code>), also the <strong>Inbox</strong> row of its summary on
the terminal: opening that address signs this browser in;</li>
<li>as the ready line's <code>admin_token</code>, and in the <code>admin-token</code> file of the server's data
directory (<code>~/.local/share/svc/admin-token</code> unless <code>--data-dir</code> or <code>SVC_DATA_DIR</code> names
another; a server started with <code>--memory</code> writes none).</li>
</ul>
<form method="post" class="token-form">
  <label for="token">Admin token</label>
  <div class="token-row"><input id="token" name="token" type="password" required autocomplete="off" spellcheck="false"
    placeholder="adm_…"${problem ? ' aria-invalid="true" aria-describedby="token-problem"' : ''}><button type="submit" class="primary">Sign in</button></div>
  ${problem ? `<p id="token-problem" class="problem" role="alert">${escapeHtml(problem)}</p>` : ''}
</form>
<p class="fine">This browser then keeps a cookie made from the token, not the token itself.</p></main>`,
    { theme },
  );
}

const WRONG_TOKEN =
  "That is not this server's admin token. Each data directory has its own (and a server started with --memory a new one on every start).";

/** What the inbox's empty list offers to send a first message with: the seeded test key, while it works. */
export interface FirstSend {
  /** A test key of the seed, and its verified domain; null without a seed (or once its test key is revoked). */
  seed: { key: string; domain: string } | null;
  /** The SMTP sink's address, where any program may hand mail. */
  smtp: string;
}

/**
 * The empty list's way to a first message, as a template the page script shows while nothing is caught: a curl line
 * with the seeded test key (or `svc emails send` with a key of one's own), and the SMTP port.
 */
function firstSendTemplate(origin: string, f: FirstSend): string {
  const api = `${origin}/v1`;
  const send = f.seed
    ? `curl -s ${api}/emails -H 'Authorization: Bearer ${f.seed.key}' -H 'Content-Type: application/json' ` +
      `-d '{"from":"hello@${f.seed.domain}","to":"you@example.org","subject":"Hello","text":"Your code is 482913"}'`
    : `SVC_BASE_URL=${api} SVC_API_KEY=svc_test_… svc emails send --from hello@YOUR-DOMAIN --to you@example.org --subject Hello --text 'Hi'`;
  const cli = f.seed
    ? `SVC_BASE_URL=${api} SVC_API_KEY=${f.seed.key} svc emails send --from hello@${f.seed.domain} --to you@example.org --subject Hello --text 'Hi'`
    : null;
  return `<template id="first-send"><li class="empty first-send">
  <p><strong>No mail caught yet.</strong> Send a first message${f.seed ? ' with the seeded test key' : ' with an API key of yours'}; it shows here at once:</p>
  <pre><code id="first-send-command">${escapeHtml(send)}</code></pre>
  ${cli ? `<p>or from the command line:</p>\n  <pre><code>${escapeHtml(cli)}</code></pre>` : ''}
  <p>Any program may also hand mail to the SMTP sink at <code>${escapeHtml(f.smtp)}</code>.</p>
</li></template>`;
}

/** The search's operators (docs/local-server.md, searching caught mail): each with an example a click writes into the box. */
const OPERATORS: [example: string, meaning: string][] = [
  [
    'from:ada',
    'the sender (From and envelope sender); also to: (recipients) and subject:, each with a word or "a phrase"',
  ],
  ['to:ops@example.org', 'a recipient: To, Cc or the envelope'],
  ['cc:billing', 'a Cc address containing the text'],
  ['tag:plan=pro', 'a tag of the /v1 message, by name (tag:plan) or name=value'],
  ['status:bounced', "the /v1 message's status now (queued, delivered, bounced, failed…)"],
  ['after:2026-05-01', 'received at or after a date or date-time (UTC, service clock); before: for earlier'],
  ['larger:100KB', 'bigger than a size as received (KB, MB, KiB…); smaller: for less'],
  ['is:unread', 'unread mail; is:read for read mail'],
  ['has:attachment', 'mail with attachments'],
  ['-from:noreply', '- before any part excludes what it matches'],
  ['"weekly digest"', 'those words in that order'],
];

const SEARCH_OPERATORS = `<div id="search-ops" class="search-ops" popover aria-labelledby="search-ops-h">
  <h2 id="search-ops-h">Search operators</h2>
  <table><tbody>${OPERATORS.map(
    ([example, meaning]) =>
      `<tr><th scope="row"><button type="button" data-op="${escapeHtml(example)}">${escapeHtml(example)}</button></th><td>${escapeHtml(meaning)}</td></tr>`,
  ).join('')}</tbody></table>
  <p>Every part must match; other words match the subject, sender, recipients and text. A click on an operator adds it to the search.</p>
</div>`;

const THEMES: [string, string][] = [
  ['system', 'System theme'],
  ['light', 'Light theme'],
  ['dark', 'Dark theme'],
];

function shell(workspaces: { id: string; name: string }[], webhooks: boolean, firstSend: string, theme: Theme): string {
  const options = workspaces.map((w) => `<option value="${escapeHtml(w.id)}">${escapeHtml(w.name)}</option>`).join('');
  const clip =
    '<svg class="clip" viewBox="0 0 24 24" aria-hidden="true"><path d="M21 11l-8.5 8.5a5 5 0 0 1-7-7L14 4a3.5 3.5 0 0 1 5 5l-8.5 8.5a2 2 0 0 1-3-3L15 7"/></svg>';
  const themes = THEMES.map(
    ([v, label]) => `<option value="${v}"${v === (theme ?? 'system') ? ' selected' : ''}>${label}</option>`,
  ).join('');
  return page(
    'svc inbox',
    `<a class="skip" href="#rows">Skip to the messages</a>
<header class="bar">
  <h1>svc inbox</h1>
  <form id="search" role="search">
    <label for="q" class="vh">Search mail</label>
    <input id="q" name="q" type="search" placeholder="Words, from:, tag:, status:, after:…" autocomplete="off" aria-describedby="search-help">
    <button type="button" class="ops-toggle" popovertarget="search-ops" aria-label="Search operators" title="Search operators">?</button>
    <span id="search-help" class="vh">Words match the subject, sender, recipients and text; operators such as from:, tag: or after: filter, and - before a part excludes it. The button after the box lists them.</span>
    <label for="workspace" class="vh">Workspace</label>
    <select id="workspace" name="workspace"><option value="">All workspaces</option>${options}</select>
    <button type="submit">Search</button>
    <p id="search-problem" class="search-problem" role="alert" hidden></p>
  </form>
  <span id="live" class="live">Connecting…</span>
  <label for="theme" class="vh">Theme</label>
  <select id="theme" class="theme">${themes}</select>
</header>
${SEARCH_OPERATORS}
<div class="layout">
  <aside class="panels" aria-label="Sandbox">
    <section class="panel" aria-labelledby="clock-h">
      <h2 id="clock-h">Clock</h2>
      <p><time id="clock-now"></time> <span id="clock-mode" class="tag"></span></p>
      <div id="clock-moves" class="moves" hidden>
        <button type="button" data-advance="30">+30 s</button>
        <button type="button" data-advance="3600">+1 h</button>
        <button type="button" data-advance="86400">+1 day</button>
      </div>
    </section>
    <section class="panel" id="webhooks-panel" aria-labelledby="webhooks-h" hidden${webhooks ? ' data-served' : ''}>
      <h2 id="webhooks-h">Webhook endpoints</h2>
      <div id="webhooks"></div>
    </section>
  </aside>
  <main>
    <section class="list" aria-labelledby="list-h">
      <div class="list-head">
        <h2 id="list-h">Messages</h2>
        <button type="button" id="delete-all" class="danger">Delete all…</button>
      </div>
      <p id="note" class="note" role="status"></p>
      <ol id="rows" class="rows" tabindex="-1" aria-labelledby="list-h" aria-busy="true"><li class="empty">Loading…</li></ol>
      <nav class="pager" aria-label="Pages">
        <button type="button" id="newer" disabled>← Newer</button>
        <button type="button" id="older" disabled>Older →</button>
      </nav>
    </section>
    <section id="view" class="view" aria-label="Message"><p class="empty">Select a message to read it.</p></section>
  </main>
</div>
<p class="keys"><kbd>j</kbd>/<kbd>k</kbd> next/previous · <kbd>Enter</kbd> open · <kbd>Delete</kbd> delete · <kbd>/</kbd> search</p>
<template id="clip">${clip}</template>
${firstSend}
<dialog id="confirm-all" aria-labelledby="confirm-h" aria-describedby="confirm-p">
  <form method="dialog">
    <h2 id="confirm-h">Delete all messages?</h2>
    <p id="confirm-p">Every message the sink caught is deleted. This cannot be undone.</p>
    <div class="buttons"><button value="cancel" autofocus>Cancel</button><button value="confirm" class="danger">Delete all</button></div>
  </form>
</dialog>`,
    { script: true, theme },
  );
}

export function pages(
  app: Hono,
  deps: {
    auth: SandboxAuth;
    inbox: Pick<Inbox, 'workspaces'>;
    stream: InboxStream;
    /** Whether GET /sandbox/webhooks is served: the page then shows each workspace's endpoints. */
    webhooks?: boolean;
    /** How the empty list says to send a first message (asked on every page, so a revoked key is not offered). */
    firstSend?: () => FirstSend;
  },
): void {
  const { auth } = deps;
  const html = (c: Context, body: string, status: 200 | 400 | 401 = 200) => c.html(body, status, PAGE_HEADERS);

  app.get('/verify-email', (c) =>
    c.html(
      page(
        'Confirm your email',
        `<main class="signin"><h1>Confirm your email address</h1><p><button id="go">Confirm</button></p><p id="out"></p></main>
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

  /** Signs in with the admin token (of the printed address or the form): the cookie, then the page without it. */
  const signIn = (c: Context, token: string) => {
    if (!auth.isToken(token)) return html(c, signInPage(themeOf(c), WRONG_TOKEN), 401);
    setCookie(c, ADMIN_COOKIE, auth.cookie, {
      httpOnly: true,
      sameSite: 'Strict',
      path: '/',
      secure: new URL(c.req.url).protocol === 'https:',
    });
    // The token leaves the address bar (and the history): the page is answered by a redirect to itself without it.
    const rest = new URL(c.req.url);
    rest.searchParams.delete('token');
    c.header('Referrer-Policy', 'no-referrer');
    c.header('Cache-Control', 'no-store');
    return c.redirect(`${rest.pathname}${rest.search}`, 303);
  };

  const inbox = (c: Context) => {
    const token = c.req.query('token');
    if (token !== undefined) return signIn(c, token);
    if (!auth.hasCookie(c.req.raw)) return html(c, signInPage(themeOf(c)), 401);
    const origin = new URL(c.req.url).origin;
    const first = deps.firstSend ? firstSendTemplate(origin, deps.firstSend()) : '';
    return html(c, shell(deps.inbox.workspaces(), deps.webhooks ?? false, first, themeOf(c)));
  };
  /** The sign-in form's post: a token of a few dozen characters, read only when it says it is no more than a form. */
  const form = async (c: Context) => {
    const length = Number(c.req.header('content-length'));
    const type = c.req.header('content-type') ?? '';
    if (!(length <= 4096) || !type.startsWith('application/x-www-form-urlencoded'))
      return html(c, signInPage(themeOf(c), 'Send the admin token with the form on this page.'), 400);
    const token = new URLSearchParams(await c.req.text()).get('token')?.trim() ?? '';
    return signIn(c, token);
  };
  app.get('/', inbox);
  app.get('/messages/:id', inbox);
  app.post('/', form);
  app.post('/messages/:id', form);

  app.get('/inbox.js', async (c) =>
    c.body(await inboxScript(), 200, {
      'Content-Type': 'text/javascript; charset=utf-8',
      'Cache-Control': 'no-cache',
    }),
  );
  app.get('/inbox.css', (c) =>
    c.body(INBOX_CSS, 200, { 'Content-Type': 'text/css; charset=utf-8', 'Cache-Control': 'no-cache' }),
  );
  app.get('/sandbox/stream', (c) => deps.stream.handle(c));
}
