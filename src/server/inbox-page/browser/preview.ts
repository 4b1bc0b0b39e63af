// The HTML tab: the message's HTML in a sandboxed frame as a reader sees it — at a phone's, a tablet's or the
// panel's width; in light mode, in dark mode with its own dark styles, or with the colours inverted as some dark-mode
// clients force — remote images blocked until allowed, and the frame as tall as the message.
//
// The frame runs no script (no `allow-scripts` here, no `script-src` in the document's policy) and keeps its origin
// (`allow-same-origin`) only so that this script can read how tall the message is: the message cannot use that
// origin, having nothing to run.
import type { CaughtMessage } from '../../../contract/inbox.js';
import { viewHref } from './session.js';
import { h } from './dom.js';
import { type Appearance, type PreviewWidth, state } from './state.js';

const WIDTHS: [PreviewWidth, string, string][] = [
  ['phone', 'Phone', 'A phone 375 px wide'],
  ['tablet', 'Tablet', 'A tablet 768 px wide'],
  ['full', 'Full', 'The width of this panel'],
];
const APPEARANCES: [Appearance, string, string][] = [
  ['light', 'Light', 'Light mode'],
  ['dark', 'Dark', "Dark mode with the message's own dark styles (prefers-color-scheme: dark)"],
  ['inverted', 'Inverted', 'Dark mode as clients that invert colours show it (images kept)'],
];

/** Whether the HTML asks for anything from elsewhere (images, styles, fonts), which its policy blocks. */
const wantsRemote = (html: string) =>
  /<(?:img|image|input|video)\b[^>]*\b(?:src|background|poster)\s*=\s*["']?\s*(?:https?:)?\/\//i.test(html) ||
  /\bbackground\s*=\s*["']?\s*(?:https?:)?\/\//i.test(html) ||
  /url\(\s*["']?\s*(?:https?:)?\/\//i.test(html) ||
  /<link\b[^>]*\bhref\s*=\s*["']?\s*(?:https?:)?\/\//i.test(html);

/** Whether the HTML has styles of its own for dark mode. */
const hasDarkStyles = (html: string) => /prefers-color-scheme\s*:\s*dark/i.test(html);

/**
 * The frame made as tall as its document, so that the page scrolls, not the frame. It is shrunk to nothing to
 * measure (a document as tall as its frame, `height: 100%`, would otherwise never shrink), then set, in one task:
 * nothing is painted between, and the page's scroll position is put back should the shrinking have moved it.
 */
export function fitFrame(frame: HTMLIFrameElement) {
  let doc: Document | null = null;
  try {
    doc = frame.contentDocument;
  } catch {
    doc = null;
  }
  const root = doc?.documentElement;
  // Not loaded yet (the frame's first, empty document), or navigated away from the message: the height stays.
  if (!root || doc!.URL === 'about:blank') return;
  const [x, y] = [window.scrollX, window.scrollY];
  frame.style.height = '0px';
  let height = Math.max(root.scrollHeight, doc!.body?.scrollHeight ?? 0);
  frame.style.height = `${height}px`;
  // A horizontal scrollbar (a table wider than a phone) takes room from the height: give it back.
  if (root.scrollHeight > root.clientHeight) {
    height += root.scrollHeight - root.clientHeight;
    frame.style.height = `${height}px`;
  }
  if (window.scrollX !== x || window.scrollY !== y) window.scrollTo(x, y);
}

function segmented<K extends string>(
  label: string,
  choices: [K, string, string][],
  current: K,
  choose: (k: K) => void,
): HTMLElement {
  const group = h('div', { class: 'seg', role: 'group', 'aria-label': label });
  for (const [k, text, title] of choices) {
    const b = h('button', { type: 'button', 'aria-pressed': String(k === current), title, 'data-choice': k }, text);
    b.addEventListener('click', () => {
      for (const other of group.querySelectorAll('button')) other.setAttribute('aria-pressed', String(other === b));
      choose(k);
    });
    group.append(b);
  }
  return group;
}

/** The HTML tab's content: the width and mode switches, the remote-images note, and the frame. */
export function previewOf(m: CaughtMessage): Node[] {
  if (!m.html) return [h('p', { class: 'empty' }, 'This message has no HTML part.')];
  const html = m.html;
  const box = h('div', { class: 'preview' });
  let observer: ResizeObserver | null = null;
  const render = () => {
    observer?.disconnect();
    const { width, appearance } = state.preview;
    const query: Record<string, string> = { appearance };
    if (state.remote) query.remote_images = 'allow';
    const frame = h('iframe', {
      class: 'frame',
      title: 'The message as HTML',
      // No allow-scripts: the document runs nothing, and so cannot use the origin it keeps (see above).
      sandbox: 'allow-same-origin allow-popups allow-popups-to-escape-sandbox',
      referrerpolicy: 'no-referrer',
      src: viewHref(m.id, '/html', query),
    });
    frame.addEventListener('load', () => fitFrame(frame));
    const stage = h('div', { class: 'stage', 'data-width': width, 'data-appearance': appearance }, frame);
    // A new width (or a window resized) reflows the message: the frame is measured again.
    let lastWidth = -1;
    observer = new ResizeObserver(() => {
      if (stage.clientWidth === lastWidth) return;
      lastWidth = stage.clientWidth;
      fitFrame(frame);
    });
    observer.observe(stage);

    const bar = h(
      'div',
      { class: 'preview-bar' },
      segmented('Preview width', WIDTHS, width, (w) => {
        state.preview.width = w;
        stage.dataset.width = w;
        fitFrame(frame);
      }),
      segmented('Preview mode', APPEARANCES, appearance, (a) => {
        state.preview.appearance = a;
        render();
      }),
    );
    const notes: Node[] = [];
    if (appearance === 'dark' && !hasDarkStyles(html))
      notes.push(
        h(
          'p',
          { class: 'preview-note', role: 'note' },
          'This message has no dark styles of its own (prefers-color-scheme: dark): clients that honour them show it ' +
            'as in light mode, and those that force dark mode invert it (Inverted).',
        ),
      );
    if (!state.remote && wantsRemote(html)) {
      const allow = h('button', { type: 'button' }, 'Load remote images');
      allow.addEventListener('click', () => {
        state.remote = true;
        render();
        document.getElementById('tab-html')?.focus();
      });
      notes.push(h('p', { class: 'remote', role: 'note' }, 'Remote images are blocked.', allow));
    }
    const focused = box.contains(document.activeElement)
      ? (document.activeElement as HTMLElement).dataset.choice
      : undefined;
    box.replaceChildren(bar, ...notes, stage);
    if (focused) box.querySelector<HTMLElement>(`[data-choice="${focused}"]`)?.focus();
  };
  render();
  return [box];
}
