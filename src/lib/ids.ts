import { randomBytes, randomInt } from 'node:crypto';

const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** `length` base62 characters from a CSPRNG, without modulo bias. */
export function base62(length: number): string {
  let out = '';
  while (out.length < length) {
    for (const byte of randomBytes(length * 2)) {
      // 248 = 62 * 4: reject the top bytes so every character is equally likely.
      if (byte < 248) out += ALPHABET[byte % 62];
      if (out.length === length) break;
    }
  }
  return out;
}

/** A resource id: prefix + 24 base62 characters (`msg_…`, `usr_…`, `ws_…`). */
export function newId(prefix: string): string {
  return `${prefix}_${base62(24)}`;
}

/** An opaque secret token with at least `bits` of entropy, base64url encoded. */
export function secretToken(prefix: string, bits = 256): string {
  return `${prefix}${randomBytes(Math.ceil(bits / 8)).toString('base64url')}`;
}

/** A random integer in [min, max). */
export function randomBetween(min: number, max: number): number {
  return randomInt(min, max);
}
