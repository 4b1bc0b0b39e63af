// The inbox page's live stream (GET /sandbox/stream, server-sent events): new mail, status changes, deletions, read
// marks, clock moves and webhook attempts, each applied to the list, the open message and the panels as it comes.
import type { InboxEvent } from '../../../contract/sandbox.js';
import { onSignOut, say } from './api.js';
import { loadClock, refreshTimes, setClock } from './clock.js';
import { el, h } from './dom.js';
import { addWorkspace, loadList, refreshSoon, removeRows, replaceRow } from './list.js';
import { remember, state } from './state.js';
import { countUnreadSoon } from './unread.js';
import { refreshOpen } from './view.js';
import { loadWebhooks, webhooksSoon } from './webhooks.js';

/** The data of the stream's event named `E`. */
type Data<E extends InboxEvent['event']> = Extract<InboxEvent, { event: E }>['data'];

const live = el('live');
let source: EventSource | null = null;

export function connect() {
  onSignOut(() => source?.close());
  source = new EventSource('/sandbox/stream');
  // On every (re)connection the list is read again: nothing that happened while disconnected is missed.
  source.addEventListener('open', () => {
    live.textContent = 'Live';
    void loadList();
    countUnreadSoon();
    void loadClock().catch(() => {});
    void loadWebhooks();
  });
  source.addEventListener('error', () => {
    if (live.textContent !== 'Signed out') live.textContent = 'Reconnecting…';
  });
  source.addEventListener('message', (e) => {
    const m = JSON.parse(e.data) as Data<'message'>;
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
  source.addEventListener('status', (e) => {
    const change = JSON.parse((e as MessageEvent).data) as Data<'status'>;
    for (const r of state.rows.filter((x) => x.message_id === change.message_id))
      replaceRow({ ...r, status: change.status });
    if (state.open?.message_id === change.message_id) refreshOpen();
  });
  source.addEventListener('deleted', (e) => {
    const d = JSON.parse((e as MessageEvent).data) as Data<'deleted'>;
    removeRows(d.all ? 'all' : (d.ids ?? []));
    countUnreadSoon();
  });
  source.addEventListener('read', (e) => {
    const d = JSON.parse((e as MessageEvent).data) as Data<'read'>;
    countUnreadSoon();
    const r = state.rows.find((x) => x.id === d.id);
    if (r && r.read !== d.read) replaceRow({ ...r, read: d.read });
  });
  source.addEventListener('clock', (e) => {
    setClock(JSON.parse((e as MessageEvent).data) as Data<'clock'>);
    refreshTimes();
  });
  source.addEventListener('webhooks', (e) => {
    const d = JSON.parse((e as MessageEvent).data) as Data<'webhooks'>;
    webhooksSoon();
    if (state.open?.events?.some((ev) => d.event_ids.includes(ev.id))) refreshOpen();
  });
}
