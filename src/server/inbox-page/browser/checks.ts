// The Checks tab: the open message's report (GET /sandbox/messages/{id}/checks, docs/checks.md), shown by
// checks-report.ts. It is asked for when the tab is opened, never for the rows of the list nor merely on opening a
// message: a first report asks every link of the message over the network (as loading its remote images would, which
// the HTML tab leaves to the reader) and takes the server's check threads a moment. Meanwhile the tab shows progress
// and the rest of the page goes on; an answer that comes once another message (or tab) is shown is kept for coming
// back, not shown. The tab's badge counts the errors, else the warnings, of a report the page has read.
import type { MessageChecks } from '../../../contract/checks.js';
import type { CaughtMessage } from '../../../contract/inbox.js';
import { ApiError, api, messagePath } from './api.js';
import { plural, unclampDetails } from './checks-findings.js';
import { reportOf } from './checks-report.js';
import { h } from './dom.js';
import { state, type TabContext } from './state.js';

/** Reports read on this page, by message, the last read last; a few hundred at most. */
const reports = new Map<string, MessageChecks>();
const KEPT = 200;
/** Requests under way, by message and kind (`eml_… ` or `eml_… links`): a second asker waits for the same answer. */
const asking = new Map<string, Promise<MessageChecks>>();
/** The finding whose line was last shown, to put the reader back there on returning to the tab (once). */
let back: { id: string; key: string } | null = null;
/** The tab's content now shown (or about to be). */
let current: HTMLElement | null = null;

function ask(id: string, refresh: boolean): Promise<MessageChecks> {
  const key = `${id} ${refresh ? 'links' : ''}`;
  let p = asking.get(key);
  if (!p) {
    p = api<MessageChecks>('GET', `${messagePath(id)}/checks${refresh ? '?refresh=links' : ''}`)
      .then((r) => {
        reports.delete(id);
        reports.set(id, r);
        if (reports.size > KEPT) reports.delete(reports.keys().next().value!);
        return r;
      })
      .finally(() => asking.delete(key));
    asking.set(key, p);
  }
  return p;
}

/** The tab's badge: the report's errors, else its warnings, else a check mark; nothing before it is read. */
export function checksBadge(m: CaughtMessage): Node[] | null {
  const r = reports.get(m.id);
  if (!r) return null;
  const { errors, warnings } = r.summary;
  const [kind, shown, said] = errors
    ? ['error', String(errors), plural(errors, 'error')]
    : warnings
      ? ['warning', String(warnings), plural(warnings, 'warning')]
      : ['ok', '✓', 'no errors or warnings'];
  return [
    h('span', { class: `tab-count ${kind}`, 'aria-hidden': 'true' }, shown),
    h('span', { class: 'vh' }, `, ${said}`),
  ];
}

const progress = () =>
  h(
    'div',
    { class: 'ck-progress', role: 'status' },
    h('progress', { 'aria-label': 'Checking the message' }),
    h('p', {}, 'Checking this message: HTML compatibility, links, authentication, content, accessibility, spam…'),
    h(
      'p',
      { class: 'muted' },
      'The first report takes a moment: each link is asked over the network. The rest of the page keeps working.',
    ),
  );

/** The Checks tab's content for `m`: the report, or progress until it comes. */
export function checksOf(m: CaughtMessage, tabs: TabContext): Node[] {
  const root = h('div', { class: 'checks', 'data-message': m.id });
  current = root;
  /** Whether this content is still the one shown: the same message, the tab still open and not built anew. */
  const shown = () => current === root && state.open === m && state.tab === 'checks';

  const render = (r: MessageChecks, refreshing: boolean) => {
    root.removeAttribute('aria-busy');
    root.replaceChildren(
      ...reportOf(r, m, {
        refreshing,
        refreshLinks: () => void follow(ask(m.id, true), r),
        showLine(n, key) {
          back = { id: m.id, key };
          void tabs.showSourceLine(n);
        },
      }),
    );
    requestAnimationFrame(() => unclampDetails(root));
  };
  /** Shows what a request answers, if this content is still shown; `was`: the report shown meanwhile. */
  const follow = async (p: Promise<MessageChecks>, was: MessageChecks | null) => {
    // The reader asked for the links again: the keyboard stays on the button, now busy, then done.
    const keep = () => root.querySelector<HTMLElement>('.ck-when button')?.focus();
    const focused = was !== null && root.contains(document.activeElement);
    root.setAttribute('aria-busy', 'true');
    if (was) render(was, true);
    if (focused) keep();
    let r: MessageChecks;
    try {
      r = await p;
    } catch (err) {
      if (shown()) failed(err as Error, was);
      return;
    }
    if (state.open === m) tabs.updateBadge('checks');
    if (!shown()) return;
    const stay = focused && root.contains(document.activeElement);
    render(r, false);
    if (stay) keep();
  };
  const failed = (err: Error, was: MessageChecks | null) => {
    root.removeAttribute('aria-busy');
    const again = h('button', { type: 'button', class: 'small' }, 'Try again');
    again.addEventListener('click', () => void follow(ask(m.id, was !== null), was));
    const why =
      err instanceof ApiError && err.status === 404
        ? 'This message no longer exists.'
        : `The checks failed: ${err.message}`;
    const note = h('p', { class: 'ck-failed', role: 'alert' }, why, ' ', again);
    if (was) {
      render(was, false);
      root.prepend(note);
    } else root.replaceChildren(note);
  };

  const kept = reports.get(m.id) ?? null;
  const refreshing = asking.get(`${m.id} links`);
  if (refreshing) void follow(refreshing, kept);
  else if (kept) {
    render(kept, false);
    // Back from the line a finding pointed at: that finding again, in sight.
    if (back?.id === m.id) {
      const { key } = back;
      back = null;
      const button = root.querySelector<HTMLElement>(`[data-key="${CSS.escape(key)}"]`);
      const folded = button?.closest('details');
      if (folded) folded.open = true;
      requestAnimationFrame(() => {
        button?.scrollIntoView({ block: 'center' });
        button?.focus({ preventScroll: true });
      });
    }
  } else {
    root.replaceChildren(progress());
    void follow(ask(m.id, false), null);
  }
  return [root];
}
