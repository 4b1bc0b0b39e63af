// FETCH (RFC 3501 sections 6.4.5 and 7.4.2): the data items a client asks for, parsed, and one message's answer
// written from its listing entry and, when a body item needs it, its source parsed by mime.ts.
import { bodyStructure, envelope, join, type MimeNode, parseMime, type Section, sectionBytes } from './mime.js';
import { ImapSyntaxError, type Tokens } from './parser.js';

export type FetchItem =
  | { kind: 'FLAGS' | 'UID' | 'RFC822.SIZE' | 'INTERNALDATE' | 'ENVELOPE' | 'BODYSTRUCTURE' | 'BODY' }
  | { kind: 'RFC822' | 'RFC822.HEADER' | 'RFC822.TEXT' }
  | { kind: 'SECTION'; peek: boolean; section: Section; label: string; partial: [number, number] | null };

const SIMPLE = new Set(['FLAGS', 'UID', 'RFC822.SIZE', 'INTERNALDATE', 'ENVELOPE', 'BODYSTRUCTURE', 'BODY']);
const MACROS: Record<string, string[]> = {
  ALL: ['FLAGS', 'INTERNALDATE', 'RFC822.SIZE', 'ENVELOPE'],
  FAST: ['FLAGS', 'INTERNALDATE', 'RFC822.SIZE'],
  FULL: ['FLAGS', 'INTERNALDATE', 'RFC822.SIZE', 'ENVELOPE', 'BODY'],
};

function parseSection(t: Tokens): { section: Section; label: string } {
  const path: number[] = [];
  let what: Section['what'] = '';
  const fields: string[] = [];
  let label = '';
  const first = t.take('atom');
  if (first) {
    const parts = first.v.toUpperCase().split('.');
    while (parts.length && /^\d+$/.test(parts[0]!)) {
      const n = Number(parts.shift());
      if (n < 1) throw new ImapSyntaxError('Part numbers start at 1');
      path.push(n);
    }
    const rest = parts.join('.');
    if (!['', 'HEADER', 'TEXT', 'MIME', 'HEADER.FIELDS', 'HEADER.FIELDS.NOT'].includes(rest)) {
      throw new ImapSyntaxError(`Unknown section: ${first.v}`);
    }
    if (rest === 'MIME' && path.length === 0) throw new ImapSyntaxError('MIME needs a part number');
    what = rest as Section['what'];
    label = first.v.toUpperCase();
    if (what === 'HEADER.FIELDS' || what === 'HEADER.FIELDS.NOT') {
      t.expect('(');
      while (!t.take(')')) fields.push(t.astring());
      if (fields.length === 0) throw new ImapSyntaxError('HEADER.FIELDS needs at least one field name');
      label += ` (${fields.map((f) => f.toUpperCase()).join(' ')})`;
    }
  }
  t.expect(']');
  return { section: { path, what, fields }, label };
}

function parseItem(t: Tokens): FetchItem {
  const name = t.atom().toUpperCase();
  if ((name === 'BODY' || name === 'BODY.PEEK') && t.take('[')) {
    const { section, label } = parseSection(t);
    let partial: [number, number] | null = null;
    const p = t.take('partial');
    if (p) {
      const m = /^(\d+)\.(\d+)$/.exec(p.v);
      if (!m || Number(m[2]) === 0) throw new ImapSyntaxError(`Invalid partial range <${p.v}>`);
      partial = [Number(m[1]), Number(m[2])];
    }
    return { kind: 'SECTION', peek: name === 'BODY.PEEK', section, label, partial };
  }
  if (SIMPLE.has(name)) return { kind: name as 'FLAGS' };
  if (name === 'RFC822' || name === 'RFC822.HEADER' || name === 'RFC822.TEXT') return { kind: name };
  throw new ImapSyntaxError(`Unknown fetch item: ${name}`);
}

