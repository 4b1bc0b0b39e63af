import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { canonicalSha256 } from './canonical.js';
import { parseAddress, simulatorMailbox } from './addresses.js';
import { createSendRate } from '../send-rate.js';
import { manualClock } from '../../../lib/clock.js';

/** The canonical JSON text, built: what the stored request hashes of Idempotency-Keys were computed from. */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.keys(value as object)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonicalJson((value as Record<string, unknown>)[k])}`);
    return `{${entries.join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

describe('canonicalSha256', () => {
  it('hashes the JSON text with keys sorted at every depth, array order kept', () => {
    expect(canonicalSha256({ b: 1, a: { d: [2, { y: 1, x: 0 }], c: null } })).toBe(
      sha256('{"a":{"c":null,"d":[2,{"x":0,"y":1}]},"b":1}'),
    );
    expect(canonicalSha256({ a: 1, b: 2 })).toBe(canonicalSha256({ b: 2, a: 1 }));
    expect(canonicalSha256({ a: 1, b: 2 })).not.toBe(canonicalSha256({ a: 2, b: 1 }));
  });

  it('gives the hash a replay of a request stored before compares with, long strings and escapes included', () => {
    const long = Buffer.alloc(3 * 1024 * 1024 + 7, 'Zm9v').toString('latin1');
    const requests = [
      {
        op: 'sendEmail',
        body: { from: 'a@example.test', to: ['b@example.net'], attachments: [{ filename: 'x.bin', content: long }] },
      },
      { body: { text: `quote " backslash \\ newline \n tab \t ${'é'.repeat(5)} 🙂 \u2028`, html: `${long}"` } },
      { body: { list: [undefined, null, 1.5, true, 'x'], nested: { z: { y: [{}] } }, empty: '' } },
      { body: { ascii: long.slice(0, 1024 * 1024 + 1), wide: `${long}🙂` } },
      // A long text to escape: quotes, line breaks, controls, a surrogate pair across every slice boundary (1 MiB of
      // characters), lone halves at them.
      { body: { text: `${'a "quoted" line\n\t\u0001 é'.repeat(80_000)}` } },
      { body: { text: `${'x'.repeat(1024 * 1024 - 1)}🙂${'y'.repeat(1024 * 1024 - 2)}🙂🙂\n` } },
      { body: { text: `${'x'.repeat(1024 * 1024 - 1)}\ud83d${'y'.repeat(1024 * 1024)}\ude42 end\n` } },
    ];
    for (const r of requests) expect(canonicalSha256(r)).toBe(sha256(canonicalJson(r)));
  });
});

describe('parseAddress', () => {
  it('takes an address or Name <address>, UTF-8 allowed, domain in punycode', () => {
    expect(parseAddress('Shop <orders@example.test>')).toEqual({
      name: 'Shop',
      address: 'orders@example.test',
      domain: 'example.test',
    });
    expect(parseAddress('"Doe, Jane" <jane@example.com>')?.name).toBe('Doe, Jane');
    expect(parseAddress('jörg@exämple.de')?.domain).toBe('xn--exmple-cua.de');
  });
  it('refuses CR/LF anywhere, missing parts and bad domains', () => {
    for (const bad of [
      'a@b.com\r\nBcc: x@y.z',
      'no-at.example.com',
      '@example.com',
      'a@',
      'a@-bad-.com',
      'a@localhost',
      'a b@example.com',
    ]) {
      expect(parseAddress(bad), bad).toBeNull();
    }
  });
  it('names simulator mailboxes with a +label', () => {
    expect(simulatorMailbox('Bounce+42@Simulator.test')).toBe('bounce');
    expect(simulatorMailbox('bounce@example.com')).toBeNull();
  });
});

describe('send rate bucket', () => {
  it('holds 2 × rate, refills at rate per second of the service clock', () => {
    const clock = manualClock(0);
    const bucket = createSendRate(2, clock);
    const states = Array.from({ length: 5 }, () => bucket.take('ws'));
    expect(states.map((s) => s.allowed)).toEqual([true, true, true, true, false]);
    expect(states[4]).toMatchObject({ limit: 4, rate: 2, remaining: 0, retryAfter: 1 });
    clock.advance(1000);
    expect([bucket.take('ws').allowed, bucket.take('ws').allowed, bucket.take('ws').allowed]).toEqual([
      true,
      true,
      false,
    ]);
    expect(bucket.take('other').remaining).toBe(3);
  });
});
