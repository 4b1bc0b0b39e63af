// The IMAP command reader and tokenizer (RFC 3501 section 9, LITERAL+ of RFC 7888): bytes in, whole commands out.
// A command is one line, or several joined by literals (`{n}` answered with `+`, `{n+}` sent without waiting). The
// reader holds at most one command of MAX_COMMAND_BYTES: a longer line, or a literal that would pass the cap, is
// skipped as it arrives (never buffered) and answered BAD, and the session goes on with the next command.

/** The most a command may hold, its literals included (a FETCH or SEARCH line of a big client stays far below). */
export const MAX_COMMAND_BYTES = 64 * 1024;

export type ReaderEvent =
  /** A whole command: its line(s) and literals, as sent, ending in its final line break. */
  | { type: 'command'; data: Buffer }
  /** A synchronizing literal was announced and may be sent: answer `+`. */
  | { type: 'continue' }
  /** A command that cannot be taken (too long, a literal refused): answer `tag status text`; it was skipped. */
  | { type: 'refuse'; tag: string; status: 'BAD' | 'NO'; text: string };

/** Whether a literal of `size` bytes may follow `head` (the command so far): null, or why not. */
export type LiteralCheck = (head: string, size: number) => { status: 'BAD' | 'NO'; text: string } | null;

const LITERAL_AT_END = /\{(\d{1,12})(\+?)\}\r?\n$/;

