// The list of caught messages: a page of rows read from the sandbox (search, workspace, paging by cursor), rows
// replaced and removed in place as news comes, deleting one message or all, and the keyboard focus among the rows.
import type { CaughtMessagePage, CaughtMessageSummary } from '../../../contract/inbox.js';
import { ApiError, api, messagePath, say } from './api.js';
import { time } from './clock.js';
import { badge, clip, el, h, nameOf, size } from './dom.js';
import { showSearchProblem } from './search.js';
import type { Start } from './session.js';
import { q, remember, state, urlFor, type Workspace, workspaceSelect } from './state.js';

const PAGE_SIZE = 50;
const rowsEl = el<HTMLOListElement>('rows');
const note = el('note');
const older = el<HTMLButtonElement>('older');
const newer = el<HTMLButtonElement>('newer');

/** What the list asks of the message view. main.ts hands it over: the view imports the list, not the reverse. */
export interface ListHooks {
  openMessage(id: string, push: boolean): Promise<void>;
  /** Back to the list alone; the address is pushed, replaced, or left. */
  closeView(address: 'push' | 'replace' | 'keep'): void;
  /** The open message was deleted: the view says so. */
  showDeleted(): void;
}
let view: ListHooks;

let listSerial = 0;
export async function loadList() {
  const serial = ++listSerial;
  const p = new URLSearchParams({ limit: String(PAGE_SIZE) });
  if (state.q) p.set('q', state.q);
  if (state.workspace) p.set('workspace_id', state.workspace);
  if (state.after) p.set('after', state.after);
  let page: CaughtMessagePage;
  try {
    page = await api('GET', `/sandbox/messages?${p}`);
  } catch (err) {
    if (err instanceof ApiError && err.status === 400 && state.after) {
      // The page's anchor was deleted: start again from the newest.
      state.after = null;
      state.history = [];
      history.replaceState(null, '', urlFor(state.openId));
      return loadList();
    }
    if (serial !== listSerial) return;
    if (err instanceof ApiError && err.status === 400 && state.q) {
      // A search the server does not understand is the search's mistake: said under the box, and nothing matches.
      const why = err.errors.find((e) => e.path === 'q')?.message ?? err.message;
      showSearchProblem(`This search is not understood: ${why}`);
      state.rows = [];
      state.hasMore = false;
      renderList();
      return;
    }
    if (!(err instanceof ApiError && err.status === 401)) say((err as Error).message);
    if (rowsEl.getAttribute('aria-busy') === 'true') {
      rowsEl.removeAttribute('aria-busy');
      rowsEl.replaceChildren(h('li', { class: 'empty' }, 'The messages could not be loaded.'));
    }
    return;
  }
  if (serial !== listSerial) return; // a later load has begun
  showSearchProblem(null);
  state.rows = page.data;
  state.hasMore = page.has_more;
  state.newMail = 0;
  renderList();
}

let refreshTimer: ReturnType<typeof setTimeout> | undefined;
/** One reload for a burst of news. */
export function refreshSoon() {
  clearTimeout(refreshTimer);
  refreshTimer = setTimeout(() => void loadList(), 150);
}

/**
 * A row as a mail client shows one: the sender (and, quieter, the recipients) and the time; the subject, on up to
 * two lines, and the size; the start of the text, on up to two; then the status, workspace and tags as pills and
 * the attachment marker.
 */
