// The fast path of the nodemailer seam (nodemailer.ts): a message's MIME written in one synchronous pass from the tree
// nodemailer's composer lays out, byte for byte what nodemailer's own streaming build writes (MimeNode#build, a stream
// pipeline per part, encoders, pass-throughs and a setImmediate per step, cost more than twice the work itself), into
// one Buffer of the message's size with the base64 of attachments written straight into it. It reads MimeNode's private
// fields and methods (Node below) and uses nodemailer's quoted-printable encoder (`lib/qp`), as the version nodemailer.ts
// pins has them; missingParts() is the seam's probe of them.
import { createRequire } from 'node:module';
import type MailComposer from 'nodemailer/lib/mail-composer';
import type MimeNode from 'nodemailer/lib/mime-node';
import type * as Qp from 'nodemailer/lib/qp';
import type Mail from 'nodemailer/lib/mailer/index.js';
import { once } from 'node:events';
import { crlfLines } from '../dkim-sign.js';

// nodemailer's composer is loaded by the first message composed (on the compose thread, under `svc serve`), not with
// the server.
const require = createRequire(import.meta.url);
let composer: { MailComposer: typeof MailComposer; qp: typeof Qp } | undefined;
const nodemailer = () =>
  (composer ??= {
    MailComposer: require('nodemailer/lib/mail-composer') as typeof MailComposer,
    qp: require('nodemailer/lib/qp') as typeof Qp,
  });

/** The parts of nodemailer's MimeNode that its own stream() reads and its type declarations leave out. */
type Node = MimeNode & {
  buildHeaders(): string;
  getTransferEncoding(): string | false;
  _raw: unknown;
  _transforms: unknown[];
  _processFuncs: unknown[];
};

/** Whether every node of the tree holds its content in memory (a string or a Buffer), nothing to read or fetch. */
function inMemory(node: Node): boolean {
  const c = node.content;
  return (
    !node._raw &&
    !node._transforms.length &&
    !node._processFuncs.length &&
    !node.newline &&
    (c === undefined || c === '' || typeof c === 'string' || Buffer.isBuffer(c)) &&
    (node.childNodes as Node[]).every(inMemory)
  );
}

/** A stretch of the message: bytes as they are, or bytes to write in base64. */
type Part = Buffer | { base64: Buffer[] };

/**
 * nodemailer's quoted-printable encoder takes its input 64 KiB at a time (qp.Encoder, ENCODE_SLICE_SIZE): text up to
 * that long comes out as one `wrap(encode())`, longer text as the encoder writes it.
 */
const QP_SLICE = 64 * 1024;

const isText = (node: Node) =>
  /^text\//i.test(String(node.getHeader('Content-Type') ?? '')) && !node.getHeader('Content-Transfer-Encoding');

/**
 * The transfer encoding nodemailer gives a text (MimeNode#getTransferEncoding for content given as bytes, which it
 * reads as a string to count: quoted-printable when the text has more Latin letters than control characters and
 * characters past ASCII, counted in UTF-16 units; else base64), counted on its UTF-8 bytes instead, so that a 35 MB
 * text is not decoded into a string of twice its size to choose. compose.test.ts holds it to nodemailer's choice.
 */
function textEncodingOf(bytes: Buffer): 'quoted-printable' | 'base64' {
  let latin = 0;
  let other = 0;
  for (let i = 0; i < bytes.length; i++) {
    const b = bytes[i]!;
    // A character past ASCII counts once at its first byte; one of four bytes is two UTF-16 units.
    if (b >= 0x80) other += b >= 0xf0 ? 2 : b >= 0xc0 ? 1 : 0;
    else if (b <= 0x08 || b === 0x0b || b === 0x0c || (b >= 0x0e && b <= 0x1f)) other++;
    else if ((b >= 0x41 && b <= 0x5a) || (b >= 0x61 && b <= 0x7a)) latin++;
  }
  return other < latin ? 'quoted-printable' : 'base64';
}

