// One message, open beside the list (or over it on a narrow screen): its head (subject, read toggle, download,
// release, delete), the meta block, attachments, events, the content tabs and where else to find it. Opening and closing it
// keep the address bar and the list's current row in step; it is read again when its status or events change.
import type { CaughtMessage, CaughtMessageSummary } from '../../../contract/inbox.js';
import { ApiError, api, messagePath, say } from './api.js';
import { time } from './clock.js';
import { badge, el, h, size } from './dom.js';
import { deleteOne, markCurrent, replaceRow, rowLinks } from './list.js';
import { loadView, viewHref } from './session.js';
import { remember, state, urlFor } from './state.js';
import { selectTab, showSourceLine, tabsOf } from './tabs.js';
import { releaseButton } from './release.js';
import { redrawTimeline, timelineOf } from './timeline.js';

const view = el('view');
const narrow = window.matchMedia('(max-width: 759px)');

const placeholder = () => h('p', { class: 'empty' }, 'Select a message to read it.');

/** Back to the list alone; the address is pushed (a new history entry), replaced, or left. */
export function closeView(address: 'push' | 'replace' | 'keep' = 'push') {
  const was = state.openId;
  state.openId = null;
  state.open = null;
  if (address === 'push') remember();
  if (address === 'replace') history.replaceState(null, '', urlFor(null));
  document.body.classList.remove('reading');
  view.replaceChildren(placeholder());
  markCurrent();
  if (was)
    rowLinks()
      .find((a) => a.dataset.id === was)
      ?.focus();
}

/** The open message was deleted (here or elsewhere): the view says so. */
export function showDeleted() {
  state.open = null;
  view.replaceChildren(h('p', { class: 'empty' }, 'This message was deleted.'));
}

export async function openMessage(id: string, push: boolean) {
  if (state.openId !== id) {
    state.remote = false;
    state.tab = 'html';
  }
  // An address opened ending in #L12 points at line 12 of the HTML source (a click on a line number writes it).
  const line = push ? undefined : /^#L(\d+)$/.exec(location.hash)?.[1];
  state.openId = id;
  if (push) remember();
  markCurrent();
  document.body.classList.add('reading');
  let m: CaughtMessage;
  try {
    // Its views opened by address (the frame, downloads, images) carry its view token: made alongside.
    [m] = await Promise.all([api<CaughtMessage>('GET', messagePath(id)), loadView(id)]);
  } catch (err) {
    if (state.openId === id) {
      // A msg_… id not caught (yet) is told why (queued, scheduled, failed…); the page opens it once it is caught.
      const gone = err instanceof ApiError && err.status === 404 && !id.startsWith('msg_');
      view.replaceChildren(
        h('p', { class: 'empty' }, gone ? 'This message no longer exists.' : (err as Error).message),
      );
    }
    return;
  }
  if (state.openId !== id) return;
  // Opened by the msg_… id of the `/v1` message it is (an address from elsewhere, or before it was caught): it goes on
  // as the caught message, by its own id, in the address bar too.
  if (m.id !== id) {
    state.openId = m.id;
    markCurrent();
    await loadView(m.id);
    if (state.openId !== m.id) return;
  }
  const address = urlFor(m.id);
  if (new URL(address, location.href).pathname !== location.pathname)
    history.replaceState(null, '', address + location.hash);
  state.open = m;
  if (line && m.html) state.tab = 'source';
  if ((state.tab === 'html' || state.tab === 'source') && !m.html) state.tab = 'text';
  renderView();
  if (line && m.html) void showSourceLine(Number(line));
  if (narrow.matches) el('view-h').focus();
  if (!m.read) {
    api<CaughtMessageSummary>('POST', `${messagePath(id)}/read`).then(
      (s) => {
        replaceRow(s);
        if (state.open === m) setRead(m, s.read);
      },
      () => {},
    );
  }
}

function headerValue(m: CaughtMessage, name: string): string | null {
  return m.headers.find((x) => x.name.toLowerCase() === name)?.value ?? null;
}

function metaOf(m: CaughtMessage): HTMLDListElement {
  const pairs: [string, Node | string | null][] = [
    ['From', m.from ?? m.envelope.mail_from ?? '(none)'],
    ['To', m.to.join(', ') || '(none)'],
    ['Cc', m.cc.length ? m.cc.join(', ') : null],
    ['Reply-To', headerValue(m, 'reply-to')],
    ['Date', h('span', {}, headerValue(m, 'date') ?? '(none)', ' · received ', time(m.received_at))],
    ['Size', size(m.size)],
    ['Message-ID', headerValue(m, 'message-id')],
    ['Envelope', `MAIL FROM ${m.envelope.mail_from ?? '<>'} · RCPT TO ${m.envelope.rcpt_to.join(', ')}`],
    ['Status', m.status ? h('span', {}, badge(m.status), m.workspace ? ` · workspace ${m.workspace.name}` : '') : null],
    // Mail from another program that logged in to the sink with an API key is filed under that key's workspace.
    ['Workspace', !m.status && m.workspace ? m.workspace.name : null],
    ['Wait', m.claimed ? h('span', { class: 'quiet' }, 'returned to a wait for mail; later waits skip it') : null],
    [
      'DKIM',
      h(
        'span',
        { class: `dkim-${m.dkim}` },
        m.dkim === 'none' ? 'none (not signed)' : `${m.dkim}${m.dkim_domain ? ` · signed by ${m.dkim_domain}` : ''}`,
      ),
    ],
  ];
  return h(
    'dl',
    { class: 'meta', id: 'meta' },
    ...pairs.filter(([, v]) => v != null).flatMap(([k, v]) => [h('dt', {}, k), h('dd', {}, v)]),
  );
}

