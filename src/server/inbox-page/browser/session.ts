// The page's session (docs/local-server.md#who-can-open-the-inbox): a bearer the sign-in hands the page in the
// address's fragment, kept in this origin's storage (which no other port of the host can read) and sent in a header,
// never in a cookie. What the page opens by address alone (a message's frame, a download, an image, the live stream)
// carries a view token of that one thing instead. The page renews the session as it starts and every hour while
// open; once it has ended, the page goes to the sign-in, which brings the reader back here.

/** Where this origin keeps the session, shared by the page's tabs. */
const KEY = 'svc.inbox.session';

/** The session in memory, should the browser keep nothing for this origin (storage turned off). */
let held: string | null = null;

function stored(): string | null {
  try {
    return localStorage.getItem(KEY) ?? held;
  } catch {
    return held;
  }
}

function keep(token: string | null) {
  held = token;
  try {
    if (token) localStorage.setItem(KEY, token);
    else localStorage.removeItem(KEY);
  } catch {
    // Storage is off in this browser: the session lasts as long as the page.
  }
}

/** The header every call of the page carries. */
export function authorization(): Record<string, string> {
  const token = stored();
  return token ? { Authorization: `Bearer ${token}` } : {};
}

/** To the sign-in, which comes back to this address; `ended`: the session the page had ended. */
export function toSignIn(ended: boolean) {
  keep(null);
  const next = location.pathname + location.search;
  location.replace(`/sign-in?next=${encodeURIComponent(next)}${ended ? '&ended' : ''}`);
}

/** What the page starts from (pages.ts, GET /inbox/session). */
export interface Start {
  session: string;
  expires_at: string;
  /** The live stream's view token. */
  stream: string;
  workspaces: { id: string; name: string }[];
  first_send: { api: string; smtp: string; seed: { key: string; domain: string } | null } | null;
}

/** The view tokens of the messages opened, by id, for as long as the session they were made with. */
const views = new Map<string, string>();

/** The session renewed and what the page starts from; null once it has ended (the page goes to the sign-in). */
export async function renew(): Promise<Start | null> {
  const res = await fetch('/inbox/session', { headers: authorization(), cache: 'no-store' });
  if (res.status === 401) {
    toSignIn(true);
    return null;
  }
  if (!res.ok) throw new Error(`The inbox could not start: the server answered ${res.status}.`);
  const start = (await res.json()) as Start;
  keep(start.session);
  views.clear();
  return start;
}

/**
 * Takes the session the sign-in handed over (out of the address, and so out of the history), renews it, and says
 * what the page starts from; null when there is no live session (the page is then on its way to the sign-in).
 */
export async function startSession(): Promise<Start | null> {
  const handed = /^#session=([\w.-]+)$/.exec(location.hash)?.[1];
  if (handed) {
    keep(handed);
    history.replaceState(history.state, '', location.pathname + location.search);
  }
  if (!stored()) {
    toSignIn(false);
    return null;
  }
  const start = await renew();
  if (start) setInterval(() => void renew().catch(() => {}), 3600_000);
  return start;
}

/** Makes sure the view token of message `id` is at hand for viewHref (one call of the server per message). */
export async function loadView(id: string): Promise<void> {
  if (views.has(id)) return;
  const res = await fetch(`/inbox/views/${encodeURIComponent(id)}`, { headers: authorization(), cache: 'no-store' });
  if (res.status === 401) return toSignIn(true);
  if (res.ok) views.set(id, ((await res.json()) as { view: string }).view);
}

/** The address of a view of message `id` the page opens by address (`/html`, `/raw`, `/attachments/N`). */
export function viewHref(id: string, rest: string, query: Record<string, string> = {}): string {
  const q = new URLSearchParams(query);
  const view = views.get(id);
  if (view) q.set('view', view);
  const s = q.toString();
  return `/sandbox/messages/${encodeURIComponent(id)}${rest}${s ? `?${s}` : ''}`;
}
