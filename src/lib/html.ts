// HTML as text: text put into HTML (escapeHtml), the words of an HTML document (htmlText), and the parts of it a
// reader of links needs (withoutSkipped, decodeEntities).

export function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (ch) => `&#${ch.charCodeAt(0)};`);
}

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: ' ' };

/** Where a comment or an element whose content is not text to read (head, style, script, title) starts. */
const SKIPPED = /<!--|<(head|style|script|title)\b/gi;

/**
 * The document without its comments and its head, style, script and title elements, each left as a space. One pass,
 * whatever the document holds: one left open runs to the end, as a browser reads it (a lazy pattern that looked for
 * its end from every opening made a few hundred KB of `<style` cost seconds).
 */
export function withoutSkipped(html: string): string {
  let out = '';
  let from = 0;
  SKIPPED.lastIndex = 0;
  for (let m = SKIPPED.exec(html); m; m = SKIPPED.exec(html)) {
    out += `${html.slice(from, m.index)} `;
    let end: number;
    if (m[1]) {
      const close = new RegExp(`</${m[1]}\\s*>`, 'gi');
      close.lastIndex = m.index + m[0].length;
      const c = close.exec(html);
      end = c ? c.index + c[0].length : html.length;
    } else {
      const c = html.indexOf('-->', m.index + 4);
      end = c >= 0 ? c + 3 : html.length;
    }
    from = SKIPPED.lastIndex = end;
  }
  return from ? out + html.slice(from) : html;
}

/**
 * The words of an HTML document, good enough for search, a preview line and the text of a message that has none:
 * tags dropped (a line break for the ones that end a line or a block), character references read, white space
 * collapsed. Linear in the document's length: each pattern stops at the next `<`.
 */
export function htmlText(html: string): string {
  return decodeEntities(
    withoutSkipped(html)
      .replace(/<(br|\/p|\/div|\/tr|\/li|\/h[1-6])\b[^<>]*>/gi, '\n')
      .replace(/<[^<>]*>/g, ' '),
  )
    .replace(/[ \t\r\f\v]+/g, ' ')
    .replace(/ ?\n[\s]*/g, '\n')
    .trim();
}

/** The character references of HTML text or of an attribute's value read (`&amp;` in a link's query string). */
export function decodeEntities(s: string): string {
  return s.replace(/&(#x[0-9a-f]{1,8}|#\d{1,10}|[a-z]{1,10});/gi, (all, e: string) => {
    if (e[0] !== '#') return ENTITIES[e.toLowerCase()] ?? all;
    const code = e[1] === 'x' || e[1] === 'X' ? parseInt(e.slice(2), 16) : parseInt(e.slice(1), 10);
    return code > 0 && code < 0x110000 ? String.fromCodePoint(code) : ' ';
  });
}
