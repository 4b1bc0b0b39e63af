import { randomBytes, randomInt } from 'node:crypto';
import { ID_CHARS } from '../contract/ids.js';

const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

// CSPRNG bytes are drawn 4 KiB at a time: one call per id was a visible cost on the sending path.
let pool = Buffer.alloc(0);
let offset = 0;
function nextByte(): number {
  if (offset >= pool.length) {
    pool = randomBytes(4096);
    offset = 0;
  }
  return pool[offset++]!;
}

/** `length` base62 characters from a CSPRNG, without modulo bias. */
export function base62(length: number): string {
  let out = '';
  while (out.length < length) {
    const byte = nextByte();
    // 248 = 62 * 4: reject the top bytes so every character is equally likely.
    if (byte < 248) out += ALPHABET[byte % 62];
  }
  return out;
}

/** A resource id: prefix + `_` + 24 base62 characters (`msg_…`, `usr_…`, `ws_…`). */
export function newId(prefix: string): string {
  return `${prefix}_${base62(ID_CHARS)}`;
}

/** An opaque secret token with at least `bits` of entropy, base64url encoded. */
export function secretToken(prefix: string, bits = 256): string {
  return `${prefix}${randomBytes(Math.ceil(bits / 8)).toString('base64url')}`;
}

/** A random integer in [min, max). */
export function randomBetween(min: number, max: number): number {
  return randomInt(min, max);
}
