// The inbox page's script, run by the browser: the entry esbuild bundles with the modules beside it into the one
// script pages.ts serves as /inbox.js (inbox-script.ts). It wires the parts of the page together and starts them.
// Everything the page shows comes from the sandbox routes (the page's session authenticates it: session.ts) and the
// live stream; it
// writes the page with DOM calls and text nodes only, never HTML from a message. Types come from the contract and
// are erased: nothing of zod (nor of any package) is bundled.
import { initClock, loadClock, refreshTimes, renderClock } from './clock.js';
import { el, h } from './dom.js';
import { initKeys } from './keys.js';
import { addWorkspace, initList, loadList, setFirstSend } from './list.js';
import { connect } from './live.js';
import { initSearchHelp } from './search.js';
import { startSession } from './session.js';
import { readLocation, state } from './state.js';
import { initTheme } from './theme.js';
import { closeView, openMessage, showDeleted } from './view.js';
import { loadWebhooks } from './webhooks.js';

// The list opens and closes messages through the view, which itself imports the list: it is handed the view here.
initList({ openMessage, closeView, showDeleted });
initTheme();
initClock();
initKeys();
initSearchHelp();

window.addEventListener('popstate', () => {
  readLocation();
  state.history = [];
  void loadList();
  if (state.openId) void openMessage(state.openId, false);
  else closeView('keep');
});

// Relative times and a real clock move on by themselves.
setInterval(() => {
  if (state.clock.mode === 'real') renderClock();
}, 1000);
setInterval(refreshTimes, 30_000);

/** Starts once the session is known: nothing is asked of the server before, and nothing without it. */
async function start() {
  const started = await startSession();
  if (!started) return;
  for (const w of started.workspaces) addWorkspace(w);
  setFirstSend(started.first_send);
  readLocation();
  void loadClock().catch(() => {});
  void loadList();
  connect(started.stream);
  if (state.openId) void openMessage(state.openId, false);
  void loadWebhooks();
}
start().catch((err: unknown) => {
  el('rows').replaceChildren(h('li', { class: 'empty' }, (err as Error).message));
});
