// The plain tabs of an open message: its text (web addresses made links), its header fields in order (technical
// values in monospace, every value wrapping), and its source (the first 2 MB shown, all of it to download).
import type { CaughtMessage } from '../../../contract/inbox.js';
import { messagePath } from './api.js';
import { authorization, viewHref } from './session.js';
import { h, size } from './dom.js';

const RAW_SHOWN = 2 * 1024 * 1024;

/** Web addresses in text: http or https, up to a space, a quote or an angle bracket. */
const WEB_ADDRESS = /\bhttps?:\/\/[^\s<>"'`]+/gi;
/** The bracket a closing one pairs with. */
const OPENING: Record<string, string> = { ')': '(', ']': '[', '}': '{' };

/**
 * A web address as it ends in running text: without the sentence's punctuation after it, nor a closing bracket it
 * did not open (`(see https://example.com/a)`).
 */
function trimAddress(url: string): string {
  for (;;) {
    const last = url.at(-1)!;
    const opening = OPENING[last];
    if ('.,;:!?*'.includes(last)) url = url.slice(0, -1);
    else if (opening && url.split(opening).length <= url.split(last).length - 1) url = url.slice(0, -1);
    else return url;
  }
}

/**
 * Text with its http and https addresses as links that open in a new tab, telling the site nothing of the inbox
 * (`noopener noreferrer`). Any other scheme stays text; everything is text nodes, never markup.
 */
export function linked(text: string): Node[] {
  const out: Node[] = [];
  let last = 0;
  for (const m of text.matchAll(WEB_ADDRESS)) {
    if (m.index < last) continue;
    const shown = trimAddress(m[0]);
    let url: URL;
    try {
      url = new URL(shown);
    } catch {
      continue;
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') continue;
    if (m.index > last) out.push(document.createTextNode(text.slice(last, m.index)));
    out.push(h('a', { href: url.href, target: '_blank', rel: 'noopener noreferrer' }, shown));
    last = m.index + shown.length;
  }
  if (last < text.length) out.push(document.createTextNode(text.slice(last)));
  return out;
}

export function textOf(m: CaughtMessage): Node[] {
  if (m.text == null) return [h('pre', { class: 'body' }, '(This message has no text part.)')];
  return [h('pre', { class: 'body' }, ...linked(m.text))];
}

/** Header fields people read as words; the others (signatures, routes, ids, types) are shown in monospace. */
const PROSE = new Set(['subject', 'from', 'to', 'cc', 'bcc', 'reply-to', 'sender', 'date', 'comments', 'keywords']);

const ENCODED_WORD = /=\?([^?\s]+)\?([bq])\?([^?\s]*)\?=/gi;

/** The bytes an encoded word's text stands for: base64 (B), or quoted-printable with `_` for a space (Q). */
function wordBytes(encoding: string, text: string): number[] {
  if (encoding.toUpperCase() === 'B') return [...atob(text)].map((c) => c.charCodeAt(0));
  const bytes: number[] = [];
  for (let i = 0; i < text.length; i++) {
    const hex = text[i] === '=' ? /^[\da-f]{2}$/i.exec(text.slice(i + 1, i + 3))?.[0] : undefined;
    if (hex) {
      bytes.push(Number.parseInt(hex, 16));
      i += 2;
    } else bytes.push(text[i] === '_' ? 32 : text.charCodeAt(i));
  }
  return bytes;
}

/**
 * A header value with its encoded words (RFC 2047: `=?UTF-8?Q?…?=`) decoded, as a mail client shows it. Adjacent
 * words of one charset are decoded together (a character may be split between them) and the space between encoded
 * words is dropped (RFC 2047 section 6.2); a word in a charset the browser does not know stays as it is.
 */
export function decodeWords(value: string): string {
  const runs: { start: number; end: number; charset: string; bytes: number[]; raw: string }[] = [];
  for (const m of value.matchAll(ENCODED_WORD)) {
    const [raw, charset, encoding, text] = m as unknown as [string, string, string, string];
    const prev = runs.at(-1);
    let bytes: number[];
    try {
      bytes = wordBytes(encoding, text);
    } catch {
      continue; // bad base64: left as it is
    }
    const cs = (charset.split('*')[0] ?? '').toLowerCase(); // RFC 2231 language tag dropped
    if (prev && prev.charset === cs && /^\s*$/.test(value.slice(prev.end, m.index))) {
      prev.bytes.push(...bytes);
      prev.end = m.index + raw.length;
      prev.raw = value.slice(prev.start, prev.end);
    } else runs.push({ start: m.index, end: m.index + raw.length, charset: cs, bytes, raw });
  }
  let out = '';
  let at = 0;
  for (const r of runs) {
    const between = value.slice(at, r.start);
    out += at > 0 && /^\s+$/.test(between) ? '' : between;
    try {
      out += new TextDecoder(r.charset).decode(new Uint8Array(r.bytes));
    } catch {
      out += r.raw;
    }
    at = r.end;
  }
  return out + value.slice(at);
}

export function headersOf(m: CaughtMessage): Node[] {
  return [
    h(
      'table',
      // A label, not a hidden caption: an absolutely placed caption upsets the table's fixed layout in Chromium.
      { class: 'headers', 'aria-label': 'Header fields, in order' },
      h(
        'tbody',
        {},
        ...m.headers.map((x) => {
          const shown = decodeWords(x.value);
          return h(
            'tr',
            {},
            h('th', { scope: 'row' }, x.name),
            h(
              'td',
              { class: PROSE.has(x.name.toLowerCase()) ? null : 'mono', title: shown === x.value ? null : x.value },
              shown,
            ),
          );
        }),
      ),
    ),
  ];
}

export async function rawOf(m: CaughtMessage): Promise<Node[]> {
  const res = await fetch(`${messagePath(m.id)}/raw`, { headers: authorization() });
  if (!res.ok) return [h('p', { class: 'empty' }, `The source could not be read (${res.status}).`)];
  const bytes = new Uint8Array(await res.arrayBuffer());
  const shown = new TextDecoder().decode(bytes.subarray(0, RAW_SHOWN));
  const nodes: Node[] = [
    h('p', {}, h('a', { href: viewHref(m.id, '/raw'), download: `${m.id}.eml`, class: 'button' }, 'Download .eml')),
    h('pre', { class: 'raw', 'aria-label': 'Message source' }, shown),
  ];
  if (bytes.length > RAW_SHOWN)
    nodes.push(
      h('p', { class: 'empty' }, `The first ${size(RAW_SHOWN)} of ${size(bytes.length)}; download it for the rest.`),
    );
  return nodes;
}
