// Reading a caught message for its views (its text, HTML and attachments) in bounded memory, whatever the sink took.
// mailparser refuses a message of more than 1,000 MIME parts or with a header block over 1 MiB (the limits of its
// splitter, mailsplit), and reads every text part whole however long. So the views read a bounded copy instead:
// mailsplit's splitter, without those limits, walks the message once, and the copy keeps its first VIEW_PARTS parts,
// the first VIEW_TEXT_BYTES of its text and of its HTML, and header blocks under MAX_HEADER_BLOCK (their longest
// fields dropped); mailparser reads that copy. What was left out is said in the view; the raw source stays whole.
// When nothing is left out, mailparser reads the message itself and no copy is made.
import { createRequire } from 'node:module';
import type { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { htmlText } from '../../../lib/html.js';

type Splitter = new (config: { maxHeadSize: number; maxChildNodes: number }) => Transform;

/**
 * mailparser and mailsplit's splitter, loaded when a message is first read (the sink needs only headers.ts). Both as
 * their documented API has them (simpleParser; Splitter's nodes, their headers and getHeaders()): nothing private.
 */
let loaded: Promise<{ mailparser: typeof import('mailparser'); Splitter: Splitter }> | undefined;
const libs = () =>
  (loaded ??= import('mailparser').then((mailparser) => ({
    mailparser,
    Splitter: (createRequire(import.meta.url)('@zone-eu/mailsplit') as { Splitter: Splitter }).Splitter,
  })));

/** The largest header block the SMTP sink takes for a message, and the largest a part keeps in the views: 1 MiB. */
export const MAX_HEADER_BLOCK = 1024 * 1024;

/** The header block of a message: up to and including the blank line that ends it (the whole message without one). */
export function headerBlock(raw: Buffer): Buffer {
  const crlf = raw.indexOf('\r\n\r\n');
  const lf = raw.indexOf('\n\n');
  const end = crlf >= 0 && (lf < 0 || crlf < lf) ? crlf + 4 : lf >= 0 ? lf + 2 : raw.length;
  return raw.subarray(0, end);
}

/** MIME parts the views show (the message itself and multipart containers count); the parts after them are left out. */
export const VIEW_PARTS = 500;
/** Bytes of text (text/plain parts, as encoded in the message, all of them together) the views show; the same for HTML. */
export const VIEW_TEXT_BYTES = 1024 * 1024;

/** What a view leaves out, as bits (stored with the parsed body: store/inbox.ts `parsed`). */
export const OMITTED = { text: 2, html: 4, parts: 8, headers: 16, unreadable: 32 } as const;

const NOTES: [number, string][] = [
  [OMITTED.text, 'The text is longer than the view shows: its first 1 MiB is shown.'],
  [OMITTED.html, 'The HTML is longer than the view shows: its first 1 MiB is shown.'],
  [
    OMITTED.parts,
    `The message has more than ${VIEW_PARTS} MIME parts: the view shows the first ${VIEW_PARTS} (the message itself and multipart containers count).`,
  ],
  [OMITTED.headers, 'A part has a header block over 1 MiB: its longest fields are left out of the view.'],
  [OMITTED.unreadable, "The message's MIME structure could not be read: only its header fields are shown."],
];

/** What a view leaves out (`omitted` bits), in words; each ends with where the rest is. */
export function omittedNotes(omitted: number): string[] {
  return NOTES.filter(([bit]) => omitted & bit).map(([, note]) => `${note} The raw source has all of it.`);
}

/** A part of a split message as mailsplit's splitter hands it over. */
interface SplitNode {
  type: 'node';
  root: boolean;
  multipart: string | false;
  contentType: string | false;
  disposition: string | false;
  headers: { getList(): { key: string; line: string | Buffer }[]; remove(key: string): void };
  getHeaders(): Buffer;
}
type SplitChunk = SplitNode | { type: 'body' | 'data'; node: SplitNode; value: Buffer };

// mailparser's text parts: these types, shown inline (no disposition, or `inline`); every other leaf is an attachment.
const TEXT_TYPES = new Set(['text/plain', 'text/html', 'message/delivery-status']);

/** Which budget a part's body counts against: its text or its HTML (a text part mailparser shows), or none. */
function budgetOf(node: SplitNode): 'text' | 'html' | null {
  if (node.multipart) return null;
  const type = node.contentType || (node.root ? 'text/plain' : '');
  if (!TEXT_TYPES.has(type) || (node.disposition && node.disposition !== 'inline')) return null;
  return type === 'text/html' ? 'html' : 'text';
}

/** A part's header block within MAX_HEADER_BLOCK: its longest fields removed until it fits. */
function boundedHeaders(node: SplitNode, block: Buffer): Buffer {
  for (let list = node.headers.getList(); block.length > MAX_HEADER_BLOCK && list.length; ) {
    const longest = list.reduce((a, b) => (b.line.length > a.line.length ? b : a));
    node.headers.remove(longest.key);
    const after = node.getHeaders();
    // A block no field can be taken from (lines that are not fields) is left as it is: mailparser then refuses to
    // read it, and the view says the message could not be read.
    if (after.length >= block.length) break;
    block = after;
    list = node.headers.getList();
  }
  return block;
}

const SLICE = 256 * 1024;

/** The empty lines of a message (after an LF or a CRLF), counted up to `most`. */
function emptyLines(raw: Buffer, most: number): number {
  let n = 0;
  for (const end of ['\n\n', '\n\r\n']) {
    for (let at = raw.indexOf(end); at >= 0 && n < most; at = raw.indexOf(end, at + 1)) n++;
  }
  return n;
}

/**
 * The message as the views read it: itself when nothing needs leaving out, else a copy within the views' limits;
 * with what was left out (`OMITTED` bits).
 */
export async function viewSource(raw: Buffer): Promise<{ raw: Buffer; omitted: number }> {
  // Most mail is read as it is without walking it: no part of a message within both byte limits passes either, and
  // every part but the last ends its header block with an empty line, so fewer of those than VIEW_PARTS means fewer
  // parts than that.
  const small = raw.length <= Math.min(VIEW_TEXT_BYTES, MAX_HEADER_BLOCK);
  if (small && emptyLines(raw, VIEW_PARTS) < VIEW_PARTS) return { raw, omitted: 0 };
  const out: Buffer[] = [];
  let omitted = 0;
  let parts = 0;
  let stopped = false;
  const left = { text: VIEW_TEXT_BYTES, html: VIEW_TEXT_BYTES };
  const budgets = new WeakMap<SplitNode, 'text' | 'html' | null>();
  const take = (chunk: SplitChunk) => {
    if (chunk.type === 'node') {
      if (++parts > VIEW_PARTS) {
        omitted |= OMITTED.parts;
        stopped = true;
        return;
      }
      budgets.set(chunk, budgetOf(chunk));
      const block = chunk.getHeaders();
      if (block.length <= MAX_HEADER_BLOCK) return void out.push(block);
      omitted |= OMITTED.headers;
      out.push(boundedHeaders(chunk, block));
      return;
    }
    const budget = chunk.type === 'body' ? budgets.get(chunk.node) : null;
    if (!budget) return void out.push(chunk.value);
    if (chunk.value.length <= left[budget]) {
      left[budget] -= chunk.value.length;
      return void out.push(chunk.value);
    }
    // Cut at the end of a line within what is left, so an encoded line is never split.
    const cut = left[budget] > 0 ? chunk.value.lastIndexOf(0x0a, left[budget] - 1) + 1 : 0;
    if (cut > 0) out.push(chunk.value.subarray(0, cut));
    left[budget] = 0;
    omitted |= budget === 'html' ? OMITTED.html : OMITTED.text;
  };
  // Without the splitter's own limits: the views' are applied here. Once the parts are counted out, the rest of the
  // message is not read.
  const { Splitter } = await libs();
  const splitter = new Splitter({ maxHeadSize: Number.POSITIVE_INFINITY, maxChildNodes: Number.POSITIVE_INFINITY });
  await pipeline(
    function* slices() {
      for (let at = 0; at < raw.length && !stopped; at += SLICE) yield raw.subarray(at, at + SLICE);
    },
    splitter,
    async (chunks: AsyncIterable<SplitChunk>) => {
      for await (const chunk of chunks) {
        if (!stopped) take(chunk);
      }
    },
  );
  return { raw: omitted ? Buffer.concat(out) : raw, omitted };
}

/** A caught message's body as its views show it. */
export interface ViewBody {
  text: string | null;
  html: string | null;
  attachments: { filename: string | null; content_type: string; size: number; content_id: string | null }[];
  /** What the view leaves out (`OMITTED` bits). */
  omitted: number;
}

interface Parsed {
  text: string | null;
  html: string | null;
  attachments: { filename?: string; contentType: string; size: number; contentId?: string; content: Buffer | null }[];
}

/**
 * mailparser's reading of a message, each attachment's bytes counted as they stream past and only attachment
 * `keep`'s kept (none by default): a message's view needs their sizes, a download one of them.
 */
async function parse(raw: Buffer, keep = -1): Promise<Parsed> {
  const { MailParser } = (await libs()).mailparser;
  return new Promise((resolve, reject) => {
    // The text of a message without a text part is read from its HTML below (htmlText), not by mailparser's
    // html-to-text, which took 20 s over a megabyte of nested tags and then failed.
    const parser = new MailParser({ skipHtmlToText: true, skipTextToHtml: true, skipImageLinks: true });
    const out: Parsed = { text: null, html: null, attachments: [] };
    parser.on('data', (data) => {
      if (data.type === 'text') {
        out.text = data.text ?? null;
        out.html = typeof data.html === 'string' ? data.html : null;
        return;
      }
      const kept: Buffer[] | null = out.attachments.length === keep ? [] : null;
      const entry = { ...data, size: 0, content: null as Buffer | null };
      out.attachments.push(entry);
      data.content.on('data', (chunk: Buffer) => kept?.push(chunk));
      data.content.on('end', () => {
        // The size is counted once the content has streamed past.
        entry.size = data.size;
        data.release();
        if (!kept) return;
        // The attachment wanted is read: the rest of the message is not.
        entry.content = Buffer.concat(kept);
        resolve(out);
        parser.destroy();
      });
    });
    parser.once('end', () => resolve(out));
    parser.on('error', reject);
    parser.end(raw);
  });
}

/** The text, HTML and attachments (described) of a message, as its view shows them. */
export async function readBody(raw: Buffer): Promise<ViewBody> {
  const source = await viewSource(raw).catch(() => null);
  const parsed = source ? await parse(source.raw).catch(() => null) : null;
  if (!source || !parsed) return { text: null, html: null, attachments: [], omitted: OMITTED.unreadable };
  return {
    // The words of the HTML when there is no text part: what the search and the preview line read too.
    text: parsed.text || (parsed.html !== null ? htmlText(parsed.html) : parsed.text),
    html: parsed.html,
    attachments: parsed.attachments.map((a) => ({
      filename: a.filename ?? null,
      content_type: a.contentType,
      size: a.size,
      content_id: a.contentId ? a.contentId.replace(/^<|>$/g, '') : null,
    })),
    omitted: source.omitted,
  };
}

/** The HTML part as the HTML view shows it, `cid:` images inlined as data URLs; null when it has none (or is unreadable). */
export async function readHtml(raw: Buffer): Promise<string | null> {
  const source = await viewSource(raw).catch(() => null);
  if (!source) return null;
  const { simpleParser } = (await libs()).mailparser;
  const parsed = await simpleParser(source.raw, { skipHtmlToText: true, skipTextToHtml: true }).catch(() => null);
  return typeof parsed?.html === 'string' ? parsed.html : null;
}

/** Attachment `n` (from 0, in the order of the view) with its content; null when the view has no such attachment. */
export async function readAttachment(
  raw: Buffer,
  n: number,
): Promise<{ filename: string | null; contentType: string; content: Buffer } | null> {
  const source = await viewSource(raw).catch(() => null);
  const parsed = source ? await parse(source.raw, n).catch(() => null) : null;
  const a = parsed?.attachments[n];
  return a?.content ? { filename: a.filename ?? null, contentType: a.contentType, content: a.content } : null;
}
