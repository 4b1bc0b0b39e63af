// A quick look at a caught message's body when it is caught: the text the inbox searches and previews, and
// whether the message carries attachments. mailparser reads the whole body only when the message is first opened
// (about 0.7 ms for a 3 KB message, too much for the sink's hot path); this walks the MIME tree with indexOf and
// decodes only the first text/plain and text/html parts, so a caught message is searchable without being opened.
import { htmlText } from '../../lib/html.js';

export interface BodyGlance {
  /** The body as text: the text/plain part, else the HTML part with its tags removed; at most MAX_TEXT characters. */
  text: string;
  /**
   * What the search indexes: `text`, then, when the message has a text part and an HTML part, the words of the HTML's
   * text (its first MAX_TEXT characters) that the text part lacks, each once: a code, a link's words, a footer.
   */
  indexed: string;
  /** A part marked `Content-Disposition: attachment`, or a non-text part that the HTML does not use by Content-ID. */
  hasAttachments: boolean;
}

/** Enough for search and a preview; longer bodies are indexed by their start. */
export const MAX_TEXT = 64 * 1024;
const MAX_DEPTH = 10;
const MAX_PARTS = 200;

type Fields = Map<string, string>;

/** The fields of a part's header block, unfolded, first occurrence of each, names lowercased. */
function fieldsOf(block: string): Fields {
  const out: Fields = new Map();
  for (const line of block.replace(/\r?\n[ \t]+/g, ' ').split(/\r?\n/)) {
    const i = line.indexOf(':');
    if (i <= 0) continue;
    const name = line.slice(0, i).trim().toLowerCase();
    if (!out.has(name)) out.set(name, line.slice(i + 1).trim());
  }
  return out;
}

const PARAMS = {
  boundary: /;\s*boundary\s*=\s*(?:"([^"]*)"|([^;\s]+))/i,
  charset: /;\s*charset\s*=\s*(?:"([^"]*)"|([^;\s]+))/i,
};

function param(value: string, name: keyof typeof PARAMS): string | null {
  const m = PARAMS[name].exec(value);
  return m ? (m[1] ?? m[2] ?? null) : null;
}

/** Where the body of the part `buf[start..end)` starts (after the blank line that ends its header block), or -1. */
function bodyStart(buf: Buffer, start: number, end: number): number {
  // A part without header fields starts with the blank line itself.
  if (buf[start] === 0x0a) return start + 1;
  if (buf[start] === 0x0d && buf[start + 1] === 0x0a) return start + 2;
  const crlf = buf.indexOf('\r\n\r\n', start);
  const lf = buf.indexOf('\n\n', start);
  const at = crlf >= 0 && (lf < 0 || crlf < lf) ? crlf + 4 : lf >= 0 ? lf + 2 : -1;
  return at >= 0 && at <= end ? at : -1;
}

const decoders = new Map<string, TextDecoder | null>();
function decodeCharset(bytes: Buffer, charset: string | null): string {
  const cs = (charset ?? 'utf-8').toLowerCase();
  if (cs === 'utf-8' || cs === 'utf8' || cs === 'us-ascii' || cs === 'ascii') return bytes.toString('utf8');
  let d = decoders.get(cs);
  if (d === undefined) {
    try {
      d = new TextDecoder(cs);
    } catch {
      d = null; // A charset this runtime does not know: read it as Latin-1 rather than drop the text.
    }
    decoders.set(cs, d);
  }
  return d ? d.decode(bytes) : bytes.toString('latin1');
}

function hexValue(c: number): number {
  if (c >= 48 && c <= 57) return c - 48;
  if (c >= 65 && c <= 70) return c - 55;
  if (c >= 97 && c <= 102) return c - 87;
  return -1;
}

function decodeQuotedPrintable(bytes: Buffer): Buffer {
  const out = Buffer.allocUnsafe(bytes.length);
  let n = 0;
  for (let i = 0; i < bytes.length; i++) {
    const c = bytes[i]!;
    if (c !== 61 /* = */) {
      out[n++] = c;
      continue;
    }
    // A soft line break (`=` at the end of a line) joins two lines.
    if (bytes[i + 1] === 0x0a) {
      i += 1;
      continue;
    }
    if (bytes[i + 1] === 0x0d && bytes[i + 2] === 0x0a) {
      i += 2;
      continue;
    }
    const hi = hexValue(bytes[i + 1] ?? 0);
    const lo = hexValue(bytes[i + 2] ?? 0);
    if (hi >= 0 && lo >= 0) {
      out[n++] = hi * 16 + lo;
      i += 2;
    } else {
      out[n++] = c;
    }
  }
  return out.subarray(0, n);
}

function decodePart(buf: Buffer, start: number, end: number, fields: Fields): string {
  const encoding = (fields.get('content-transfer-encoding') ?? '').toLowerCase();
  // Base64 and quoted-printable take more bytes than the text they carry: read enough for MAX_TEXT characters.
  const raw = buf.subarray(start, Math.min(end, start + MAX_TEXT * 4));
  let bytes: Buffer = raw;
  if (encoding === 'base64') bytes = Buffer.from(raw.toString('latin1'), 'base64');
  else if (encoding === 'quoted-printable') bytes = decodeQuotedPrintable(raw);
  return decodeCharset(bytes, param(fields.get('content-type') ?? '', 'charset'));
}

