// A caught message as the sandbox serves it over HTTP: its HTML as a document of its own (which can run no script
// and, until the reader allows it, load nothing from elsewhere), shown as a reader in light or dark mode sees it, and
// its attachments' bytes as downloads (which the inbox page also shows as thumbnails when they are images).
import type { MessageAppearance } from '../../contract/inbox.js';

/**
 * The policy of a message's HTML document: nothing but inline styles and images carried in the message (data URLs)
 * unless remote content is allowed; never a script (also sandboxed by the header itself, should the document be
 * opened on its own); links open outside the inbox. The sandbox keeps the document's origin (`allow-same-origin`)
 * so that the inbox page can read its height and show it whole, without a scrollbar of its own: with no
 * `allow-scripts` (here and on the page's iframe) and no `script-src`, nothing in it runs, so nothing in it can use
 * that origin; it reaches the page only as far as CSS can, which is not at all.
 */
export function messageCsp(remote: boolean): string {
  const elsewhere = remote ? ' http: https:' : '';
  return [
    "default-src 'none'",
    `img-src data:${elsewhere}`,
    `style-src 'unsafe-inline'${elsewhere}`,
    `font-src data:${elsewhere}`,
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'self'",
    'sandbox allow-same-origin allow-popups allow-popups-to-escape-sandbox',
  ].join('; ');
}

/** A media feature that always holds, and one that never does. */
const ALWAYS = 'min-width: 0px';
const NEVER = 'max-width: -1px';

/**
 * The HTML with its `prefers-color-scheme` media queries (in its style elements and `media` attributes: `<link>`,
 * `<source>` of a `<picture>`) answered for `scheme`, whatever the browser prefers, and a declared
 * `color-scheme: light dark` narrowed to it. Text outside styles is left as it is.
 */
function pinColorScheme(html: string, scheme: 'light' | 'dark'): string {
  const queries = (css: string) =>
    css.replace(/prefers-color-scheme\s*:\s*(light|dark)\b/gi, (_, s: string) =>
      s.toLowerCase() === scheme ? ALWAYS : NEVER,
    );
  const narrowed = (list: string) =>
    /\blight\b/i.test(list) && /\bdark\b/i.test(list) ? list.replace(/\S(?:.*\S)?/, scheme) : list;
  const styles = (css: string) =>
    queries(css).replace(/(color-scheme\s*:\s*)([^;}!]*)/gi, (_, p: string, v: string) => p + narrowed(v));
  return html
    .replace(
      /(<style\b[^>]*>)([\s\S]*?)(<\/style\s*>)/gi,
      (_, open: string, css: string, close: string) => open + styles(css) + close,
    )
    .replace(/(\smedia\s*=\s*)("[^"]*"|'[^']*')/gi, (_, p: string, v: string) => p + queries(v))
    .replace(/<meta\b[^>]*\bname\s*=\s*["']?(?:color-scheme|supported-color-schemes)\b[^>]*>/gi, (meta) =>
      meta.replace(/(\scontent\s*=\s*)(["'])(.*?)\2/i, (_, p: string, q: string, v: string) => p + q + narrowed(v) + q),
    );
}

/**
 * The forced dark mode of some clients (Outlook, Gmail's apps), which invert a message's colours and keep its
 * images: a layer over the whole document inverts what is behind it and turns it back to its hue (a backdrop
 * filter), and images (and backgrounds made of images) are lifted above that layer, so that they show as they are.
 * A filter on the root and another on each image to undo it would not do: the image's pixels are clamped between
 * the two, and a saturated colour comes out pale.
 */
const INVERTED = `<style>:where(html){background:#fff}
html::after{content:"";position:fixed;inset:0;z-index:2147483646;pointer-events:none;backdrop-filter:invert(1) hue-rotate(180deg)}
img,picture,video,svg,[background],[style*="background-image"],[style*="background:url"]{position:relative;z-index:2147483647}</style>`;

/**
 * The message's HTML as served in the inbox's iframe: links open in a new tab (`<base target>`), and a meta refresh
 * (which would navigate the frame to a remote page even with remote content blocked) is removed. An `appearance`
 * shows it as a reader in that mode sees it (see MessageHtmlQuery).
 */
export function messageDocument(html: string, appearance?: MessageAppearance): string {
  let cleaned = html.replace(/<meta\b[^>]*http-equiv\s*=\s*["']?\s*refresh[^>]*>/gi, '');
  if (appearance) cleaned = pinColorScheme(cleaned, appearance === 'dark' ? 'dark' : 'light');
  const base = `<base target="_blank">${appearance === 'inverted' ? INVERTED : ''}`;
  // After <head>, else <html>, else the doctype, else first: a tag before the doctype would switch to quirks mode.
  for (const re of [/<head\b[^>]*>/i, /<html\b[^>]*>/i, /<!doctype\b[^>]*>/i]) {
    const m = re.exec(cleaned);
    if (m) return cleaned.slice(0, m.index + m[0].length) + base + cleaned.slice(m.index + m[0].length);
  }
  return base + cleaned;
}

/** Response headers of an attachment download: always a download, never rendered or sniffed as a page of ours. */
export function attachmentHeaders(a: { filename: string | null }, n: number): Record<string, string> {
  const name = a.filename || `attachment-${n}`;
  const ascii = name.replace(/[^\x20-\x7e]|["\\]/g, '_');
  return {
    'Content-Disposition': `attachment; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(name)}`,
    'X-Content-Type-Options': 'nosniff',
    'Content-Security-Policy': "default-src 'none'; sandbox",
  };
}

/** A media type safe to put in a header: `type/subtype` only (the parameters of a hostile message are dropped). */
export function mediaType(type: string): string {
  return /^[\w.+-]+\/[\w.+-]+$/.test(type) ? type : 'application/octet-stream';
}