/** The items of a FETCH after its sequence set; `uid`: a UID FETCH, which always answers UID. */
export function parseFetchItems(t: Tokens, uid: boolean): FetchItem[] {
  const items: FetchItem[] = [];
  if (t.take('(')) {
    while (!t.take(')')) items.push(parseItem(t));
    if (items.length === 0) throw new ImapSyntaxError('Empty fetch item list');
  } else {
    const peek = t.peek();
    const macro = peek?.t === 'atom' ? MACROS[peek.v.toUpperCase()] : undefined;
    if (macro) {
      t.next();
      for (const m of macro) items.push({ kind: m as 'FLAGS' });
    } else items.push(parseItem(t));
  }
  t.end();
  if (uid && !items.some((i) => i.kind === 'UID')) items.unshift({ kind: 'UID' });
  return items;
}

/** Whether the items need the message's source. */
export const needsSource = (items: FetchItem[]): boolean =>
  items.some((i) => !['FLAGS', 'UID', 'RFC822.SIZE', 'INTERNALDATE'].includes(i.kind));

/** Whether the items mark the message read (a body read without PEEK). */
export const setsSeen = (items: FetchItem[]): boolean =>
  items.some((i) => i.kind === 'RFC822' || i.kind === 'RFC822.TEXT' || (i.kind === 'SECTION' && !i.peek));

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/** An INTERNALDATE: `02-Dec-2026 11:37:08 +0000`. */
export function internalDate(ms: number): string {
  const d = new Date(ms);
  const p = (n: number) => String(n).padStart(2, '0');
  return `${p(d.getUTCDate())}-${MONTHS[d.getUTCMonth()]}-${d.getUTCFullYear()} ${p(d.getUTCHours())}:${p(
    d.getUTCMinutes(),
  )}:${p(d.getUTCSeconds())} +0000`;
}

export interface FetchMessage {
  seq: number;
  uid: number;
  size: number;
  receivedAt: number;
  flags: string[];
  /** The source, when needsSource. */
  source: Buffer | null;
}

/** One message's `* n FETCH (…)` line, as bytes to write. */
export function fetchResponse(m: FetchMessage, items: FetchItem[]): Buffer {
  let node: MimeNode | null = null;
  const src = m.source ?? Buffer.alloc(0);
  const mime = () => {
    node ??= parseMime(src);
    return node;
  };
  const out: (string | Buffer)[] = [];
  for (const it of items) {
    switch (it.kind) {
      case 'FLAGS':
        out.push(`FLAGS (${m.flags.join(' ')})`);
        break;
      case 'UID':
        out.push(`UID ${m.uid}`);
        break;
      case 'RFC822.SIZE':
        out.push(`RFC822.SIZE ${m.source ? m.source.length : m.size}`);
        break;
      case 'INTERNALDATE':
        out.push(`INTERNALDATE "${internalDate(m.receivedAt)}"`);
        break;
      case 'ENVELOPE':
        out.push(join(['ENVELOPE', envelope(mime().fields)]));
        break;
      case 'BODYSTRUCTURE':
        out.push(join(['BODYSTRUCTURE', bodyStructure(mime(), true)]));
        break;
      case 'BODY':
        out.push(join(['BODY', bodyStructure(mime(), false)]));
        break;
      case 'RFC822':
        out.push(join(['RFC822', literal(src)]));
        break;
      case 'RFC822.HEADER':
        out.push(join(['RFC822.HEADER', literal(mime().header)]));
        break;
      case 'RFC822.TEXT':
        out.push(join(['RFC822.TEXT', literal(mime().body)]));
        break;
      case 'SECTION': {
        // The whole message needs no parse.
        const whole = it.section.path.length === 0 && it.section.what === '';
        let bytes = whole ? src : sectionBytes(mime(), src, it.section);
        let name = `BODY[${it.label}]`;
        if (it.partial) {
          const [start, len] = it.partial;
          bytes = bytes.subarray(Math.min(start, bytes.length), Math.min(start + len, bytes.length));
          name += `<${start}>`;
        }
        out.push(join([name, literal(bytes)]));
        break;
      }
    }
  }
  const body = join(out);
  return Buffer.concat([
    Buffer.from(`* ${m.seq} FETCH (`),
    typeof body === 'string' ? Buffer.from(body) : body,
    Buffer.from(')\r\n'),
  ]);
}

/** Bytes always as a literal (a body may hold anything). */
function literal(b: Buffer): Buffer {
  return Buffer.concat([Buffer.from(`{${b.length}}\r\n`), b]);
}
