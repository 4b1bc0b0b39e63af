// Plain pages outside the API: the verify-email landing page and the inbox page (its shell, script and styles, and
// sign-in from the printed URL), plus the inbox's live stream.
import type { Context, Hono } from 'hono';
import { deleteCookie, getCookie } from 'hono/cookie';
import { ServiceError } from '../core/errors.js';
import type { Inbox } from '../core/inbox.js';
import { STREAM_SCOPE, type SandboxAuth } from './auth.js';
import { inboxScript } from './inbox-script.js';
import { INBOX_CSS } from './inbox-style.js';
import { bearerOf, type InboxStream } from './stream.js';
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

/** The cookie older versions signed the page in with: a bearer credential, removed at the next sign-in. */
const LEGACY_COOKIE = 'svc_admin';

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
 * The sign-in page: where the admin token is, and a form that signs in with it as the printed address does. `problem`
 * says why the last try failed; `ended`, that the page's session ended (it expired, or the admin token changed).
 */
function signInPage(theme: Theme, o: { problem?: string; ended?: boolean } = {}): string {
  const { problem } = o;
  return page(
    'Sign in · svc inbox',
    `<main class="signin"><h1>svc inbox</h1>
${o.ended ? '<p class="problem" role="status">Your session of this inbox ended: it expired, or the server was started with a new admin token.</p>\n' : ''}<p>Sign in with the admin token of this <code>svc serve</code>. You find it</p>
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
<p class="fine">This browser then keeps a session of this page, not the token: it lasts a day from the page's last use
and a week at most, and a new admin token ends it.</p></main>`,
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

/**
 * The page's shell: the same for everyone, holding nothing of the sandbox's (no workspace, no key, no mail). Its
 * script signs in with the session the page holds and reads everything else through it.
 */
function shell(webhooks: boolean, theme: Theme): string {
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
    <select id="workspace" name="workspace"><option value="">All workspaces</option></select>
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

/** Where the sign-in may go on to: a page of the inbox, never another site (`//host`) or another path. */
function nextOf(raw: string | undefined): string {
  return raw && /^\/(messages\/[^/?#]+)?(\?[^#]*)?$/.test(raw) ? raw : '/';
}

export function pages(
  app: Hono,
  deps: {
    auth: SandboxAuth;
    inbox: Pick<Inbox, 'workspaces'>;
    stream: InboxStream;
    /** Whether GET /sandbox/webhooks is served: the page then shows each workspace's endpoints. */
    webhooks?: boolean;
    /** How the empty list says to send a first message (asked at every start of the page, so a revoked key is not offered). */
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

  /**
   * Signs in with the admin token (of the printed address or the form): a new session, handed to the page in the
   * address's fragment, which no request carries and the page's script takes out of the address and the history at
   * once. The cookie of older versions, which was a bearer credential, is removed.
   */
  const signIn = (c: Context, token: string, next: string) => {
    if (!auth.isToken(token)) return html(c, signInPage(themeOf(c), { problem: WRONG_TOKEN }), 401);
    const { token: session } = auth.signIn();
    if (getCookie(c, LEGACY_COOKIE) !== undefined) deleteCookie(c, LEGACY_COOKIE, { path: '/' });
    c.header('Referrer-Policy', 'no-referrer');
    c.header('Cache-Control', 'no-store');
    return c.redirect(`${next}#session=${session}`, 303);
  };

  /** The page itself (its shell), or the sign-in from the printed address, which then leaves the address. */
  const inbox = (c: Context) => {
    const token = c.req.query('token');
    if (token === undefined) return html(c, shell(deps.webhooks ?? false, themeOf(c)));
    const rest = new URL(c.req.url);
    rest.searchParams.delete('token');
    return signIn(c, token, nextOf(`${rest.pathname}${rest.search}`));
  };
  app.get('/', inbox);
  app.get('/messages/:id', inbox);

  app.get('/sign-in', (c) => html(c, signInPage(themeOf(c), { ended: c.req.query('ended') !== undefined })));
  /** The sign-in form's post: a token of a few dozen characters, read only when it says it is no more than a form. */
  app.post('/sign-in', async (c) => {
    const length = Number(c.req.header('content-length'));
    const type = c.req.header('content-type') ?? '';
    if (!(length <= 4096) || !type.startsWith('application/x-www-form-urlencoded'))
      return html(c, signInPage(themeOf(c), { problem: 'Send the admin token with the form on this page.' }), 400);
    const token = new URLSearchParams(await c.req.text()).get('token')?.trim() ?? '';
    return signIn(c, token, nextOf(c.req.query('next')));
  });

  /** The session the page sends as its bearer, live, else 401 (the page then goes to the sign-in). */
  const sessionOf = (c: Context) => {
    const session = auth.session(bearerOf(c.req.raw));
    if (!session) {
      throw new ServiceError(
        'invalid_token',
        'This inbox session has ended (or never was): sign in again with the inbox address svc serve printed.',
      );
    }
    return session;
  };
  /**
   * What the page starts from, read with its session: the session renewed, the live stream's view token, the
   * workspaces to filter by, and how to send a first message (the seeded test key, while it works).
   */
  app.get('/inbox/session', (c) => {
    const session = sessionOf(c);
    const renewed = auth.renew(session);
    return c.json(
      {
        session: renewed.token,
        expires_at: renewed.expiresAt.toISOString(),
        stream: auth.viewToken(session, STREAM_SCOPE),
        workspaces: deps.inbox.workspaces(),
        first_send: deps.firstSend ? { api: `${new URL(c.req.url).origin}/v1`, ...deps.firstSend() } : null,
      },
      200,
      { 'Cache-Control': 'no-store' },
    );
  });
  /** The view token of a caught message: its HTML in the page's frame, its downloads and images carry it. */
  app.get('/inbox/views/:id', (c) =>
    c.json({ view: auth.viewToken(sessionOf(c), c.req.param('id')) }, 200, { 'Cache-Control': 'no-store' }),
  );

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