/**
 * The quoted-printable of every text longer than QP_SLICE in the tree, by node (given as a string or as its UTF-8
 * bytes, which nodemailer treats alike past 128 KiB: compose.test.ts): written by nodemailer's own encoder,
 * in lines of 76, a slice at a time, so a 35 MB text is never held as a whole encoded string and then wrapped into
 * another (several copies of it, each larger than it, on the compose thread).
 */
async function longText(node: Node, out = new Map<Node, Buffer[]>()): Promise<Map<Node, Buffer[]>> {
  const c = node.content as string | Buffer | undefined;
  // A string's UTF-8 takes at most three bytes a character: a short one is not measured.
  const long = !!c && c.length > QP_SLICE / 3 && (Buffer.isBuffer(c) ? c.length : Buffer.byteLength(c)) > QP_SLICE;
  const encoding = long && (Buffer.isBuffer(c) && isText(node) ? textEncodingOf(c) : node.getTransferEncoding());
  // Set now as buildHeaders() would, which then does not work it out again (for bytes, from their text as a string).
  if (encoding) node.setHeader('Content-Transfer-Encoding', encoding);
  if (c && encoding === 'quoted-printable') {
    // The encoder's lines come out a slice at a time, each in a small Buffer; they are gathered into blocks of 1 MiB
    // as they come, so the small ones are freed and their memory used again, not hundreds of them held at once (the
    // C library keeps such memory for the thread, resident, after it is freed).
    const blocks: Buffer[] = [];
    let lines: Buffer[] = [];
    let length = 0;
    const gather = () => {
      if (length) blocks.push(Buffer.concat(lines, length));
      lines = [];
      length = 0;
    };
    const encoder = new (nodemailer().qp.Encoder)({ lineLength: 76 });
    encoder.on('data', (chunk: Buffer) => {
      lines.push(chunk);
      length += chunk.length;
      if (length >= 1024 * 1024) gather();
    });
    const ended = once(encoder, 'end');
    encoder.end(Buffer.isBuffer(c) ? c : Buffer.from(c));
    await ended;
    gather();
    out.set(node, blocks);
  }
  for (const child of node.childNodes as Node[]) await longText(child, out);
  return out;
}

/**
 * Lists the stretches of a node the way MimeNode#stream writes them (headers, content in its transfer encoding, then
 * the children of a multipart), in one synchronous pass: nodemailer's stream pipeline per node (encoders,
 * pass-throughs, a setImmediate per step) cost more than twice the work itself. Tested byte for byte against
 * nodemailer's build(). `pieces` maps a stand-in content to the pieces it stands for, `encoded` a node to its
 * quoted-printable written already (longText); with `crlf`, every line ends in CRLF (what a DKIM signature covers:
 * see dkimSign).
 */
function serialize(
  node: Node,
  out: Part[],
  pieces: Map<unknown, Buffer[]>,
  encoded: Map<Node, Buffer[]>,
  crlf: boolean,
): void {
  const bytes = (b: Buffer) => (crlf ? crlfLines(b) : b);
  out.push(bytes(Buffer.from(`${node.buildHeaders()}\r\n\r\n`)));
  const c = node.content as string | Buffer | undefined;
  if (c) {
    // buildHeaders() has just worked the encoding out (getTransferEncoding scans the content) and set it as a header.
    const encoding = node.getHeader('Content-Transfer-Encoding');
    // base64.Encoder (written by writeBase64) and qp.Encoder (for text, the only kind that gets quoted-printable; up
    // to QP_SLICE, one wrap(encode()), longer ones written by the encoder itself: longText) write exactly this.
    const qpLines = encoding === 'quoted-printable' ? encoded.get(node) : undefined;
    if (encoding === 'base64') out.push({ base64: pieces.get(c) ?? [Buffer.isBuffer(c) ? c : Buffer.from(c)] });
    // Each of the encoder's chunks, and so each block of them, ends with a whole line: a CR and its LF are never apart.
    else if (qpLines) for (const chunk of qpLines) out.push(bytes(chunk));
    else if (encoding === 'quoted-printable') out.push(bytes(quotedPrintable(c)));
    else out.push(bytes(Buffer.isBuffer(c) ? c : Buffer.from(c)));
  }
  if (node.multipart) {
    (node.childNodes as Node[]).forEach((child, i) => {
      out.push(Buffer.from(`${i ? '\r\n' : ''}--${node.boundary}\r\n`));
      serialize(child, out, pieces, encoded, crlf);
    });
    out.push(Buffer.from(`\r\n--${node.boundary}--\r\n`));
  }
}

