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

/** Characters of a time-ordered id that carry its time: 62^8 milliseconds is some 6,900 years. */
const TIME_CHARS = 8;

/**
 * A resource id like newId's, whose first characters are the time it was made (milliseconds, base62, so ids sort as
 * they were made) and the rest random (96 bits). Rows inserted as they arrive then add to the end of the id's index
 * instead of to a random page of it, which a commit would write out whole for each of its rows.
 */
export function timeOrderedId(prefix: string, ms: number = Date.now()): string {
  return `${prefix}_${timeChars(ms)}${base62(ID_CHARS - TIME_CHARS)}`;
}

/**
 * Time-ordered ids (timeOrderedId) that keep the order they are made in, and the time made when they can: each one's
 * time is at least a millisecond after the one before, so several made in one millisecond, or after the wall clock
 * stepped back (an NTP correction, a restored VM), count on from the last until the clock is past it again. `after`
 * is the newest id made before, by an earlier run whose clock may have been ahead of this one's.
 */
export function timeOrderedIds(prefix: string, after?: string | null): (ms: number) => string {
  let last = after ? timeOf(after) : -1;
  return (ms) => {
    last = Math.max(Math.floor(ms), last + 1);
    return timeOrderedId(prefix, last);
  };
}

function timeChars(ms: number): string {
  let time = '';
  for (let n = Math.max(0, Math.floor(ms)), i = 0; i < TIME_CHARS; i++, n = Math.floor(n / 62)) {
    time = ALPHABET[n % 62] + time;
  }
  return time;
}

/** The time a time-ordered id carries. */
export function timeOf(id: string): number {
  let ms = 0;
  for (const ch of id.slice(id.indexOf('_') + 1, id.indexOf('_') + 1 + TIME_CHARS)) ms = ms * 62 + ALPHABET.indexOf(ch);
  return ms;
}

/** An opaque secret token with at least `bits` of entropy, base64url encoded. */
export function secretToken(prefix: string, bits = 256): string {
  return `${prefix}${randomBytes(Math.ceil(bits / 8)).toString('base64url')}`;
}

/** A random integer in [min, max). */
export function randomBetween(min: number, max: number): number {
  return randomInt(min, max);
}