function rowOf(m: CaughtMessageSummary): HTMLLIElement {
  const recipients = [...m.to, ...m.cc];
  const pills = [
    m.status ? badge(m.status) : null,
    m.workspace ? h('span', { class: 'pill ws', title: 'Workspace' }, m.workspace.name) : null,
    ...m.tags.map((t) => h('span', { class: 'pill tag-pill', title: `Tag ${t.name}` }, `${t.name}: ${t.value}`)),
    m.has_attachments ? clip() : null,
  ].filter((n) => n !== null);
  const link = h(
    'a',
    {
      class: `row${m.read ? '' : ' unread'}`,
      href: urlFor(m.id),
      'data-id': m.id,
      'aria-current': m.id === state.openId ? 'true' : null,
    },
    h(
      'span',
      { class: 'who', title: [m.from ?? '', recipients.length ? `to ${recipients.join(', ')}` : ''].join(' ').trim() },
      m.read ? null : h('span', { class: 'dot' }),
      m.read ? null : h('span', { class: 'vh' }, 'Unread. '),
      h('span', { class: 'vh' }, 'From '),
      h('span', { class: 'from' }, m.from ? nameOf(m.from) : '(no sender)'),
      h('span', { class: 'to' }, ` to ${recipients.length ? recipients.join(', ') : '(no recipient)'}`),
    ),
    h('span', { class: 'when' }, time(m.received_at)),
    h('span', { class: 'subject' }, h('span', { class: 'vh' }, '. Subject: '), m.subject ?? '(no subject)'),
    h('span', { class: 'size' }, h('span', { class: 'vh' }, '. '), size(m.size)),
    m.preview ? h('span', { class: 'preview' }, h('span', { class: 'vh' }, '. '), m.preview) : null,
    pills.length ? h('span', { class: 'facts' }, ...pills) : null,
  );
  return h('li', {}, link);
}

export const rowLinks = () => [...rowsEl.querySelectorAll<HTMLAnchorElement>('a.row')];
export const focusedRowId = () =>
  (document.activeElement as HTMLElement | null)?.closest?.('a.row')?.getAttribute('data-id') ?? null;

/** How the empty list says to send a first message (pages.ts, from the page's start). */
let firstSend: Start['first_send'] = null;
export function setFirstSend(f: Start['first_send']) {
  firstSend = f;
}

/**
 * The empty list's way to a first message: a curl line with the seeded test key (or `svc emails send` with a key of
 * one's own), and the SMTP port.
 */
function firstSendOf(f: NonNullable<Start['first_send']>): Node {
  const send = f.seed
    ? `curl -s ${f.api}/emails -H 'Authorization: Bearer ${f.seed.key}' -H 'Content-Type: application/json' ` +
      `-d '{"from":"hello@${f.seed.domain}","to":"you@example.org","subject":"Hello","text":"Your code is 482913"}'`
    : `SVC_BASE_URL=${f.api} SVC_API_KEY=svc_test_… svc emails send --from hello@YOUR-DOMAIN --to you@example.org --subject Hello --text 'Hi'`;
  const cli = f.seed
    ? `SVC_BASE_URL=${f.api} SVC_API_KEY=${f.seed.key} svc emails send --from hello@${f.seed.domain} --to you@example.org --subject Hello --text 'Hi'`
    : null;
  return h(
    'li',
    { class: 'empty first-send' },
    h(
      'p',
      {},
      h('strong', {}, 'No mail caught yet.'),
      ` Send a first message${f.seed ? ' with the seeded test key' : ' with an API key of yours'}; it shows here at once:`,
    ),
    h('pre', {}, h('code', { id: 'first-send-command' }, send)),
    cli ? h('p', {}, 'or from the command line:') : null,
    cli ? h('pre', {}, h('code', {}, cli)) : null,
    h('p', {}, 'Any program may also hand mail to the SMTP sink at ', h('code', {}, f.smtp), '.'),
  );
}

/** The empty list: what matches nothing, or, while nothing is caught, how to send a first message. */
function emptyList(): Node {
  if (state.q || state.workspace) return h('li', { class: 'empty' }, 'No message matches this search.');
  if (firstSend) return firstSendOf(firstSend);
  return h('li', { class: 'empty' }, 'No mail caught yet: send some through the API or to the SMTP port.');
}

function renderList() {
  const focused = focusedRowId();
  rowsEl.removeAttribute('aria-busy');
  rowsEl.replaceChildren(...(state.rows.length ? state.rows.map(rowOf) : [emptyList()]));
  older.disabled = !state.hasMore;
  newer.disabled = state.after === null;
  if (focused)
    rowLinks()
      .find((a) => a.dataset.id === focused)
      ?.focus();
  if (state.newMail === 0 && note.querySelector('button[data-newest]')) say('');
}

export function replaceRow(m: CaughtMessageSummary) {
  const i = state.rows.findIndex((r) => r.id === m.id);
  if (i < 0) return;
  state.rows[i] = m;
  const old = rowLinks().find((a) => a.dataset.id === m.id);
  if (!old) return;
  const hadFocus = document.activeElement === old;
  const fresh = rowOf(m);
  old.parentElement!.replaceWith(fresh);
  if (hadFocus) (fresh.firstElementChild as HTMLElement).focus();
}

