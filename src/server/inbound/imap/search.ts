// SEARCH (RFC 3501 section 6.4.4): the criteria parsed into a tree and matched against one message at a time. A key
// on the listing (flags, UID, sequence, size, arrival date) needs no source; a header or body key reads the message's
// source and parses it, one message at a time.
import { decodeWords, type MimeNode, parseMime, searchableBody } from './mime.js';
import { inSet, isSequenceSet, parseSequenceSet, type SequenceSet, ImapSyntaxError, type Tokens } from './parser.js';

export type SearchKey =
  | { k: 'all' }
  | { k: 'none' }
  | { k: 'seen'; v: boolean }
  | { k: 'deleted'; v: boolean }
  | { k: 'header'; name: string; value: string }
  | { k: 'body' | 'text'; value: string }
  | { k: 'date'; op: 'before' | 'on' | 'since'; sent: boolean; day: number }
  | { k: 'size'; op: 'larger' | 'smaller'; n: number }
  | { k: 'uid' | 'seq'; set: SequenceSet }
  | { k: 'not'; key: SearchKey }
  | { k: 'or'; a: SearchKey; b: SearchKey }
  | { k: 'and'; keys: SearchKey[] };

const MONTHS = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'];

/** A search date (`1-Feb-1994`) as the UTC midnight of that day. */
function parseDate(s: string): number {
  const m = /^(\d{1,2})-([A-Za-z]{3})-(\d{4})$/.exec(s);
  const month = m ? MONTHS.indexOf(m[2]!.toLowerCase()) : -1;
  if (!m || month < 0) throw new ImapSyntaxError(`Invalid date: ${s} (expected e.g. 1-Feb-2026)`);
  return Date.UTC(Number(m[3]), month, Number(m[1]));
}

const dayOf = (ms: number): number => {
  const d = new Date(ms);
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate());
};

function parseKey(t: Tokens): SearchKey {
  if (t.take('(')) {
    const keys: SearchKey[] = [];
    while (!t.take(')')) keys.push(parseKey(t));
    if (keys.length === 0) throw new ImapSyntaxError('Empty search group');
    return { k: 'and', keys };
  }
  const word = t.atom();
  const w = word.toUpperCase();
  switch (w) {
    case 'ALL':
    case 'OLD':
    case 'UNANSWERED':
    case 'UNDRAFT':
    case 'UNFLAGGED':
      return { k: 'all' };
    case 'NEW':
    case 'RECENT':
    case 'ANSWERED':
    case 'DRAFT':
    case 'FLAGGED':
      return { k: 'none' };
    case 'KEYWORD':
      t.atom();
      return { k: 'none' };
    case 'UNKEYWORD':
      t.atom();
      return { k: 'all' };
    case 'SEEN':
    case 'UNSEEN':
      return { k: 'seen', v: w === 'SEEN' };
    case 'DELETED':
    case 'UNDELETED':
      return { k: 'deleted', v: w === 'DELETED' };
    case 'FROM':
    case 'TO':
    case 'CC':
    case 'BCC':
    case 'SUBJECT':
      return { k: 'header', name: w.toLowerCase(), value: t.astring() };
    case 'HEADER': {
      const name = t.astring().toLowerCase();
      return { k: 'header', name, value: t.astring() };
    }
    case 'BODY':
    case 'TEXT':
      return { k: w === 'BODY' ? 'body' : 'text', value: t.astring() };
    case 'BEFORE':
    case 'ON':
    case 'SINCE':
    case 'SENTBEFORE':
    case 'SENTON':
    case 'SENTSINCE': {
      const sent = w.startsWith('SENT');
      return { k: 'date', sent, op: w.slice(sent ? 4 : 0).toLowerCase() as 'on', day: parseDate(t.astring()) };
    }
    case 'LARGER':
    case 'SMALLER': {
      const n = t.atom();
      if (!/^\d+$/.test(n)) throw new ImapSyntaxError(`${w} needs a number`);
      return { k: 'size', op: w.toLowerCase() as 'larger', n: Number(n) };
    }
    case 'UID':
      return { k: 'uid', set: parseSequenceSet(t.atom()) };
    case 'NOT':
      return { k: 'not', key: parseKey(t) };
    case 'OR': {
      const a = parseKey(t);
      return { k: 'or', a, b: parseKey(t) };
    }
    default:
      if (isSequenceSet(word)) return { k: 'seq', set: parseSequenceSet(word) };
      throw new ImapSyntaxError(`Unknown search key: ${word}`);
  }
}