/** The text and attachment marker of a raw message whose top-level header fields are `top`. */
export function glanceBody(raw: Buffer, top: { name: string; value: string }[]): BodyGlance {
  const fields: Fields = new Map();
  for (const h of top) {
    const name = h.name.toLowerCase();
    if (!fields.has(name)) fields.set(name, h.value);
  }
  let plain: string | null = null;
  let html: { start: number; end: number; fields: Fields } | null = null;
  let hasAttachments = false;
  let parts = 0;

  const walk = (start: number, end: number, f: Fields, depth: number) => {
    if (++parts > MAX_PARTS) return;
    const type = ((f.get('content-type') ?? 'text/plain').split(';')[0] ?? '').trim().toLowerCase();
    const disposition = ((f.get('content-disposition') ?? '').split(';')[0] ?? '').trim().toLowerCase();
    if (type.startsWith('multipart/')) {
      const boundary = param(f.get('content-type')!, 'boundary');
      if (!boundary || depth >= MAX_DEPTH) return;
      const delimiter = `--${boundary}`;
      // A delimiter starts a line and is followed by the end of that line, white space or the closing `--`.
      const find = (from: number): number => {
        for (let at = raw.indexOf(delimiter, from); at >= 0 && at < end; at = raw.indexOf(delimiter, at + 1)) {
          const next = raw[at + delimiter.length];
          const startsLine = at === start || raw[at - 1] === 0x0a;
          if (
            startsLine &&
            (next === undefined || next === 0x0d || next === 0x0a || next === 0x2d || next === 0x20 || next === 0x09)
          ) {
            return at;
          }
        }
        return -1;
      };
      for (let at = find(start); at >= 0; ) {
        const after = at + delimiter.length;
        if (raw[after] === 0x2d && raw[after + 1] === 0x2d) return; // the closing delimiter
        const lineEnd = raw.indexOf('\n', after);
        if (lineEnd < 0 || lineEnd >= end) return;
        const next = find(lineEnd + 1);
        // The line break before a delimiter belongs to the delimiter (RFC 2046 section 5.1.1).
        let partEnd = next < 0 ? end : next - 1;
        if (next >= 0 && raw[partEnd - 1] === 0x0d) partEnd--;
        const partStart = lineEnd + 1;
        const bodyAt = partEnd > partStart ? bodyStart(raw, partStart, partEnd) : -1;
        if (bodyAt >= 0) walk(bodyAt, partEnd, fieldsOf(raw.subarray(partStart, bodyAt).toString('latin1')), depth + 1);
        at = next;
      }
      return;
    }
    if (disposition === 'attachment' || type === 'message/rfc822') {
      hasAttachments = true;
    } else if (type === 'text/plain' && plain === null) {
      plain = decodePart(raw, start, end, f);
    } else if (type === 'text/html' && html === null) {
      html = { start, end, fields: f };
    } else if (!type.startsWith('text/') && !f.has('content-id')) {
      hasAttachments = true;
    }
  };

  const bodyAt = bodyStart(raw, 0, raw.length);
  if (bodyAt >= 0) walk(bodyAt, raw.length, fields, 0);
  const found = html as { start: number; end: number; fields: Fields } | null;
  if (plain === null) {
    const text = found ? htmlText(decodePart(raw, found.start, found.end, found.fields)).slice(0, MAX_TEXT) : '';
    return { text, indexed: text, hasAttachments };
  }
  const text = (plain as string).replace(/\r\n/g, '\n').trim().slice(0, MAX_TEXT);
  const more = found ? newWords(decodePart(raw, found.start, found.end, found.fields), text) : '';
  return { text, indexed: more ? `${text}\n${more}` : text, hasAttachments };
}

/** A character of a word: an ASCII letter or digit, or any past ASCII (the search index's tokenizer splits those). */
const isWordChar = (c: number) => (c >= 97 && c <= 122) || (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || c > 127;

/**
 * The words of an HTML body's text (its first MAX_TEXT characters) that `text` lacks, in any case, each once, joined
 * by spaces. Most HTML mail comes with a text part that says the same (one is made from the other): indexing all of
 * its words again would double the search entry, and the sink's cost of indexing it, for nothing. One pass drops what
 * is no text (head, styles, scripts, comments, tags) and decodes entities (htmlText); a loop over the characters finds
 * the words (a regular expression's matches cost twice as much, on the sink's path).
 */
function newWords(html: string, text: string): string {
  // htmlText reads the document in one pass whatever it holds: a lazy pattern for the head, styles and scripts
  // spent seconds on a few hundred KB of `<style` here, on the sink's path.
  const words = htmlText(html).slice(0, MAX_TEXT).toLowerCase();
  const known = new Set<string>();
  const more: string[] = [];
  const scan = (s: string, keep: boolean) => {
    for (let i = 0, start = -1; i <= s.length; i++) {
      if (i < s.length && isWordChar(s.charCodeAt(i))) {
        if (start < 0) start = i;
        continue;
      }
      if (start < 0) continue;
      const word = s.slice(start, i);
      start = -1;
      if (known.has(word)) continue;
      known.add(word);
      if (keep) more.push(word);
    }
  };
  scan(text.toLowerCase(), false);
  scan(words, true);
  return more.join(' ');
}

/** The preview line of a body text: its start, whitespace collapsed. */
export function previewOf(text: string): string | null {
  const line = text.slice(0, 400).replace(/\s+/g, ' ').trim().slice(0, 200);
  return line || null;
}