/**
 * Attachment types the page shows a thumbnail of. The thumbnail is the attachment's own address in an <img>: served
 * with the type the message declares, never sniffed, under a policy of its own (`default-src 'none'; sandbox`), and
 * an image (SVG included) runs no script and loads nothing when shown by <img>.
 */
const THUMBNAIL = /^image\/(?:png|jpeg|gif|webp|avif|bmp|svg\+xml|x-icon|vnd\.microsoft\.icon)$/i;

/** What the message's view leaves out (a text past 1 MiB, parts past 500…), with the raw source to download. */
function omittedOf(m: CaughtMessage): HTMLElement | null {
  if (!m.truncated) return null;
  return h(
    'div',
    { class: 'omitted', role: 'note', id: 'omitted' },
    ...m.omitted.map((note) => h('p', {}, note)),
    h('p', {}, h('a', { href: viewHref(m.id, '/raw'), download: `${m.id}.eml` }, 'Download the raw source (.eml)')),
  );
}

function attachmentsOf(m: CaughtMessage): HTMLElement | null {
  if (!m.attachments.length) return null;
  return h(
    'section',
    { class: 'section', 'aria-labelledby': 'att-h' },
    h('h3', { id: 'att-h' }, `Attachments (${m.attachments.length})`),
    h(
      'ul',
      { class: 'atts' },
      ...m.attachments.map((a, n) => {
        const href = viewHref(m.id, `/attachments/${n}`);
        const name = a.filename ?? `attachment ${n}`;
        const download = a.filename ?? `attachment-${n}`;
        return h(
          'li',
          { class: 'att' },
          THUMBNAIL.test(a.content_type)
            ? h(
                'a',
                { class: 'thumb', href, download, tabindex: '-1', 'aria-hidden': 'true' },
                h('img', { src: href, alt: '', loading: 'lazy', decoding: 'async' }),
              )
            : null,
          h('a', { href, download }, name),
          h('span', { class: 'about' }, `${a.content_type} · ${size(a.size)}${a.content_id ? ' · inline' : ''}`),
        );
      }),
    ),
  );
}

function elsewhereOf(m: CaughtMessage): HTMLElement {
  return h(
    'section',
    { class: 'section', 'aria-labelledby': 'elsewhere-h' },
    h('h3', { id: 'elsewhere-h' }, 'Elsewhere'),
    h(
      'ul',
      {},
      m.message_id
        ? h(
            'li',
            {},
            'API (with an API key): ',
            h(
              'a',
              { href: `/v1/emails/${encodeURIComponent(m.message_id)}` },
              h('code', {}, `GET /v1/emails/${m.message_id}`),
            ),
          )
        : null,
      h('li', {}, 'Command line: ', h('code', {}, `svc inbox show ${m.id}`)),
    ),
  );
}

function setRead(m: CaughtMessage, read: boolean) {
  m.read = read;
  const toggle = document.getElementById('toggle-read');
  if (toggle) toggle.textContent = read ? 'Mark unread' : 'Mark read';
}

function renderView() {
  const m = state.open!;
  const back = h('button', { type: 'button', class: 'back' }, '← Messages');
  back.addEventListener('click', () => closeView());
  const toggle = h('button', { type: 'button', id: 'toggle-read' }, m.read ? 'Mark unread' : 'Mark read');
  toggle.addEventListener('click', async () => {
    const s = await api<CaughtMessageSummary>('POST', `${messagePath(m.id)}/${m.read ? 'unread' : 'read'}`).catch(
      (err: Error) => void say(err.message),
    );
    if (!s) return;
    replaceRow(s);
    if (state.open === m) setRead(m, s.read);
  });
  const del = h('button', { type: 'button', class: 'danger' }, 'Delete');
  del.addEventListener('click', () => void deleteOne(m.id));
  view.replaceChildren(
    h(
      'div',
      { class: 'view-head' },
      back,
      h('h2', { id: 'view-h', tabindex: '-1' }, m.subject ?? '(no subject)'),
      h(
        'div',
        { class: 'actions' },
        toggle,
        h('a', { class: 'button', href: viewHref(m.id, '/raw'), download: `${m.id}.eml` }, 'Download .eml'),
        releaseButton(m, () => void reloadTimeline(m)),
        del,
      ),
    ),
    metaOf(m),
    // What the view leaves out first; then the message, as a mail client shows it; then what came with it and what
    // happened to it.
    ...[omittedOf(m)].filter((n): n is HTMLElement => n !== null),
    ...tabsOf(),
    ...[attachmentsOf(m), timelineOf(m)].filter((n): n is HTMLElement => n !== null),
    elsewhereOf(m),
  );
  void selectTab(state.tab, false);
}

/**
 * The open message's timeline read again after a release: drawn in place, or the view drawn again when the message
 * had none before (mail from another program, released for the first time).
 */
async function reloadTimeline(m: CaughtMessage) {
  const fresh = await api<CaughtMessage>('GET', messagePath(m.id)).catch(() => null);
  if (!fresh || state.open !== m) return;
  const had = document.getElementById('timeline') !== null;
  m.events = fresh.events;
  if (had) redrawTimeline(m);
  else renderView();
}

let reopenTimer: ReturnType<typeof setTimeout> | undefined;
/** The open message's status and timeline changed: both are read again, the tab shown is left as it is. */
export function refreshOpen() {
  clearTimeout(reopenTimer);
  reopenTimer = setTimeout(async () => {
    const m = state.open;
    if (!m) return;
    const fresh = await api<CaughtMessage>('GET', messagePath(m.id)).catch(() => null);
    if (!fresh || state.open !== m) return;
    Object.assign(m, { status: fresh.status, events: fresh.events, read: fresh.read });
    el('meta').replaceWith(metaOf(m));
    redrawTimeline(m);
  }, 100);
}