/** The tag a command starts with, read before its syntax is known (to answer even a command that cannot be parsed). */
export function tagOf(head: Buffer): string {
  const s = head.subarray(0, 64).toString('latin1');
  const m = /^([!#$&'+-[\]^-z|}~]+)[ \r\n]/.exec(s);
  return m && !m[1]!.includes('+') ? m[1]! : '*';
}

export class CommandReader {
  private parts: Buffer[] = [];
  private size = 0;
  /** Bytes of a literal still to come into the command. */
  private literalLeft = 0;
  /** Skipping a refused command: bytes of a literal to drop, then up to its end of line. */
  private skipping: null | { literal: number; tag: string; status: 'BAD' | 'NO'; text: string } = null;
  private pending: Buffer = Buffer.alloc(0);

  constructor(
    private readonly check: LiteralCheck = () => null,
    private readonly max = MAX_COMMAND_BYTES,
  ) {}

  /** Drops everything buffered (after STARTTLS: nothing sent in the clear may be taken as sent over TLS). */
  reset(): void {
    this.parts = [];
    this.size = 0;
    this.literalLeft = 0;
    this.skipping = null;
    this.pending = Buffer.alloc(0);
  }

  /** Takes `chunk` and returns what it completes, in order. */
  push(chunk: Buffer): ReaderEvent[] {
    const out: ReaderEvent[] = [];
    let buf = this.pending.length ? Buffer.concat([this.pending, chunk]) : chunk;
    this.pending = Buffer.alloc(0);
    while (buf.length > 0) {
      if (this.skipping) {
        const s = this.skipping;
        if (s.literal > 0) {
          const n = Math.min(s.literal, buf.length);
          s.literal -= n;
          buf = buf.subarray(n);
          continue;
        }
        const lf = buf.indexOf(10);
        if (lf < 0) {
          // Keep the tail that may be the start of a `{n+}` announcing a literal to skip.
          const brace = buf.lastIndexOf(123);
          this.pending = brace >= 0 && buf.length - brace < 20 ? Buffer.from(buf.subarray(brace)) : Buffer.alloc(0);
          return out;
        }
        const line = buf.subarray(0, lf + 1).toString('latin1');
        buf = buf.subarray(lf + 1);
        const m = LITERAL_AT_END.exec(line);
        if (m?.[2] === '+') {
          s.literal = Number(m[1]);
          continue;
        }
        this.skipping = null;
        out.push({ type: 'refuse', tag: s.tag, status: s.status, text: s.text });
        continue;
      }
      if (this.literalLeft > 0) {
        const n = Math.min(this.literalLeft, buf.length);
        this.parts.push(buf.subarray(0, n));
        this.size += n;
        this.literalLeft -= n;
        buf = buf.subarray(n);
        continue;
      }
      const lf = buf.indexOf(10);
      const piece = lf < 0 ? buf : buf.subarray(0, lf + 1);
      if (this.size + piece.length > this.max) {
        const tag = tagOf(Buffer.concat([...this.parts, piece]));
        this.parts = [];
        this.size = 0;
        this.skipping = {
          literal: 0,
          tag,
          status: 'BAD',
          text: `Command line too long (the limit is ${this.max} bytes)`,
        };
        if (lf >= 0) {
          // The line ends here: let the skipper see its end (and a `{n+}` on it).
          continue;
        }
        return out;
      }
      if (lf < 0) {
        this.parts.push(Buffer.from(buf));
        this.size += buf.length;
        return out;
      }
      this.parts.push(piece);
      this.size += piece.length;
      buf = buf.subarray(lf + 1);
      const lineText = piece.toString('latin1');
      const m = LITERAL_AT_END.exec(lineText);
      if (!m) {
        out.push({ type: 'command', data: Buffer.concat(this.parts, this.size) });
        this.parts = [];
        this.size = 0;
        continue;
      }
      const n = Number(m[1]);
      const plus = m[2] === '+';
      const head = Buffer.concat(this.parts, this.size);
      const refusal =
        this.size + n > this.max
          ? { status: 'BAD' as const, text: `Literal too large (a command may hold ${this.max} bytes)` }
          : this.check(head.toString('utf8'), n);
      if (refusal) {
        const tag = tagOf(head);
        this.parts = [];
        this.size = 0;
        if (plus) {
          // The client sends the literal without waiting: drop it, and the rest of its command.
          this.skipping = { literal: n, tag, ...refusal };
        } else {
          // Without a `+` the client sends no literal; the refusal ends the command.
          out.push({ type: 'refuse', tag, ...refusal });
        }
        continue;
      }
      this.literalLeft = n;
      if (!plus) out.push({ type: 'continue' });
    }
    return out;
  }
}

// ---- tokens ----

export type Token =
  | { t: 'atom'; v: string }
  | { t: 'string'; v: string; literal: boolean }
  | { t: '(' }
  | { t: ')' }
  | { t: '[' }
  | { t: ']' }
  | { t: 'partial'; v: string };

export class ImapSyntaxError extends Error {}

const ATOM_END = new Set([32, 40, 41, 91, 93, 34, 123, 60, 13, 10]);

/** The tokens of a whole command (CommandReader's `data`), literals read in place. */
export function tokenize(data: Buffer): Token[] {
  const out: Token[] = [];
  let i = 0;
  const n = data.length;
  while (i < n) {
    const c = data[i]!;
    if (c === 32 || c === 9) {
      i++;
    } else if (c === 13 || c === 10) {
      // Only a literal's line break may be inside a command; its final one ends it.
      i++;
    } else if (c === 40) {
      out.push({ t: '(' });
      i++;
    } else if (c === 41) {
      out.push({ t: ')' });
      i++;
    } else if (c === 91) {
      out.push({ t: '[' });
      i++;
    } else if (c === 93) {
      out.push({ t: ']' });
      i++;
    } else if (c === 60) {
      const end = data.indexOf(62, i);
      if (end < 0) throw new ImapSyntaxError('Unterminated partial range <…>');
      out.push({ t: 'partial', v: data.subarray(i + 1, end).toString('latin1') });
      i = end + 1;
    } else if (c === 34) {
      const bytes: number[] = [];
      i++;
      for (;;) {
        if (i >= n) throw new ImapSyntaxError('Unterminated quoted string');
        const d = data[i]!;
        if (d === 92 && i + 1 < n) {
          bytes.push(data[i + 1]!);
          i += 2;
        } else if (d === 34) {
          i++;
          break;
        } else if (d === 13 || d === 10) {
          throw new ImapSyntaxError('Line break inside a quoted string');
        } else {
          bytes.push(d);
          i++;
        }
      }
      out.push({ t: 'string', v: Buffer.from(bytes).toString('utf8'), literal: false });
    } else if (c === 123) {
      const end = data.indexOf(125, i);
      const m = end < 0 ? null : /^\{(\d+)\+?\}$/.exec(data.subarray(i, end + 1).toString('latin1'));
      if (!m) throw new ImapSyntaxError('Bad literal');
      let j = end + 1;
      if (data[j] === 13) j++;
      if (data[j] !== 10) throw new ImapSyntaxError('A literal must end its line');
      j++;
      const len = Number(m[1]);
      if (j + len > n) throw new ImapSyntaxError('Literal shorter than announced');
      out.push({ t: 'string', v: data.subarray(j, j + len).toString('utf8'), literal: true });
      i = j + len;
    } else {
      const start = i;
      while (i < n && !ATOM_END.has(data[i]!)) i++;
      out.push({ t: 'atom', v: data.subarray(start, i).toString('utf8') });
    }
  }
  return out;
}

/** A cursor over a command's tokens, with the grammar's small productions. */
export class Tokens {
  private i = 0;
  constructor(private readonly list: Token[]) {}

  get done(): boolean {
    return this.i >= this.list.length;
  }
  peek(): Token | undefined {
    return this.list[this.i];
  }
  next(): Token {
    const t = this.list[this.i++];
    if (!t) throw new ImapSyntaxError('Missing argument');
    return t;
  }
  /** The next token if it is `t` (taken), else undefined. */
  take<K extends Token['t']>(t: K): Extract<Token, { t: K }> | undefined {
    const tok = this.list[this.i];
    if (tok?.t === t) {
      this.i++;
      return tok as Extract<Token, { t: K }>;
    }
    return undefined;
  }
  expect<K extends Token['t']>(t: K): Extract<Token, { t: K }> {
    const tok = this.take(t);
    if (!tok) throw new ImapSyntaxError(`Expected ${t === 'atom' ? 'a word' : t === 'string' ? 'a string' : `"${t}"`}`);
    return tok;
  }
  atom(): string {
    return this.expect('atom').v;
  }
  /** An astring: an atom, a quoted string or a literal. */
  astring(): string {
    const t = this.next();
    if (t.t === 'atom' || t.t === 'string') return t.v;
    throw new ImapSyntaxError('Expected a string');
  }
  /** A string or NIL (as an atom). */
  nstring(): string | null {
    const t = this.next();
    if (t.t === 'string') return t.v;
    if (t.t === 'atom') return t.v.toUpperCase() === 'NIL' ? null : t.v;
    throw new ImapSyntaxError('Expected a string');
  }
  end(): void {
    if (!this.done) throw new ImapSyntaxError('Unexpected arguments at the end of the command');
  }
}

// ---- sequence sets ----

/** A sequence set's ranges; `*` is Infinity until resolved against a mailbox. */
export type SequenceSet = [number, number][];

export function parseSequenceSet(s: string): SequenceSet {
  if (!/^(\d+|\*)(:(\d+|\*))?(,(\d+|\*)(:(\d+|\*))?)*$/.test(s))
    throw new ImapSyntaxError(`Invalid sequence set: ${s}`);
  return s.split(',').map((r) => {
    const [a, b = a] = r.split(':') as [string, string?];
    const x = a === '*' ? Number.POSITIVE_INFINITY : Number(a);
    const y = b === '*' ? Number.POSITIVE_INFINITY : Number(b);
    if (x === 0 || y === 0) throw new ImapSyntaxError('0 is not a valid message number');
    return x <= y ? [x, y] : [y, x];
  });
}

/** Whether a sequence set given as text looks like one (a SEARCH key that is a set). */
export const isSequenceSet = (s: string): boolean => /^(\d+|\*)(:(\d+|\*))?(,(\d+|\*)(:(\d+|\*))?)*$/.test(s);

/** Whether `n` is in `set`, `*` standing for `star`. */
export function inSet(set: SequenceSet, n: number, star: number): boolean {
  for (const [a, b] of set) {
    const lo = Math.min(a === Number.POSITIVE_INFINITY ? star : a, b === Number.POSITIVE_INFINITY ? star : b);
    const hi = Math.max(a === Number.POSITIVE_INFINITY ? star : a, b === Number.POSITIVE_INFINITY ? star : b);
    if (n >= lo && n <= hi) return true;
  }
  return false;
}

// ---- output ----

/** A string as IMAP writes it: quoted when that is safe, else a literal. NIL for null. */
export function imapString(v: string | Buffer | null | undefined): string | Buffer {
  if (v === null || v === undefined) return 'NIL';
  const s = typeof v === 'string' ? v : v.toString('latin1');
  if (typeof v === 'string' && /^[\x20-\x7e]*$/.test(v) && v.length < 1000) {
    return `"${v.replace(/[\\"]/g, (c) => `\\${c}`)}"`;
  }
  if (typeof v !== 'string' && /^[\x20-\x7e]*$/.test(s) && s.length < 1000) {
    return `"${s.replace(/[\\"]/g, (c) => `\\${c}`)}"`;
  }
  const bytes = typeof v === 'string' ? Buffer.from(v, 'utf8') : v;
  return Buffer.concat([Buffer.from(`{${bytes.length}}\r\n`), bytes]);
}

/** A mailbox name in modified UTF-7 (RFC 3501 section 5.1.3), as a client sees it. */
export function encodeMailboxName(name: string): string {
  return name.replace(/&|[^\x20-\x7e]+/g, (run) => {
    if (run === '&') return '&-';
    const utf16 = Buffer.alloc(run.length * 2);
    for (let i = 0; i < run.length; i++) utf16.writeUInt16BE(run.charCodeAt(i), i * 2);
    return `&${utf16.toString('base64').replace(/=+$/, '').replace(/\//g, ',')}-`;
  });
}

/** A mailbox name a client sent, from modified UTF-7. */
export function decodeMailboxName(name: string): string {
  return name.replace(/&([^-]*)-/g, (_m, b64: string) => {
    if (b64 === '') return '&';
    const bytes = Buffer.from(b64.replace(/,/g, '/'), 'base64');
    let s = '';
    for (let i = 0; i + 1 < bytes.length; i += 2) s += String.fromCharCode(bytes.readUInt16BE(i));
    return s;
  });
}
