// The message's HTML parsed once (htmlparser2, with source offsets) for the checks that read markup: where things are
// (line and column), its links and images, the text of an element, its preheader; as far as its elements nest at most
// MAX_DEPTH deep.
import { Parser, parseDocument } from 'htmlparser2';
import type { ChildNode, Document, Element } from 'domhandler';

/** Where an offset of a text is, as line and column from 1 (a CRLF, CR or LF ends a line). */
export interface Place {
  line: number;
  column: number;
}

export function lineIndex(text: string): (offset: number) => Place {
  const starts = [0];
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 13 && text.charCodeAt(i + 1) === 10) i++;
    if (c === 10 || c === 13) starts.push(i + 1);
  }
  return (offset) => {
    let lo = 0;
    let hi = starts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (starts[mid]! <= offset) lo = mid;
      else hi = mid - 1;
    }
    return { line: lo + 1, column: offset - starts[lo]! + 1 };
  };
}

/**
 * Elements nested deeper than this are not read. Browsers' engines stop nesting there (Chromium's and WebKit's parsers
 * put deeper elements beside the 512th), and reading deeper is what makes the libraries slow or overflow: htmlparser2
 * adds each open element at the front of an array (time that grows with the square of the depth), html-validate's
 * rules walk up every element's ancestors, and caniemail walks the tree by recursion.
 */
export const MAX_DEPTH = 512;

/**
 * The HTML as far as its elements nest at most MAX_DEPTH deep: all of it, or what comes before the start tag that
 * opens an element deeper, with that tag's offset. One pass of htmlparser2's tokenizer, which stops there.
 */
export function withinDepth(html: string): { html: string; tooDeepAt: number | null } {
  let depth = 0;
  let tooDeepAt: number | null = null;
  const parser: Parser = new Parser({
    onopentagname() {
      if (++depth <= MAX_DEPTH) return;
      tooDeepAt = parser.startIndex;
      parser.pause();
    },
    onclosetag() {
      depth--;
    },
  });
  parser.write(html);
  return tooDeepAt === null ? { html, tooDeepAt } : { html: html.slice(0, tooDeepAt), tooDeepAt };
}

export interface Markup {
  /** The HTML read: all of it, or as far as its elements nest at most MAX_DEPTH deep. */
  html: string;
  /** Where an element nests deeper than MAX_DEPTH, and the rest of the HTML was not read; null when none does. */
  tooDeep: Place | null;
  doc: Document;
  /** The line and column of an offset of the HTML. */
  at(offset: number): Place;
  /** Every element, in document order. */
  elements: Element[];
}

export function parseMarkup(source: string): Markup {
  const { html, tooDeepAt } = withinDepth(source);
  const doc = parseDocument(html, { withStartIndices: true, withEndIndices: true });
  const elements: Element[] = [];
  for (const n of descendants(doc)) {
    if (n.type === 'tag' || n.type === 'script' || n.type === 'style') elements.push(n as Element);
  }
  const at = lineIndex(html);
  return { html, tooDeep: tooDeepAt === null ? null : at(tooDeepAt), doc, at, elements };
}

/**
 * Every node under `root`, in document order. A loop over a stack, not a recursion: a message may nest elements tens
 * of thousands deep, deeper than the call stack goes.
 */
function* descendants(root: Element | Document): Generator<ChildNode> {
  const stack: ChildNode[] = [...root.children].reverse();
  for (let n = stack.pop(); n !== undefined; n = stack.pop()) {
    yield n;
    if ('children' in n) for (let i = n.children.length - 1; i >= 0; i--) stack.push(n.children[i] as ChildNode);
  }
}

/** The place of an element's start tag. */
export const placeOf = (m: Markup, e: { startIndex: number | null }): Place => m.at(e.startIndex ?? 0);

/** A URL the message points at: a link a reader follows or an image a client loads. */
export interface FoundUrl {
  url: string;
  kind: 'link' | 'image';
  /** Where it is in the HTML; null for a link of the text part. */
  line: number | null;
  column: number | null;
}

/** `url(…)` values of CSS. */
const CSS_URL = /url\(\s*(['"]?)([^'")]+)\1\s*\)/gi;

/** Every link (`a`, `area`) and image (`img` src and srcset, `background`, CSS `url()`) of the HTML, in order. */
export function urlsOf(m: Markup): FoundUrl[] {
  const out: FoundUrl[] = [];
  const add = (url: string, kind: FoundUrl['kind'], e: Element) => {
    const u = url.trim();
    if (u) out.push({ url: u, kind, ...placeOf(m, e) });
  };
  for (const e of m.elements) {
    const a = e.attribs;
    if ((e.name === 'a' || e.name === 'area') && a.href !== undefined) add(a.href, 'link', e);
    if (e.name === 'img' || e.name === 'source') {
      if (a.src !== undefined) add(a.src, 'image', e);
      for (const part of (a.srcset ?? '').split(',')) add(part.trim().split(/\s+/)[0] ?? '', 'image', e);
    }
    if (a.background !== undefined) add(a.background, 'image', e);
    for (const css of [a.style, e.name === 'style' ? textOf(e) : undefined]) {
      if (css) for (const match of css.matchAll(CSS_URL)) add(match[2] ?? '', 'image', e);
    }
  }
  return out;
}

/** The http(s) links of a text part. */
export function textUrls(text: string): FoundUrl[] {
  return [...text.matchAll(/\bhttps?:\/\/[^\s<>"'`]+/gi)].map((match) => ({
    // A sentence's final punctuation is not part of the link.
    url: match[0].replace(/[.,;:!?)\]}>]+$/, ''),
    kind: 'link' as const,
    line: null,
    column: null,
  }));
}

/** The text an element holds, as written (no markup). */
export function textOf(e: Element | Document): string {
  let s = '';
  for (const n of descendants(e)) if (n.type === 'text') s += n.data;
  return s;
}

/** Whether an inline style hides the element (how preheaders are written). */
const hidden = (e: Element) =>
  /display\s*:\s*none|visibility\s*:\s*hidden|max-height\s*:\s*0|opacity\s*:\s*0|font-size\s*:\s*0/i.test(
    e.attribs.style ?? '',
  );

/**
 * The preheader: the hidden text at the start of the body that clients show beside the subject, or null when the
 * message has none (then a client shows the start of the body instead).
 */
export function preheaderOf(m: Markup): string | null {
  const body = m.elements.find((e) => e.name === 'body');
  for (const e of m.elements) {
    if (body && (e.startIndex ?? 0) < (body.startIndex ?? 0)) continue;
    if (e.name === 'head' || e.name === 'title' || e.name === 'style' || e.name === 'body') continue;
    if (hidden(e)) return collapse(textOf(e));
    // The first element with text of its own that is not hidden: the preheader, if any, comes before it.
    if (e.children.some((c) => c.type === 'text' && c.data.trim())) return null;
  }
  return null;
}

/**
 * Whitespace collapsed, and the invisible characters preheaders are padded with (zero-width spaces and joiners, soft
 * hyphens, U+034F) taken for it; entities are already decoded by the parser.
 */
export const collapse = (s: string) => s.replace(/(?:\s|\u200b|\u200c|\u200d|\u034f|\u00ad|\ufeff)+/g, ' ').trim();
