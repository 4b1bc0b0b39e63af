// The HTML source tab: the message's HTML part with line numbers and its syntax coloured by a small tokenizer of our
// own (tags, attributes, values, comments, entities, and in style elements at-rules, properties and comments). A
// click on a line number marks that line and puts it in the address (`#L12`); markLine() is how other parts of the
// page (tabs.ts showSourceLine) point at a line.
import type { CaughtMessage } from '../../../contract/inbox.js';
import { h } from './dom.js';

/** What a piece of the source is; '' is plain text. */
export type TokenKind = '' | 'tag' | 'attr' | 'val' | 'comment' | 'punct' | 'entity' | 'at' | 'prop';
export type Token = [kind: TokenKind, text: string];

/** Past this many characters the source is shown without colours: a page of DOM nodes per token would be slow. */
const COLOURED = 500_000;

// One attribute-list step: spaces; a name with its value; the end of the tag; anything else.
const ATTRIBUTE = /(\s+)|([^\s"'<>/=]+)(?:(\s*=\s*)("[^"]*"?|'[^']*'?|[^\s>]*))?|(\/?>)|([\s\S])/y;
// In a style element: comments, strings, at-rules, and property names (a name and a colon before any `{`).
const CSS = /\/\*[\s\S]*?(?:\*\/|$)|"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|@[\w-]+|[\w-]+(?=\s*:[^{};]*[;}])/g;
const ENTITY = /&(?:#\d+|#x[\da-f]+|[a-z][a-z\d]*);/gi;

function pushMatches(out: Token[], text: string, re: RegExp, kindOf: (m: string) => TokenKind) {
  let last = 0;
  for (const m of text.matchAll(re)) {
    if (m.index > last) out.push(['', text.slice(last, m.index)]);
    out.push([kindOf(m[0]), m[0]]);
    last = m.index + m[0].length;
  }
  if (last < text.length) out.push(['', text.slice(last)]);
}

const cssKind = (t: string): TokenKind =>
  t.startsWith('/*') ? 'comment' : t[0] === '"' || t[0] === "'" ? 'val' : t[0] === '@' ? 'at' : 'prop';

/** The HTML as tokens, in order: their texts joined are the HTML, exactly. */
export function tokenize(src: string): Token[] {
  const out: Token[] = [];
  const text = (t: string) => pushMatches(out, t, ENTITY, () => 'entity');
  let i = 0;
  while (i < src.length) {
    const lt = src.indexOf('<', i);
    if (lt < 0) {
      text(src.slice(i));
      break;
    }
    if (lt > i) text(src.slice(i, lt));
    if (src.startsWith('<!--', lt)) {
      const end = src.indexOf('-->', lt + 4);
      i = end < 0 ? src.length : end + 3;
      out.push(['comment', src.slice(lt, i)]);
      continue;
    }
    if (src[lt + 1] === '!' || src[lt + 1] === '?') {
      // A doctype, a CDATA section or a processing instruction: one piece up to its `>`.
      const end = src.indexOf('>', lt);
      i = end < 0 ? src.length : end + 1;
      out.push(['comment', src.slice(lt, i)]);
      continue;
    }
    const open = /^<(\/?)([a-z][^\s/>]*)/i.exec(src.slice(lt, lt + 64));
    if (!open) {
      text('<');
      i = lt + 1;
      continue;
    }
    const [whole, slash = '', tag = ''] = open;
    out.push(['punct', `<${slash}`], ['tag', tag]);
    i = lt + whole.length;
    ATTRIBUTE.lastIndex = i;
    for (let m = ATTRIBUTE.exec(src); m; m = ATTRIBUTE.exec(src)) {
      i = ATTRIBUTE.lastIndex;
      if (m[1]) out.push(['', m[1]]);
      else if (m[2]) {
        out.push(['attr', m[2]]);
        if (m[3]) out.push(['punct', m[3]], ['val', m[4] ?? '']);
      } else if (m[5]) {
        out.push(['punct', m[5]]);
        break;
      } else out.push(['punct', m[6] ?? '']);
    }
    // The text of a style or script element is not HTML: it runs to the element's end tag.
    const name = tag.toLowerCase();
    if (!slash && (name === 'style' || name === 'script') && src[i - 1] === '>' && src[i - 2] !== '/') {
      const close = src.slice(i).search(new RegExp(`</${name}\\b`, 'i'));
      const end = close < 0 ? src.length : i + close;
      const body = src.slice(i, end);
      if (name === 'style') pushMatches(out, body, CSS, cssKind);
      else if (body) out.push(['', body]);
      i = end;
    }
  }
  return out;
}

/** The source view: one element per line (`data-line`, from 1), its number in a gutter, its tokens coloured. */
function linesOf(src: string): HTMLElement[] {
  const tokens: Token[] = src.length > COLOURED ? [['', src]] : tokenize(src);
  const lines: HTMLElement[] = [];
  let code = h('span', { class: 'c' });
  const newLine = () => {
    const n = lines.length + 1;
    code = h('span', { class: 'c' });
    lines.push(
      h(
        'div',
        { class: 'ln', 'data-line': String(n) },
        h('span', { class: 'n', 'aria-hidden': 'true' }, String(n)),
        code,
      ),
    );
  };
  newLine();
  for (const [kind, text] of tokens) {
    const parts = text.split('\n');
    parts.forEach((part, k) => {
      if (k > 0) newLine();
      const shown = part.replace(/\r/g, '');
      if (shown) code.append(kind ? h('span', { class: `t-${kind}` }, shown) : shown);
    });
  }
  return lines;
}

/** Marks line `n` of a source view (and no other), scrolled into sight; null when there is no such line. */
export function markLine(view: ParentNode, n: number): HTMLElement | null {
  const line = view.querySelector<HTMLElement>(`.source [data-line="${n}"]`);
  if (!line) return null;
  for (const other of view.querySelectorAll('.source .ln.hl')) {
    other.classList.remove('hl');
    other.removeAttribute('aria-current');
  }
  line.classList.add('hl');
  line.setAttribute('aria-current', 'true');
  line.scrollIntoView({ block: 'center' });
  return line;
}

/** The HTML source tab's content. */
export function sourceOf(m: CaughtMessage): Node[] {
  if (!m.html) return [h('p', { class: 'empty' }, 'This message has no HTML part.')];
  // The last line break ends the last line; it does not start another (as editors number lines).
  const lines = linesOf(m.html.replace(/\r?\n$/, ''));
  const view = h('div', { class: 'source', role: 'region', 'aria-label': 'HTML source', tabindex: '0' }, ...lines);
  view.style.setProperty('--gutter', `${String(lines.length).length + 2}ch`);
  view.addEventListener('click', (e) => {
    const number = (e.target as HTMLElement).closest('.n');
    const line = number?.parentElement;
    if (!line?.dataset.line) return;
    markLine(view, Number(line.dataset.line));
    history.replaceState(history.state, '', `${location.pathname}${location.search}#L${line.dataset.line}`);
  });
  const nodes: Node[] = [view];
  if (m.html.length > COLOURED)
    nodes.push(h('p', { class: 'source-note' }, 'This source is too long to colour; it is shown as it is.'));
  return nodes;
}
