// What a caught message offers a test: its links and one-time codes (`svc inbox wait --extract`, svc-mail/testing's
// `inbox.waitFor`).

/** Closing brackets a URL keeps only when it opened them too (`…/Mail_(protocol)`, not `(see https://…)`). */
const CLOSERS: Record<string, string> = { ')': '(', ']': '[', '}': '{' };

/** A URL found in running text, without the punctuation of the sentence around it. */
function trimUrl(url: string): string {
  const count = (c: string) => url.split(c).length - 1;
  for (;;) {
    const last = url.at(-1)!;
    const opener = CLOSERS[last];
    if (/[.,;:!?'"*]/.test(last) || (opener && count(last) > count(opener))) url = url.slice(0, -1);
    else return url;
  }
}

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: '\u00a0' };

/** The character references an attribute or a text node of HTML may use (`&amp;` in a link's query string). */
function decodeEntities(s: string): string {
  return s.replace(/&(?:#(\d+)|#x([0-9a-f]+)|([a-z]+));/gi, (whole, dec?: string, hex?: string, name?: string) => {
    if (dec || hex) {
      const cp = Number.parseInt(dec ?? hex!, dec ? 10 : 16);
      return cp > 0 && cp <= 0x10ffff ? String.fromCodePoint(cp) : whole;
    }
    return ENTITIES[name!.toLowerCase()] ?? whole;
  });
}

/** The words of an HTML part: without its head, styles and scripts, tags read as spaces. */
function htmlText(html: string): string {
  return decodeEntities(
    html
      .replace(/<(head|style|script)\b[\s\S]*?<\/\1\s*>/gi, ' ')
      .replace(/<!--[\s\S]*?-->/g, ' ')
      .replace(/<[^>]*>/g, ' '),
  );
}

/** The first http(s) URL of the text part, else the first http(s) link (`<a href>`) of the HTML; null if none. */
export function firstLink(text: string | null, html: string | null): string | null {
  return allLinks(text, html)[0] ?? null;
}

/** Every http(s) URL of the text part, then every http(s) link (`<a href>`) of the HTML not already listed, in order. */
export function allLinks(text: string | null, html: string | null): string[] {
  const found = new Set<string>();
  for (const m of (text ?? '').matchAll(/\bhttps?:\/\/[^\s<>"]+/gi)) found.add(trimUrl(m[0]));
  for (const m of (html ?? '').matchAll(/<a\s[^>]*?\bhref\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'>]+))/gi)) {
    const href = decodeEntities(m[1] ?? m[2] ?? m[3] ?? '').trim();
    if (/^https?:\/\//i.test(href)) found.add(href);
  }
  return [...found];
}

/**
 * A one-time code: 4 to 10 ASCII digits standing alone. Not part of a longer number or a word (`A1234`, `12345678901`),
 * nor joined by `-`, `.`, `,` or `/` to more digits or letters, so dates, times, decimals, phone numbers and ids such
 * as `INV-2024` are passed over; sentence punctuation around it (`is 482913.`, `(482913)`, `code:482913`) is fine.
 */
const CODE = /(?<![\p{L}\p{N}_])(?<![\p{L}\p{N}][-.,/])[0-9]{4,10}(?![\p{L}\p{N}_])(?![-.,/][\p{L}\p{N}])/u;

/** The first one-time code of the text part (of the HTML's words when there is no text part); null if none. */
export function firstCode(text: string | null, html: string | null): string | null {
  return allCodes(text, html)[0] ?? null;
}

/** Every one-time code of the text part (of the HTML's words when there is no text part), in order, once each. */
export function allCodes(text: string | null, html: string | null): string[] {
  const words = text?.trim() ? text : html ? htmlText(html) : '';
  return [...new Set(Array.from(words.matchAll(new RegExp(CODE.source, 'gu')), (m) => m[0]))];
}
