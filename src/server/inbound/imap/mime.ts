// The MIME structure of one message, as IMAP's FETCH needs it (RFC 3501 sections 6.4.5 and 7.4.2): the byte ranges
// of every part's header and body, found by splitting on boundaries, never decoding a body. ENVELOPE, BODYSTRUCTURE
// and BODY[section] are written from these ranges. mailparser decodes a message for reading but keeps no part tree,
// hence this small splitter; it holds one message at a time (the one being fetched).
import addressparser from 'nodemailer/lib/addressparser/index.js';
import { imapString } from './parser.js';

export interface HeaderField {
  /** The name as written. */
  name: string;
  /** The value unfolded, undecoded. */
  value: string;
  /** The field's bytes, folding and line break included. */
  raw: Buffer;
}

export interface MimeNode {
  /** The part's header block, the blank line after it included. */
  header: Buffer;
  fields: HeaderField[];
  /** The part's body, undecoded. */
  body: Buffer;
  type: string;
  subtype: string;
  params: [string, string][];
  children: MimeNode[];
  /** For message/rfc822: the message it carries. */
  message: MimeNode | null;
}

/** Splits `buf` into its header block (blank line included) and body. */
function splitHead(buf: Buffer): { header: Buffer; body: Buffer } {
  if (buf[0] === 10) return { header: buf.subarray(0, 1), body: buf.subarray(1) };
  if (buf[0] === 13 && buf[1] === 10) return { header: buf.subarray(0, 2), body: buf.subarray(2) };
  for (let i = buf.indexOf(10); i >= 0 && i < buf.length; i = buf.indexOf(10, i + 1)) {
    if (buf[i + 1] === 10) return { header: buf.subarray(0, i + 2), body: buf.subarray(i + 2) };
    if (buf[i + 1] === 13 && buf[i + 2] === 10) return { header: buf.subarray(0, i + 3), body: buf.subarray(i + 3) };
  }
  return { header: buf, body: buf.subarray(buf.length) };
}

/** The header fields of a header block, in order. */
export function parseFields(header: Buffer): HeaderField[] {
  const out: HeaderField[] = [];
  let start = -1;
  let i = 0;
  const flush = (end: number) => {
    if (start < 0) return;
    const raw = header.subarray(start, end);
    const text = raw.toString('utf8');
    const colon = text.indexOf(':');
    if (colon > 0) {
      out.push({
        name: text.slice(0, colon).trim(),
        value: text
          .slice(colon + 1)
          .replace(/\r?\n[ \t]/g, ' ')
          .replace(/\r?\n$/, '')
          .trim(),
        raw,
      });
    }
    start = -1;
  };
  while (i < header.length) {
    let lf = header.indexOf(10, i);
    if (lf < 0) lf = header.length - 1;
    const c = header[i];
    const blank = c === 10 || (c === 13 && header[i + 1] === 10);
    if (blank) {
      flush(i);
      break;
    }
    if (c !== 32 && c !== 9) {
      flush(i);
      start = i;
    }
    i = lf + 1;
  }
  flush(i);
  return out;
}

const fieldOf = (fields: HeaderField[], name: string): string | null =>
  fields.find((f) => f.name.toLowerCase() === name)?.value ?? null;