const ALPHABET = Buffer.from('ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/', 'latin1');
/** Quoted-printable as nodemailer's qp.Encoder writes it: lines of at most 76 characters. */
function quotedPrintable(c: string | Buffer): Buffer {
  const { qp } = nodemailer();
  return Buffer.from(qp.wrap(qp.encode(c), 76), 'latin1');
}

/** nodemailer's base64 line: 76 characters (RFC 2045 section 6.8), lines joined by CRLF, none after the last. */
const LINE = 76;

/** The length of `n` bytes in base64 as written by writeBase64. */
function base64Length(n: number): number {
  const chars = Math.ceil(n / 3) * 4;
  return chars && chars + 2 * (Math.ceil(chars / LINE) - 1);
}

/**
 * Writes the base64 of `pieces` (taken one after the other) into `out` at `pos`, wrapped as nodemailer wraps it;
 * returns where it ended. Straight into the message's memory: the encoded text, then the wrapped text and then its
 * bytes were three copies of the whole attachment, each larger than it.
 */
function writeBase64(pieces: Buffer[], out: Buffer, pos: number): number {
  let column = 0;
  let group = 0; // the bytes of a group of three begun at the end of a piece
  let grouped = 0;
  const put = (v: number, chars: number) => {
    if (column === LINE) {
      out[pos++] = 0x0d;
      out[pos++] = 0x0a;
      column = 0;
    }
    out[pos] = ALPHABET[(v >> 18) & 63]!;
    out[pos + 1] = ALPHABET[(v >> 12) & 63]!;
    out[pos + 2] = chars > 2 ? ALPHABET[(v >> 6) & 63]! : 0x3d;
    out[pos + 3] = chars > 3 ? ALPHABET[v & 63]! : 0x3d;
    pos += 4;
    column += 4;
  };
  for (const piece of pieces) {
    const n = piece.length;
    let i = 0;
    while (grouped && grouped < 3 && i < n) {
      group = (group << 8) | piece[i++]!;
      grouped++;
    }
    if (grouped === 3) {
      put(group, 4);
      grouped = group = 0;
    }
    for (; i + 3 <= n; i += 3) {
      if (column === LINE) {
        out[pos++] = 0x0d;
        out[pos++] = 0x0a;
        column = 0;
      }
      const v = (piece[i]! << 16) | (piece[i + 1]! << 8) | piece[i + 2]!;
      out[pos] = ALPHABET[v >> 18]!;
      out[pos + 1] = ALPHABET[(v >> 12) & 63]!;
      out[pos + 2] = ALPHABET[(v >> 6) & 63]!;
      out[pos + 3] = ALPHABET[v & 63]!;
      pos += 4;
      column += 4;
    }
    for (; i < n; i++) {
      group = (group << 8) | piece[i]!;
      grouped++;
    }
  }
  if (grouped) put(group << (8 * (3 - grouped)), grouped + 1);
  return pos;
}

const lengthOf = (p: Part) =>
  Buffer.isBuffer(p) ? p.length : base64Length(p.base64.reduce((n, b) => n + b.length, 0));

/**
 * Writes the parts into one Buffer with `room` bytes left free before them (where a signature goes without copying
 * the message), ending the message with a line break as nodemailer's last stage does. Returns the message: a view
 * that starts `room` bytes into memory of its own.
 */
