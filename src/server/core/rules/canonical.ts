import { createHash, type Hash } from 'node:crypto';
import { PIECE_BYTES } from '../../../lib/base64.js';
import { cutPieces } from '../../../lib/pieces.js';

/** Printable ASCII other than `"` and `\`: a string of only these is its own JSON, between quotes. */
const PLAIN = /^[\x20\x21\x23-\x5b\x5d-\x7e]*$/;
const SLICE = 1024 * 1024;

/**
 * Bytes that stand for their base64 text (an attachment's content given as bytes, by SMTP submission): they hash as
 * the same attachment given in base64 does, encoded a piece at a time.
 */
export class Base64Of {
  constructor(readonly bytes: Buffer) {}
}

/**
 * The sha256 (hex) of a value's canonical JSON: JSON.stringify's text with object keys sorted at every depth (an
 * undefined value written `null`), so equal bodies hash equal whatever their key order. The text is fed to the hash
 * as it is walked rather than built: a send's body holds up to 40 MiB of base64, and building the text copied it
 * several times over (each string escaped, each array and object joined) before it was hashed. A Buffer stands for the
 * string it is the UTF-8 of (a long text as the API reads it), and hashes as that string does.
 */
export function canonicalSha256(value: unknown): string {
  const hash = createHash('sha256');
  feed(hash, value);
  return hash.digest('hex');
}

function feed(hash: Hash, value: unknown): void {
  if (Buffer.isBuffer(value)) {
    feedUtf8(hash, value);
  } else if (value instanceof Base64Of) {
    // Pieces of a multiple of 3 bytes encode to base64 that joins into the whole's.
    hash.update('"');
    for (let i = 0; i < value.bytes.length; i += PIECE_BYTES)
      hash.update(value.bytes.subarray(i, i + PIECE_BYTES).toString('base64'));
    hash.update('"');
  } else if (Array.isArray(value)) {
    hash.update('[');
    value.forEach((v, i) => {
      if (i) hash.update(',');
      feed(hash, v);
    });
    hash.update(']');
  } else if (value && typeof value === 'object') {
    hash.update('{');
    Object.keys(value)
      .sort()
      .forEach((k, i) => {
        hash.update(`${i ? ',' : ''}${JSON.stringify(k)}:`);
        feed(hash, (value as Record<string, unknown>)[k]);
      });
    hash.update('}');
  } else if (typeof value === 'string' && value.length > SLICE) {
    // A long string is hashed a slice at a time: one that needs no escaping (base64) where it lies, any other escaped
    // slice by slice (a 35 MB text's JSON, then its UTF-8, were two more copies of it). JSON.stringify escapes each
    // character alone except the two halves of a surrogate pair, which are never parted.
    hash.update('"');
    for (let i = 0; i < value.length; ) {
      let j = Math.min(i + SLICE, value.length);
      const last = value.charCodeAt(j - 1);
      if (j < value.length && last >= 0xd800 && last <= 0xdbff) j--;
      const slice = value.slice(i, j);
      hash.update(PLAIN.test(slice) ? slice : JSON.stringify(slice).slice(1, -1));
      i = j;
    }
    hash.update('"');
  } else {
    hash.update(JSON.stringify(value) ?? 'null');
  }
}

/** The UTF-8 bytes of a string, hashed as the string is: a slice at a time, each cut where a character begins. */
function feedUtf8(hash: Hash, bytes: Buffer): void {
  hash.update('"');
  for (const piece of cutPieces(bytes, SLICE, true)) {
    const slice = piece.toString('utf8');
    hash.update(PLAIN.test(slice) ? slice : JSON.stringify(slice).slice(1, -1));
  }
  hash.update('"');
}