/** The row of the open message is marked current, no other. */
export function markCurrent() {
  for (const a of rowLinks()) {
    if (a.dataset.id === state.openId) a.setAttribute('aria-current', 'true');
    else a.removeAttribute('aria-current');
  }
}

export function moveFocus(step: number) {
  const links = rowLinks();
  const at = links.findIndex(
    (a) => a === document.activeElement || (document.activeElement === document.body && a.dataset.id === state.openId),
  );
  const next = links[Math.max(0, Math.min(links.length - 1, at < 0 ? 0 : at + step))];
  if (!next) return; // no rows
  next.focus();
  next.scrollIntoView({ block: 'nearest' });
}

export function removeRows(ids: string[] | 'all') {
  const gone = (id: string) => ids === 'all' || ids.includes(id);
  const links = rowLinks();
  const focused = focusedRowId();
  // Focus moves to the row after a deleted focused one (or before it, at the end).
  let refocus: string | null = null;
  if (focused && gone(focused)) {
    const i = links.findIndex((a) => a.dataset.id === focused);
    refocus =
      [...links.slice(i + 1), ...links.slice(0, i).reverse()].find((a) => !gone(a.dataset.id!))?.dataset.id ?? null;
  }
  state.rows = state.rows.filter((r) => !gone(r.id));
  renderList();
  if (refocus)
    rowLinks()
      .find((a) => a.dataset.id === refocus)
      ?.focus();
  else if (focused && gone(focused)) rowsEl.focus();
  if (state.openId && gone(state.openId)) view.showDeleted();
}

export async function deleteOne(id: string) {
  try {
    await api('DELETE', messagePath(id));
  } catch (err) {
    if (!(err instanceof ApiError && err.status === 404)) return say((err as Error).message);
  }
  const wasOpen = state.openId === id;
  removeRows([id]);
  if (wasOpen) view.closeView('replace');
  say('Message deleted.');
  if (state.rows.length === 0 && state.hasMore) void loadList();
}

/** Adds a workspace that sent mail since the page was served to the search's choices. */
export function addWorkspace(w: Workspace | null) {
  if (!w || [...workspaceSelect.options].some((o) => o.value === w.id)) return;
  workspaceSelect.append(h('option', { value: w.id }, w.name));
}

/** The list's controls: a row opens its message, Delete all…, the pager, the search. */
export function initList(hooks: ListHooks) {
  view = hooks;

  const confirmAll = el<HTMLDialogElement>('confirm-all');
  el('delete-all').addEventListener('click', () => {
    confirmAll.returnValue = '';
    confirmAll.showModal();
  });
  confirmAll.addEventListener('close', async () => {
    if (confirmAll.returnValue !== 'confirm') return;
    try {
      await api('DELETE', '/sandbox/messages');
    } catch (err) {
      return say((err as Error).message);
    }
    state.after = null;
    state.history = [];
    state.hasMore = false;
    removeRows('all');
    view.closeView('replace');
    say('All messages deleted.');
  });

  rowsEl.addEventListener('click', (e) => {
    const link = (e.target as HTMLElement).closest<HTMLAnchorElement>('a.row');
    if (!link || e.button !== 0 || e.ctrlKey || e.metaKey || e.shiftKey || e.altKey) return;
    e.preventDefault();
    void view.openMessage(link.dataset.id!, true);
  });

  older.addEventListener('click', () => {
    const last = state.rows.at(-1);
    if (!last) return;
    state.history.push(state.after);
    state.after = last.id;
    remember();
    void loadList().then(() => rowLinks()[0]?.focus());
  });
  newer.addEventListener('click', () => {
    state.after = state.history.pop() ?? null;
    remember();
    void loadList().then(() => rowLinks()[0]?.focus());
  });

  el<HTMLFormElement>('search').addEventListener('submit', (e) => {
    e.preventDefault();
    state.q = q.value.trim();
    state.workspace = workspaceSelect.value;
    state.after = null;
    state.history = [];
    remember();
    void loadList();
  });
  workspaceSelect.addEventListener('change', () => el<HTMLFormElement>('search').requestSubmit());
}
