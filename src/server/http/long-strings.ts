// A request's JSON with its long texts left as the bytes they arrived as. A send's text or HTML runs to 40 MiB, and
// JSON.parse reads a body only as a string: the whole body as one string, then the value as another, each two bytes a
// character once one character is past Latin-1 (a 35 MB text with a € in it was 140 MB of strings before anything
// else was done with it). A member named by the route whose string is long is cut out of the body before JSON.parse
// reads the rest, and its escapes are decoded where it lies: its value is its UTF-8, a view into the body's Buffer.

/** A named member's string longer than this in the body (escapes and quotes included) is taken as bytes. */
export const LONG_STRING_BYTES = 1024 * 1024;

export interface ParsedJson {
  /** The body's value as JSON.parse gives it, but for the members taken as bytes, which are '' here. */
  value: unknown;
  /** The members taken as bytes, by name: the UTF-8 of their strings. */
  bytes: Record<string, Buffer>;
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const EMPTY_STRING = Buffer.from('""');

/**
 * Parses `body` (valid UTF-8) as JSON.parse does, except that a member of its top-level object named in `members`
 * whose value is a string over LONG_STRING_BYTES comes out as its UTF-8 bytes (`bytes`), never as a string. Its
 * escapes are decoded in place, in `body`, which is changed (an escape is never shorter than what it stands for); a
 * `\u` escape of a lone surrogate, which UTF-8 cannot hold, becomes U+FFFD. Throws a SyntaxError as JSON.parse does
 * when the body is not JSON.
 */
export function parseJson(body: Buffer, members: readonly string[]): ParsedJson {
  const long = members.length && body.length > LONG_STRING_BYTES ? longMembers(body, members) : null;
  if (!long) return { value: JSON.parse(body.toString('utf8')), bytes: {} };
  // The rest of the body, with "" where those strings were, is what JSON.parse checks and reads.
  const pieces: Buffer[] = [];
  let at = 0;
  for (const m of long) {
    pieces.push(body.subarray(at, m.start), EMPTY_STRING);
    at = m.end;
  }
  pieces.push(body.subarray(at));
  let value: unknown;
  try {
    value = JSON.parse(Buffer.concat(pieces).toString('utf8'));
  } catch {
    // Not JSON: JSON.parse of the whole body (unchanged so far) says what is wrong where the client can find it.
    return { value: JSON.parse(body.toString('utf8')), bytes: {} };
  }
  const bytes: Record<string, Buffer> = {};
  for (const m of long) bytes[m.name] = decodeInPlace(body, m.start, m.end);
  return { value, bytes };
}

const isSpace = (b: number | undefined) => b === 0x20 || b === 0x0a || b === 0x0d || b === 0x09;

function skipSpace(body: Buffer, i: number): number {
  while (isSpace(body[i])) i++;
  return i;
}

/** The end (after its closing quote) of the string that starts at `i`, or -1. */
function stringEnd(body: Buffer, i: number): number {
  for (let q = body.indexOf(QUOTE, i + 1); q >= 0; q = body.indexOf(QUOTE, q + 1)) {
    let k = q - 1;
    while (body[k] === BACKSLASH) k--;
    // An even number of backslashes before it (none, or escaped backslashes): this quote ends the string.
    if ((q - 1 - k) % 2 === 0) return q + 1;
  }
  return -1;
}

/** The end of the value that starts at `i` (a string, an object or array with all it holds, a literal), or -1. */
function valueEnd(body: Buffer, i: number): number {
  const first = body[i];
  if (first === QUOTE) return stringEnd(body, i);
  if (first === 0x7b || first === 0x5b) {
    let depth = 0;
    for (let j = i; j < body.length; j++) {
      const b = body[j];
      if (b === QUOTE) {
        const end = stringEnd(body, j);
        if (end < 0) return -1;
        j = end - 1;
      } else if (b === 0x7b || b === 0x5b) depth++;
      else if ((b === 0x7d || b === 0x5d) && --depth === 0) return j + 1;
    }
    return -1;
  }
  let j = i;
  while (j < body.length && !isSpace(body[j]) && body[j] !== 0x2c && body[j] !== 0x7d && body[j] !== 0x5d) j++;
  return j > i ? j : -1;
}

/**
 * Where the long strings of the named members of the body's top-level object are, in order; null when there are none,
 * or when the body is anything this scan does not take as it stands (not an object, a member named twice, JSON
 * broken somewhere): JSON.parse of the whole then decides.
 */
function longMembers(body: Buffer, members: readonly string[]): { name: string; start: number; end: number }[] | null {
  const found: { name: string; start: number; end: number }[] = [];
  const seen = new Set<string>();
  let i = skipSpace(body, 0);
  if (body[i] !== 0x7b) return null;
  i = skipSpace(body, i + 1);
  while (body[i] === QUOTE) {
    const keyEnd = stringEnd(body, i);
    // A name is short; a long one is no member this looks for.
    if (keyEnd < 0 || keyEnd - i > 1024) return null;
    let name: string;
    try {
      name = JSON.parse(body.toString('utf8', i, keyEnd)) as string;
    } catch {
      return null;
    }
    i = skipSpace(body, keyEnd);
    if (body[i] !== 0x3a) return null;
    const start = skipSpace(body, i + 1);
    const end = valueEnd(body, start);
    if (end < 0) return null;
    if (members.includes(name)) {
      // JSON.parse keeps the last of a name given twice.
      if (seen.has(name)) return null;
      seen.add(name);
      if (body[start] === QUOTE && end - start > LONG_STRING_BYTES) found.push({ name, start, end });
    }
    i = skipSpace(body, end);
    if (body[i] === 0x7d) return found.length && skipSpace(body, i + 1) === body.length ? found : null;
    if (body[i] !== 0x2c) return null;
    i = skipSpace(body, i + 1);
  }
  return null;
}

function hexAt(body: Buffer, i: number): number {
  let v = 0;
  for (let k = i; k < i + 4; k++) {
    const c = body[k] ?? 0;
    const d =
      c >= 0x30 && c <= 0x39 ? c - 0x30 : c >= 0x61 && c <= 0x66 ? c - 0x57 : c >= 0x41 && c <= 0x46 ? c - 0x37 : -1;
    if (d < 0) return -1;
    v = (v << 4) | d;
  }
  return v;
}

const SIMPLE_ESCAPES: Record<number, number> = {
  34: 0x22,
  92: 0x5c,
  47: 0x2f,
  98: 0x08,
  102: 0x0c,
  110: 0x0a,
  114: 0x0d,
  116: 0x09,
};

/**
 * Decodes the JSON string `body[start, end)` (its quotes included) in place; returns its UTF-8, a view of `body`.
 * Throws a SyntaxError, as JSON.parse would, for a control character or an escape JSON does not have.
 */
function decodeInPlace(body: Buffer, start: number, end: number): Buffer {
  const stop = end - 1;
  let w = start + 1;
  for (let r = start + 1; r < stop; ) {
    const b = body[r] ?? 0;
    if (b !== BACKSLASH) {
      if (b < 0x20) throw new SyntaxError(`Bad control character in string literal in JSON at position ${r}`);
      body[w++] = b;
      r++;
      continue;
    }
    const e = body[r + 1] ?? 0;
    const simple = SIMPLE_ESCAPES[e];
    if (simple !== undefined) {
      body[w++] = simple;
      r += 2;
      continue;
    }
    let cp = e === 0x75 && r + 6 <= stop ? hexAt(body, r + 2) : -1;
    if (cp < 0) throw new SyntaxError(`Bad escaped character in JSON at position ${r + 1}`);
    r += 6;
    if (cp >= 0xd800 && cp <= 0xdbff && body[r] === BACKSLASH && body[r + 1] === 0x75 && r + 6 <= stop) {
      const low = hexAt(body, r + 2);
      if (low >= 0xdc00 && low <= 0xdfff) {
        cp = 0x10000 + ((cp - 0xd800) << 10) + (low - 0xdc00);
        r += 6;
      }
    }
    if (cp >= 0xd800 && cp <= 0xdfff) cp = 0xfffd;
    if (cp < 0x80) body[w++] = cp;
    else if (cp < 0x800) {
      body[w++] = 0xc0 | (cp >> 6);
      body[w++] = 0x80 | (cp & 0x3f);
    } else if (cp < 0x10000) {
      body[w++] = 0xe0 | (cp >> 12);
      body[w++] = 0x80 | ((cp >> 6) & 0x3f);
      body[w++] = 0x80 | (cp & 0x3f);
    } else {
      body[w++] = 0xf0 | (cp >> 18);
      body[w++] = 0x80 | ((cp >> 12) & 0x3f);
      body[w++] = 0x80 | ((cp >> 6) & 0x3f);
      body[w++] = 0x80 | (cp & 0x3f);
    }
  }
  return body.subarray(start + 1, w);
}
