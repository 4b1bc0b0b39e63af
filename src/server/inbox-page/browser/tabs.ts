// The open message's content in tabs, one entry of TABS each: its HTML as a reader sees it (preview.ts), the HTML's
// source (source.ts), its text, its header fields and its raw source (content.ts), and its checks (checks.ts). A tab is
// an id, a label (and maybe a badge beside it) and what it shows, built when it is selected; adding one is adding an
// entry. Arrow keys, Home and End move between them.
import type { CaughtMessage } from '../../../contract/inbox.js';
import { checksBadge, checksOf } from './checks.js';
import { headersOf, rawOf, textOf } from './content.js';
import { el, h } from './dom.js';
import { previewOf } from './preview.js';
import { markLine, sourceOf } from './source.js';
import { state, type Tab, type TabContext } from './state.js';

export interface TabKind {
  id: Tab;
  label: string;
  /** The panel's content for the open message, built anew each time the tab is selected. */
  content(m: CaughtMessage, tabs: TabContext): Node[] | Promise<Node[]>;
  /** A small mark after the label for the open message (a count), or null: read when the tabs are built and updated. */
  badge?(m: CaughtMessage): Node[] | null;
}

const TABS: TabKind[] = [
  { id: 'html', label: 'HTML', content: previewOf },
  { id: 'source', label: 'HTML source', content: sourceOf },
  { id: 'text', label: 'Text', content: textOf },
  { id: 'headers', label: 'Headers', content: headersOf },
  { id: 'raw', label: 'Raw', content: rawOf },
  { id: 'checks', label: 'Checks', content: checksOf, badge: checksBadge },
];

/** A tab's label, with its badge for the open message. */
const labelOf = (kind: TabKind): (Node | string)[] => [kind.label, ...((state.open && kind.badge?.(state.open)) || [])];

/** Shows the open message's `tab` (state.tab), its content read anew. */
export async function selectTab(tab: Tab, focus: boolean) {
  const m = state.open;
  if (!m) return;
  state.tab = tab;
  for (const { id } of TABS) {
    const button = el(`tab-${id}`);
    const panel = el(`panel-${id}`);
    const on = id === tab;
    button.setAttribute('aria-selected', String(on));
    button.tabIndex = on ? 0 : -1;
    panel.hidden = !on;
    if (!on) panel.replaceChildren();
  }
  if (focus) el(`tab-${tab}`).focus();
  const content = await TABS.find((t) => t.id === tab)!.content(m, context);
  if (state.open === m && state.tab === tab) el(`panel-${tab}`).replaceChildren(...content);
}

/**
 * Shows line `n` (from 1) of the open message's HTML source: the source tab, scrolled to the line, which is marked.
 * False when the message has no HTML or no such line.
 */
export async function showSourceLine(n: number): Promise<boolean> {
  if (!state.open?.html) return false;
  if (state.tab !== 'source' || !el('panel-source').firstChild) await selectTab('source', false);
  return markLine(el('panel-source'), n) !== null;
}

const context: TabContext = {
  select: (tab) => selectTab(tab, true),
  // Asked from another tab (a finding's line): the source, where the reader goes next, has the keyboard too.
  async showSourceLine(n) {
    const shown = await showSourceLine(n);
    if (shown) el('panel-source').querySelector<HTMLElement>('.source')?.focus({ preventScroll: true });
    return shown;
  },
  updateBadge(tab) {
    const kind = TABS.find((t) => t.id === tab)!;
    document.getElementById(`tab-${tab}`)?.replaceChildren(...labelOf(kind));
  },
};

/** The tab list and its (empty) panels; selectTab() fills the one shown. */
export function tabsOf(): HTMLElement[] {
  const list = h('div', { role: 'tablist', 'aria-label': 'Message content' });
  const panels = TABS.map((kind) => {
    const { id } = kind;
    const on = id === state.tab;
    const button = h(
      'button',
      {
        type: 'button',
        role: 'tab',
        id: `tab-${id}`,
        'aria-controls': `panel-${id}`,
        'aria-selected': String(on),
        tabindex: on ? '0' : '-1',
      },
      ...labelOf(kind),
    );
    button.addEventListener('click', () => void selectTab(id, false));
    list.append(button);
    return h('div', {
      role: 'tabpanel',
      id: `panel-${id}`,
      'aria-labelledby': `tab-${id}`,
      tabindex: '0',
      hidden: !on,
    });
  });
  list.addEventListener('keydown', (e) => {
    const i = TABS.findIndex(({ id }) => id === state.tab);
    const to = { ArrowRight: i + 1, ArrowLeft: i - 1, Home: 0, End: TABS.length - 1 }[e.key];
    const tab = to === undefined ? undefined : TABS[(to + TABS.length) % TABS.length];
    if (!tab) return;
    e.preventDefault();
    void selectTab(tab.id, true);
  });
  return [list, ...panels];
}
