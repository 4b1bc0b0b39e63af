// Base64 text of tens of megabytes, decoded and searched a piece at a time: decoded whole, its bytes (and, inside
// node's decoder, a two-byte-per-character copy of the text) are held at once.

/** The bytes of a piece: whole lines of base64 (57 bytes make a line of 76 characters), just under 1 MiB. */
export const PIECE_BYTES = 57 * 18_396;

/** The bytes of padded base64 text without line breaks (RFC 4648 section 4), in pieces of `pieceBytes` (a multiple of 3). */
export function* decodePieces(text: string, pieceBytes = PIECE_BYTES): Generator<Buffer> {
  const step = (pieceBytes / 3) * 4;
  for (let i = 0; i < text.length; i += step) yield Buffer.from(text.slice(i, i + step), 'base64');
}

/** Whether `needle` occurs in the bytes of `pieces` taken one after the other, across the seams between them too. */
export function includesAcross(pieces: Iterable<Buffer>, needle: Buffer): boolean {
  const keep = needle.length - 1;
  let tail = Buffer.alloc(0);
  for (const piece of pieces) {
    if (piece.includes(needle) || Buffer.concat([tail, piece.subarray(0, keep)]).includes(needle)) return true;
    tail =
      piece.length >= keep
        ? Buffer.from(piece.subarray(piece.length - keep))
        : Buffer.concat([tail, piece]).subarray(-keep);
  }
  return false;
}