function writeParts(parts: Part[], room: number): Buffer {
  let last = 0;
  for (const p of parts) {
    if (!lengthOf(p)) continue;
    last = Buffer.isBuffer(p) ? p[p.length - 1]! : 0x3d;
  }
  const ending = last === 0x0a ? '' : last === 0x0d ? '\n' : '\r\n';
  const size = parts.reduce((n, p) => n + lengthOf(p), 0) + ending.length;
  const out = Buffer.allocUnsafeSlow(room + size);
  let pos = room;
  for (const p of parts) pos = Buffer.isBuffer(p) ? pos + p.copy(out, pos) : writeBase64(p.base64, out, pos);
  out.write(ending, pos, 'latin1');
  return out.subarray(room);
}

/**
 * Builds with nodemailer's composer, written in one pass when all of it is in memory. `pieces` stand in for attachment
 * contents (compose.ts, ComposeRequest); with `crlf`, every line ends in CRLF; `room` bytes are kept free before the
 * message when it is written here (the room it got is returned with it).
 */
export async function writeMime(
  mail: Mail.Options,
  pieces: (Buffer[] | undefined)[] | undefined,
  crlf: boolean,
  room: number,
): Promise<{ mime: Buffer; room: number }> {
  const standIns = new Map<unknown, Buffer[]>();
  const attachments = (mail.attachments ?? []).map((a, i) => {
    const list = pieces?.[i];
    if (!list) return a;
    // A message/* attachment is not encoded: nodemailer reads its bytes to label them 7bit or 8bit.
    if (/^message\//i.test(a.contentType ?? '')) return { ...a, content: Buffer.concat(list) };
    const standIn = Buffer.alloc(0);
    standIns.set(standIn, list);
    return { ...a, content: standIn };
  });
  const root = new (nodemailer().MailComposer)({ ...mail, attachments }).compile() as Node;
  if (!inMemory(root)) {
    // Content to read or fetch (never a stand-in: those are in memory): nodemailer's own build.
    const built = await root.build();
    return { mime: crlf ? crlfLines(built) : built, room: 0 };
  }
  const parts: Part[] = [];
  serialize(root, parts, standIns, await longText(root), crlf);
  return { mime: writeParts(parts, room), room };
}

/**
 * The first private part of nodemailer this file uses that `lib` lacks (`MimeNode#_processFuncs`), or null: the
 * quoted-printable encoder's functions, and MimeNode's methods and fields, looked for on the tree of a small message.
 */
export function missingParts(lib: { MailComposer: unknown; qp: unknown }): string | null {
  const qp = lib.qp as Record<string, unknown> | undefined;
  for (const name of ['Encoder', 'encode', 'wrap']) if (typeof qp?.[name] !== 'function') return `qp.${name}`;
  if (typeof lib.MailComposer !== 'function') return 'lib/mail-composer';
  const root = new (lib.MailComposer as typeof MailComposer)({
    text: 'probe',
    attachments: [{ filename: 'probe.bin', content: Buffer.from('probe') }],
  }).compile() as unknown as Record<string, unknown>;
  const methods = ['buildHeaders', 'getTransferEncoding', 'getHeader', 'setHeader', 'build'];
  for (const name of methods) if (typeof root[name] !== 'function') return `MimeNode#${name}`;
  for (const name of ['_transforms', '_processFuncs', 'childNodes']) {
    if (!Array.isArray(root[name])) return `MimeNode#${name}`;
  }
  if (root._raw !== false) return 'MimeNode#_raw';
  // As serialize() reads them: once buildHeaders() has set them.
  if (typeof (root.buildHeaders as () => unknown).call(root) !== 'string') return 'MimeNode#buildHeaders';
  if (typeof root.multipart !== 'string' || typeof root.boundary !== 'string') return 'MimeNode#multipart, #boundary';
  const leaf = (root.childNodes as Record<string, unknown>[])[1];
  if (!leaf || !Buffer.isBuffer(leaf.content)) return 'MimeNode#content';
  return null;
}