/** The criteria of a SEARCH: an optional CHARSET (US-ASCII or UTF-8), then keys all of which must match. */
export function parseSearch(t: Tokens): SearchKey {
  const first = t.peek();
  if (first?.t === 'atom' && first.v.toUpperCase() === 'CHARSET') {
    t.next();
    const cs = t.astring().toUpperCase();
    if (cs !== 'UTF-8' && cs !== 'US-ASCII') throw new CharsetError(cs);
  }
  const keys: SearchKey[] = [];
  while (!t.done) keys.push(parseKey(t));
  if (keys.length === 0) throw new ImapSyntaxError('SEARCH needs at least one key');
  return keys.length === 1 ? keys[0]! : { k: 'and', keys };
}

/** A charset we do not search in: answered NO [BADCHARSET]. */
export class CharsetError extends Error {}

/** Whether matching `key` reads the message's source. */
export function needsSource(key: SearchKey): boolean {
  switch (key.k) {
    case 'header':
    case 'body':
    case 'text':
      return true;
    case 'date':
      return key.sent;
    case 'not':
      return needsSource(key.key);
    case 'or':
      return needsSource(key.a) || needsSource(key.b);
    case 'and':
      return key.keys.some(needsSource);
    default:
      return false;
  }
}

export interface SearchMessage {
  seq: number;
  uid: number;
  seen: boolean;
  deleted: boolean;
  size: number;
  receivedAt: number;
  /** The source (read once, when a key needs it); null when the message is gone. */
  source(): Buffer | null;
}

/** Matches messages of one mailbox; `maxSeq`/`maxUid` stand for `*`. Keeps one parsed message at a time. */
export function matcher(key: SearchKey, maxSeq: number, maxUid: number) {
  return (m: SearchMessage): boolean => {
    let node: MimeNode | null | undefined;
    const mime = () => {
      if (node === undefined) {
        const src = m.source();
        node = src ? parseMime(src) : null;
      }
      return node;
    };
    const has = (hay: string, needle: string) => hay.toLowerCase().includes(needle.toLowerCase());
    const test = (k: SearchKey): boolean => {
      switch (k.k) {
        case 'all':
          return true;
        case 'none':
          return false;
        case 'seen':
          return m.seen === k.v;
        case 'deleted':
          return m.deleted === k.v;
        case 'uid':
          return inSet(k.set, m.uid, maxUid);
        case 'seq':
          return inSet(k.set, m.seq, maxSeq);
        case 'size':
          return k.op === 'larger' ? m.size > k.n : m.size < k.n;
        case 'date': {
          let day: number;
          if (k.sent) {
            const n = mime();
            const date = n?.fields.find((f) => f.name.toLowerCase() === 'date')?.value;
            const ms = date ? Date.parse(date) : Number.NaN;
            if (Number.isNaN(ms)) return false;
            day = dayOf(ms);
          } else day = dayOf(m.receivedAt);
          return k.op === 'before' ? day < k.day : k.op === 'on' ? day === k.day : day >= k.day;
        }
        case 'header': {
          const n = mime();
          if (!n) return false;
          const fields = n.fields.filter((f) => f.name.toLowerCase() === k.name);
          if (k.value === '') return fields.length > 0;
          return fields.some((f) => has(decodeWords(f.value), k.value) || has(f.value, k.value));
        }
        case 'body':
        case 'text': {
          const n = mime();
          if (!n) return false;
          if (k.k === 'text' && n.fields.some((f) => has(`${f.name}: ${decodeWords(f.value)}`, k.value))) return true;
          return has(searchableBody(n), k.value);
        }
        case 'not':
          return !test(k.key);
        case 'or':
          return test(k.a) || test(k.b);
        case 'and':
          return k.keys.every(test);
      }
    };
    return test(key);
  };
}
