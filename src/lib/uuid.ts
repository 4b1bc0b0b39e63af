// A random UUID for the command line's sends (their Idempotency-Key) without loading node:crypto: that module and the
// internals it pulls in cost every `svc emails send` about 4 ms of its start (bench:cli-start), more than a tenth of
// what it takes beyond `node -e 0`. The bytes come from the system's random source, read directly.
import { closeSync, openSync, readSync } from 'node:fs';

/** Sixteen bytes from the system's random source; null where there is none (Windows). */
function systemRandom(source: string): Buffer | null {
  const bytes = Buffer.alloc(16);
  try {
    const fd = openSync(source, 'r');
    try {
      if (readSync(fd, bytes, 0, 16, null) !== 16) return null;
    } finally {
      closeSync(fd);
    }
    return bytes;
  } catch {
    return null;
  }
}

/**
 * A version 4 UUID (RFC 9562), from the system's random source (`source`: another file, for a test): Web Crypto's where
 * it cannot be read.
 */
export function randomUuid(source = '/dev/urandom'): string {
  const b = systemRandom(source);
  if (!b) return globalThis.crypto.randomUUID();
  b[6] = (b[6]! & 0x0f) | 0x40;
  b[8] = (b[8]! & 0x3f) | 0x80;
  const h = b.toString('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}
