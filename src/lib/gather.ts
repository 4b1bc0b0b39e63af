// The bytes of something that arrives in pieces (a request body, a message over SMTP). When the sender declared how
// many there will be, they are copied into one Buffer of that size as they come: gathering the pieces and joining
// them at the end held the whole twice at that moment, and left the pieces to the garbage collector. Memory is
// reserved, not written, until bytes arrive, so a sender that declares much and sends little holds what it sent.

export interface Gathered {
  add(chunk: Buffer): void;
  /** Everything added so far, in one Buffer. */
  bytes(): Buffer;
}

/**
 * Gathers up to `declared` bytes in one Buffer (none for 0); beyond that, or without it, as pieces, each passed
 * through `keep` first (to copy a piece out of a larger block it would otherwise hold).
 */
export function gather(declared: number, keep: (piece: Buffer) => Buffer = (piece) => piece): Gathered {
  let whole = declared > 0 ? Buffer.allocUnsafeSlow(declared) : null;
  let filled = 0;
  const pieces: Buffer[] = [];
  let size = 0;
  return {
    add(chunk) {
      if (whole && filled + chunk.length <= whole.length) {
        filled += chunk.copy(whole, filled);
        return;
      }
      // More than declared: what came so far, then the pieces.
      if (whole) {
        pieces.push(whole.subarray(0, filled));
        size = filled;
        whole = null;
      }
      pieces.push(keep(chunk));
      size += chunk.length;
    },
    bytes: () => (whole ? whole.subarray(0, filled) : Buffer.concat(pieces, size)),
  };
}
