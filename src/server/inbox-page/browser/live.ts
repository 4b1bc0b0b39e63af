// The inbox page's live stream (GET /sandbox/stream, server-sent events): new mail, status changes, deletions, read
// marks, clock moves and webhook attempts, each applied to the list, the open message and the panels as it comes.
import type { InboxEvent } from '../../../contract/inbox.js';
import { say } from './api.js';
import { loadClock, refreshTimes, setClock } from './clock.js';
import { el, h } from './dom.js';
import { addWorkspace, loadList, refreshSoon, removeRows, replaceRow } from './list.js';
import { remember, state } from './state.js';
import { countUnreadSoon } from './unread.js';
import { renew } from './session.js';
import { openMessage, refreshOpen } from './view.js';
import { loadWebhooks, webhooksSoon } from './webhooks.js';

/** The data of the stream's event named `E`. */
type Data<E extends InboxEvent['event']> = Extract<InboxEvent, { event: E }>['data'];

const live = el('live');
let source: EventSource | null = null;

/**
 * Opens the stream with its view token (an EventSource sends no header). The browser reconnects by itself after a
 * dropped connection; a refused one (the token ended with its session) is closed, and the page renews its session
 * and opens the stream again, or goes to the sign-in.
 */
export function connect(view: string) {
  source?.close();
  const self = new EventSource(`/sandbox/stream?view=${encodeURIComponent(view)}`);
  source = self;
  // On every (re)connection the list is read again: nothing that happened while disconnected is missed.
  self.addEventListener('open', () => {
    live.textContent = 'Live';
    void loadList();
    countUnreadSoon();
    void loadClock().catch(() => {});
    void loadWebhooks();
  });
  self.addEventListener('error', () => {
    live.textContent = 'Reconnecting…';
    if (self.readyState === EventSource.CLOSED) setTimeout(() => void again(), 2000);
  });
  self.addEventListener('message', (e) => {
    const m = JSON.parse(e.data) as Data<'message'>;
    // The address named a `/v1` message by its msg_… id before it was caught: it is open now.
    if (!state.open && state.openId !== null && state.openId === m.message_id) void openMessage(m.id, false);
    addWorkspace(m.workspace);
    countUnreadSoon();
    if (state.after === null) {
      refreshSoon();
      say(`New message: ${m.subject ?? '(no subject)'}`);
    } else {
      state.newMail++;
      const show = h('button', { type: 'button', 'data-newest': '' }, 'Show the newest');
      show.addEventListener('click', () => {
        state.after = null;
        state.history = [];
        remember();
        void loadList();
      });
      say(`${state.newMail} new message${state.newMail === 1 ? '' : 's'}. `, show);
    }
  });
  self.addEventListener('status', (e) => {
    const change = JSON.parse((e as MessageEvent).data) as Data<'status'>;
    for (const r of state.rows.filter((x) => x.message_id === change.message_id))
      replaceRow({ ...r, status: change.status });
    if (state.open?.message_id === change.message_id) refreshOpen();
  });
  self.addEventListener('deleted', (e) => {
    const d = JSON.parse((e as MessageEvent).data) as Data<'deleted'>;
    removeRows(d.all ? 'all' : (d.ids ?? []));
    countUnreadSoon();
  });
  self.addEventListener('read', (e) => {
    const d = JSON.parse((e as MessageEvent).data) as Data<'read'>;
    countUnreadSoon();
    const r = state.rows.find((x) => x.id === d.id);
    if (r && r.read !== d.read) replaceRow({ ...r, read: d.read });
  });
  self.addEventListener('clock', (e) => {
    setClock(JSON.parse((e as MessageEvent).data) as Data<'clock'>);
    refreshTimes();
  });
  self.addEventListener('webhooks', (e) => {
    const d = JSON.parse((e as MessageEvent).data) as Data<'webhooks'>;
    webhooksSoon();
    if (state.open?.events?.some((ev) => d.event_ids.includes(ev.id))) refreshOpen();
  });
}

/** A stream refused (or given up on) by the browser: the session renewed and the stream opened again. */
async function again() {
  try {
    const start = await renew();
    if (start) connect(start.stream);
  } catch {
    setTimeout(() => void again(), 2000);
  }
}