/** A structured header value's main token and its parameters (RFC 2045, RFC 2231 continuations joined). */
export function parseParams(value: string): { main: string; params: [string, string][] } {
  const parts: string[] = [];
  let cur = '';
  let quoted = false;
  for (let i = 0; i < value.length; i++) {
    const ch = value[i]!;
    if (quoted) {
      if (ch === '\\' && i + 1 < value.length) cur += value[++i];
      else if (ch === '"') quoted = false;
      else cur += ch;
    } else if (ch === '"') quoted = true;
    else if (ch === ';') {
      parts.push(cur);
      cur = '';
    } else cur += ch;
  }
  parts.push(cur);
  const main = (parts.shift() ?? '').trim();
  const raw = new Map<string, string>();
  for (const p of parts) {
    const eq = p.indexOf('=');
    if (eq < 0) continue;
    raw.set(p.slice(0, eq).trim().toLowerCase(), p.slice(eq + 1).trim());
  }
  const params: [string, string][] = [];
  const done = new Set<string>();
  for (const [k] of raw) {
    const base = k.replace(/\*(\d+)?\*?$/, '');
    if (done.has(base)) continue;
    done.add(base);
    if (raw.has(base)) {
      params.push([base, raw.get(base)!]);
      continue;
    }
    // RFC 2231: name*0*=utf-8''…, name*1*=…, or name*=utf-8''…
    let joined = '';
    let encoded = false;
    const single = raw.get(`${base}*`);
    if (single !== undefined) {
      joined = single;
      encoded = true;
    } else {
      for (let n = 0; ; n++) {
        const plain = raw.get(`${base}*${n}`);
        const enc = raw.get(`${base}*${n}*`);
        if (plain === undefined && enc === undefined) break;
        if (enc !== undefined) encoded = true;
        joined += enc ?? plain;
      }
    }
    if (encoded) {
      const m = /^([^']*)'[^']*'(.*)$/.exec(joined);
      if (m) {
        try {
          const bytes = Buffer.from(
            m[2]!.replace(/%([0-9a-fA-F]{2})/g, (_x, h: string) => String.fromCharCode(Number.parseInt(h, 16))),
            'latin1',
          );
          joined = new TextDecoder(m[1] || 'utf-8').decode(bytes);
        } catch {
          joined = m[2]!;
        }
        // A decoded value goes back out as an encoded word, the form every client reads.
        if (/[^\x20-\x7e]/.test(joined)) joined = `=?utf-8?B?${Buffer.from(joined).toString('base64')}?=`;
      }
    }
    params.push([base, joined]);
  }
  return { main, params };
}

/** Parses the entity in `buf`; `defaultType` is text/plain, or message/rfc822 inside multipart/digest. */
export function parseMime(buf: Buffer, defaultType = 'text/plain', depth = 0): MimeNode {
  const { header, body } = splitHead(buf);
  const fields = parseFields(header);
  const ct = parseParams(fieldOf(fields, 'content-type') ?? defaultType);
  let [type = 'text', subtype = 'plain'] = ct.main
    .toLowerCase()
    .split('/')
    .map((s) => s.trim());
  if (!type || !subtype) [type, subtype] = defaultType.split('/') as [string, string];
  let params = ct.params;
  if (!fieldOf(fields, 'content-type') && type === 'text') params = [['charset', 'us-ascii']];
  const node: MimeNode = { header, fields, body, type, subtype, params, children: [], message: null };
  if (depth > 20) return node;
  const boundary = params.find(([k]) => k === 'boundary')?.[1];
  if (type === 'multipart' && boundary) {
    node.children = splitMultipart(body, boundary).map((p) =>
      parseMime(p, subtype === 'digest' ? 'message/rfc822' : 'text/plain', depth + 1),
    );
  } else if (type === 'message' && subtype === 'rfc822') {
    node.message = parseMime(body, 'text/plain', depth + 1);
  }
  return node;
}

/** The parts of a multipart body: between boundary lines, the line break before each delimiter left out. */
function splitMultipart(body: Buffer, boundary: string): Buffer[] {
  const delim = Buffer.from(`--${boundary}`);
  const parts: Buffer[] = [];
  let partStart = -1;
  let lineStart = 0;
  while (lineStart <= body.length) {
    let lf = body.indexOf(10, lineStart);
    if (lf < 0) lf = body.length;
    if (body[lineStart] === 45 && body.subarray(lineStart, lineStart + delim.length).equals(delim)) {
      const rest = body
        .subarray(lineStart + delim.length, lf)
        .toString('latin1')
        .trimEnd();
      if (rest === '' || rest === '--') {
        if (partStart >= 0) {
          let end = lineStart;
          if (end > partStart && body[end - 1] === 10) end--;
          if (end > partStart && body[end - 1] === 13) end--;
          parts.push(body.subarray(partStart, Math.max(partStart, end)));
        }
        if (rest === '--') return parts;
        partStart = lf + 1;
      }
    }
    lineStart = lf + 1;
  }
  if (partStart >= 0 && partStart < body.length) parts.push(body.subarray(partStart));
  return parts;
}

const countLines = (b: Buffer): number => {
  let n = 0;
  for (let i = b.indexOf(10); i >= 0; i = b.indexOf(10, i + 1)) n++;
  if (b.length > 0 && b[b.length - 1] !== 10) n++;
  return n;
};

type Out = string | Buffer;
const nstr = (s: string | null | undefined): Out => imapString(s ?? null);

/** Joins strings and literals into one IMAP value. */
export function join(items: Out[], sep = ' '): Out {
  if (items.every((i) => typeof i === 'string')) return items.join(sep);
  const bufs: Buffer[] = [];
  items.forEach((it, k) => {
    if (k > 0) bufs.push(Buffer.from(sep));
    bufs.push(typeof it === 'string' ? Buffer.from(it) : it);
  });
  return Buffer.concat(bufs);
}
const list = (items: Out[]): Out => join(['(', join(items), ')'], '');

function addressList(value: string | null): Out {
  if (!value) return 'NIL';
  const parsed = addressparser(value);
  if (parsed.length === 0) return 'NIL';
  const one = (a: { name: string; address: string }): Out => {
    const at = a.address.lastIndexOf('@');
    const local = at < 0 ? a.address : a.address.slice(0, at);
    const host = at < 0 ? null : a.address.slice(at + 1);
    return list([nstr(a.name || null), 'NIL', nstr(local || null), nstr(host)]);
  };
  const items: Out[] = [];
  for (const a of parsed) {
    if ('group' in a && Array.isArray(a.group)) {
      items.push(list(['NIL', 'NIL', nstr(a.name), 'NIL']));
      for (const m of a.group as { name: string; address: string }[]) items.push(one(m));
      items.push('(NIL NIL NIL NIL)');
    } else items.push(one(a as { name: string; address: string }));
  }
  return join(['(', join(items, ''), ')'], '');
}

/** ENVELOPE of a message whose header fields are `fields`. */
export function envelope(fields: HeaderField[]): Out {
  const f = (n: string) => fieldOf(fields, n);
  const from = f('from');
  return list([
    nstr(f('date')),
    nstr(f('subject')),
    addressList(from),
    addressList(f('sender') ?? from),
    addressList(f('reply-to') ?? from),
    addressList(f('to')),
    addressList(f('cc')),
    addressList(f('bcc')),
    nstr(f('in-reply-to')),
    nstr(f('message-id')),
  ]);
}

const paramList = (params: [string, string][]): Out =>
  params.length === 0 ? 'NIL' : list(params.flatMap(([k, v]) => [nstr(k.toUpperCase()), nstr(v)]));

function disposition(fields: HeaderField[]): Out {
  const d = fieldOf(fields, 'content-disposition');
  if (!d) return 'NIL';
  const p = parseParams(d);
  return list([nstr(p.main.toUpperCase()), paramList(p.params)]);
}

function language(fields: HeaderField[]): Out {
  const l = fieldOf(fields, 'content-language');
  if (!l) return 'NIL';
  const langs = l
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  return langs.length === 1 ? nstr(langs[0]) : list(langs.map((s) => nstr(s)));
}

/** BODYSTRUCTURE (`extended`) or BODY of a node. */
export function bodyStructure(node: MimeNode, extended: boolean): Out {
  if (node.type === 'multipart') {
    const kids = node.children.length
      ? node.children.map((c) => bodyStructure(c, extended))
      : // An empty multipart still needs one part to be valid IMAP.
        [list(['"TEXT"', '"PLAIN"', '("CHARSET" "US-ASCII")', 'NIL', 'NIL', '"7BIT"', '0', '0'])];
    const items: Out[] = [join(kids, ''), nstr(node.subtype.toUpperCase())];
    if (extended) {
      items.push(
        paramList(node.params),
        disposition(node.fields),
        language(node.fields),
        nstr(fieldOf(node.fields, 'content-location')),
      );
    }
    return list(items);
  }
  const f = (n: string) => fieldOf(node.fields, n);
  const items: Out[] = [
    nstr(node.type.toUpperCase()),
    nstr(node.subtype.toUpperCase()),
    paramList(node.params),
    nstr(f('content-id')),
    nstr(f('content-description')),
    nstr((f('content-transfer-encoding') ?? '7bit').toUpperCase()),
    String(node.body.length),
  ];
  if (node.type === 'message' && node.subtype === 'rfc822' && node.message) {
    items.push(envelope(node.message.fields), bodyStructure(node.message, extended), String(countLines(node.body)));
  } else if (node.type === 'text') {
    items.push(String(countLines(node.body)));
  }
  if (extended) {
    items.push(nstr(f('content-md5')), disposition(node.fields), language(node.fields), nstr(f('content-location')));
  }
  return list(items);
}

/** A BODY[section] request: the part path and what of it. */
export interface Section {
  path: number[];
  /** '' (the part's content, or the whole message), HEADER, TEXT, MIME, HEADER.FIELDS, HEADER.FIELDS.NOT. */
  what: '' | 'HEADER' | 'TEXT' | 'MIME' | 'HEADER.FIELDS' | 'HEADER.FIELDS.NOT';
  fields: string[];
}

/** The node a part path names; null when there is no such part. */
function partAt(root: MimeNode, path: number[]): MimeNode | null {
  let cur = root;
  let first = true;
  for (const n of path) {
    if (!first && cur.type === 'message' && cur.subtype === 'rfc822' && cur.message) cur = cur.message;
    first = false;
    if (cur.type === 'multipart') {
      const next = cur.children[n - 1];
      if (!next) return null;
      cur = next;
    } else if (n !== 1) return null;
  }
  return cur;
}

/** The bytes of `section` of the message `root` (an empty Buffer for a part that does not exist, as servers do). */
export function sectionBytes(root: MimeNode, whole: Buffer, s: Section): Buffer {
  if (s.path.length === 0 && s.what === '') return whole;
  const node = s.path.length ? partAt(root, s.path) : root;
  if (!node) return Buffer.alloc(0);
  if (s.what === '') return node.body;
  if (s.what === 'MIME') return node.header;
  // HEADER and TEXT of a part are those of the message it carries.
  const msg = s.path.length ? (node.type === 'message' && node.message ? node.message : null) : node;
  if (!msg) return Buffer.alloc(0);
  if (s.what === 'TEXT') return msg.body;
  if (s.what === 'HEADER') return msg.header;
  const names = new Set(s.fields.map((x) => x.toLowerCase()));
  const keep = msg.fields.filter((f) => names.has(f.name.toLowerCase()) === (s.what === 'HEADER.FIELDS'));
  return Buffer.concat([...keep.map((f) => f.raw), Buffer.from('\r\n')]);
}

/** Decodes RFC 2047 encoded words, for searching header text. */
export function decodeWords(s: string): string {
  return s.replace(
    /=\?([^?*]+)(?:\*[^?]*)?\?([bBqQ])\?([^?]*)\?=(\s+(?==\?))?/g,
    (_m, cs: string, enc: string, text: string) => {
      try {
        const bytes =
          enc.toUpperCase() === 'B'
            ? Buffer.from(text, 'base64')
            : Buffer.from(
                text
                  .replace(/_/g, ' ')
                  .replace(/=([0-9a-fA-F]{2})/g, (_x, h: string) => String.fromCharCode(parseInt(h, 16))),
                'latin1',
              );
        return new TextDecoder(cs).decode(bytes);
      } catch {
        return text;
      }
    },
  );
}

/** The text of a body decoded from its transfer encoding and charset, for searching. */
function decodedText(node: MimeNode): string {
  const enc = (fieldOf(node.fields, 'content-transfer-encoding') ?? '').toLowerCase();
  let bytes: Buffer = node.body;
  if (enc === 'base64') bytes = Buffer.from(node.body.toString('latin1'), 'base64');
  else if (enc === 'quoted-printable') {
    bytes = Buffer.from(
      node.body
        .toString('latin1')
        .replace(/=\r?\n/g, '')
        .replace(/=([0-9a-fA-F]{2})/g, (_x, h: string) => String.fromCharCode(parseInt(h, 16))),
      'latin1',
    );
  }
  const cs = node.params.find(([k]) => k === 'charset')?.[1] ?? 'utf-8';
  try {
    return new TextDecoder(cs).decode(bytes);
  } catch {
    return bytes.toString('latin1');
  }
}

/** The body text of a message for SEARCH BODY: its text parts decoded, joined. */
export function searchableBody(root: MimeNode): string {
  const out: string[] = [];
  const walk = (n: MimeNode) => {
    if (n.type === 'multipart') n.children.forEach(walk);
    else if (n.message) {
      out.push(n.message.fields.map((f) => decodeWords(f.value)).join('\n'));
      walk(n.message);
    } else if (n.type === 'text') out.push(decodedText(n));
  };
  walk(root);
  return out.join('\n');
}
