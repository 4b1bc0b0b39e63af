// Big values stored, and hashed, a piece at a time (the store's pieces of a raw message or a long text, the
// idempotency hash of a text given as bytes): cut into views of the whole, never copies, and joined again.
import { gather } from './gather.js';

/** A piece of a big value in the store: a MiB (migrations 10 and 11). */
export const PIECE_BYTES = 1024 * 1024;

/**
 * `bytes` in views of at most `size` bytes, in order, one at least (an empty one for no bytes). With `utf8`, each
 * cut where a character begins, so that every piece of a UTF-8 text is UTF-8 itself.
 */
export function cutPieces(bytes: Buffer, size = PIECE_BYTES, utf8 = false): Buffer[] {
  const out: Buffer[] = [];
  for (let i = 0; i < bytes.length || out.length === 0; ) {
    let j = Math.min(i + size, bytes.length);
    // A byte 10xxxxxx continues the character before it.
    if (utf8) while (j < bytes.length && ((bytes[j] ?? 0) & 0xc0) === 0x80) j--;
    out.push(bytes.subarray(i, j));
    i = j;
  }
  return out;
}

/** `head`, then `rest` (whose lengths add up to `restLength`), copied a piece at a time into one Buffer. */
export function joinPieces(head: Buffer, restLength: number, rest: Iterable<Buffer>): Buffer {
  const whole = gather(head.length + restLength);
  whole.add(head);
  for (const piece of rest) whole.add(piece);
  return whole.bytes();
}
