// The open message's content in tabs: its HTML in a sandboxed frame (remote images blocked until allowed), its text,
// its header fields in order, and its source (the first 2 MB shown, all of it to download). Arrow keys, Home and End
// move between the tabs.
import type { CaughtMessage } from '../../../contract/sandbox.js';
import { messagePath } from './api.js';
import { el, h, size } from './dom.js';
import { state, type Tab } from './state.js';

const RAW_SHOWN = 2 * 1024 * 1024;

/** Whether the HTML asks for anything from elsewhere (images, styles, fonts), which its policy blocks. */
const wantsRemote = (html: string) =>
  /<(?:img|image|input|video)\b[^>]*\b(?:src|background|poster)\s*=\s*["']?\s*(?:https?:)?\/\//i.test(html) ||
  /\bbackground\s*=\s*["']?\s*(?:https?:)?\/\//i.test(html) ||
  /url\(\s*["']?\s*(?:https?:)?\/\//i.test(html) ||
  /<link\b[^>]*\bhref\s*=\s*["']?\s*(?:https?:)?\/\//i.test(html);

async function panelContent(m: CaughtMessage, tab: Tab): Promise<Node[]> {
  if (tab === 'html') {
    if (!m.html) return [h('p', { class: 'empty' }, 'This message has no HTML part.')];
    const frame = h('iframe', {
      class: 'frame',
      title: 'The message as HTML',
      // No allow-scripts, no allow-same-origin: the document can run nothing and reach nothing of this page.
      sandbox: 'allow-popups allow-popups-to-escape-sandbox',
      referrerpolicy: 'no-referrer',
      src: `${messagePath(m.id)}/html${state.remote ? '?remote_images=allow' : ''}`,
    });
    if (state.remote || !wantsRemote(m.html)) return [frame];
    const allow = h('button', { type: 'button' }, 'Load remote images');
    allow.addEventListener('click', () => {
      state.remote = true;
      void selectTab('html', true);
    });
    return [h('p', { class: 'remote', role: 'note' }, 'Remote images are blocked.', allow), frame];
  }
  if (tab === 'text') return [h('pre', { class: 'body' }, m.text ?? '(This message has no text part.)')];
  if (tab === 'headers') {
    return [
      h(
        'table',
        { class: 'headers' },
        h('caption', { class: 'vh' }, 'Header fields, in order'),
        h('tbody', {}, ...m.headers.map((x) => h('tr', {}, h('th', { scope: 'row' }, x.name), h('td', {}, x.value)))),
      ),
    ];
  }
  const res = await fetch(`${messagePath(m.id)}/raw`, { credentials: 'same-origin' });
  if (!res.ok) return [h('p', { class: 'empty' }, `The source could not be read (${res.status}).`)];
  const bytes = new Uint8Array(await res.arrayBuffer());
  const shown = new TextDecoder().decode(bytes.subarray(0, RAW_SHOWN));
  const nodes: Node[] = [
    h('p', {}, h('a', { href: `${messagePath(m.id)}/raw`, download: `${m.id}.eml`, class: 'button' }, 'Download .eml')),
    h('pre', { class: 'raw', 'aria-label': 'Message source' }, shown),
  ];
  if (bytes.length > RAW_SHOWN)
    nodes.push(
      h('p', { class: 'empty' }, `The first ${size(RAW_SHOWN)} of ${size(bytes.length)}; download it for the rest.`),
    );
  return nodes;
}

const TABS: [Tab, string][] = [
  ['html', 'HTML'],
  ['text', 'Text'],
  ['headers', 'Headers'],
  ['raw', 'Raw'],
];

/** Shows the open message's `tab` (state.tab), its content read anew. */
export async function selectTab(tab: Tab, focus: boolean) {
  const m = state.open;
  if (!m) return;
  state.tab = tab;
  for (const [k] of TABS) {
    const button = el(`tab-${k}`);
    const panel = el(`panel-${k}`);
    const on = k === tab;
    button.setAttribute('aria-selected', String(on));
    button.tabIndex = on ? 0 : -1;
    panel.hidden = !on;
    if (!on) panel.replaceChildren();
  }
  if (focus) el(`tab-${tab}`).focus();
  const content = await panelContent(m, tab);
  if (state.open === m && state.tab === tab) el(`panel-${tab}`).replaceChildren(...content);
}

/** The tab list and its (empty) panels; selectTab() fills the one shown. */
export function tabsOf(): HTMLElement[] {
  const list = h('div', { role: 'tablist', 'aria-label': 'Message content' });
  const panels = TABS.map(([k, label]) => {
    const on = k === state.tab;
    const button = h(
      'button',
      {
        type: 'button',
        role: 'tab',
        id: `tab-${k}`,
        'aria-controls': `panel-${k}`,
        'aria-selected': String(on),
        tabindex: on ? '0' : '-1',
      },
      label,
    );
    button.addEventListener('click', () => void selectTab(k, false));
    list.append(button);
    return h('div', {
      role: 'tabpanel',
      id: `panel-${k}`,
      'aria-labelledby': `tab-${k}`,
      tabindex: '0',
      hidden: !on,
    });
  });
  list.addEventListener('keydown', (e) => {
    const i = TABS.findIndex(([k]) => k === state.tab);
    const to = { ArrowRight: i + 1, ArrowLeft: i - 1, Home: 0, End: TABS.length - 1 }[e.key];
    if (to === undefined) return;
    e.preventDefault();
    void selectTab(TABS[(to + TABS.length) % TABS.length]![0], true);
  });
  return [list, ...panels];
}
