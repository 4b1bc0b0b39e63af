import { describe, expect, it } from 'vitest';
import { canonicalJson } from './canonical.js';
import { parseAddress, simulatorMailbox } from './addresses.js';
import { createSendRate } from './send-rate.js';
import { manualClock } from '../../lib/clock.js';

describe('canonicalJson', () => {
  it('sorts keys at every depth and keeps array order', () => {
    expect(canonicalJson({ b: 1, a: { d: [2, { y: 1, x: 0 }], c: null } })).toBe('{"a":{"c":null,"d":[2,{"x":0,"y":1}]},"b":1}');
    expect(canonicalJson({ a: 1, b: 2 })).toBe(canonicalJson({ b: 2, a: 1 }));
  });
});

describe('parseAddress', () => {
  it('takes an address or Name <address>, UTF-8 allowed, domain in punycode', () => {
    expect(parseAddress('Shop <orders@example.test>')).toEqual({ name: 'Shop', address: 'orders@example.test', domain: 'example.test' });
    expect(parseAddress('"Doe, Jane" <jane@example.com>')?.name).toBe('Doe, Jane');
    expect(parseAddress('jörg@exämple.de')?.domain).toBe('xn--exmple-cua.de');
  });
  it('refuses CR/LF anywhere, missing parts and bad domains', () => {
    for (const bad of ['a@b.com\r\nBcc: x@y.z', 'no-at.example.com', '@example.com', 'a@', 'a@-bad-.com', 'a@localhost', 'a b@example.com']) {
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
    expect(states[4]).toMatchObject({ limit: 2, remaining: 0, retryAfter: 1 });
    clock.advance(1000);
    expect([bucket.take('ws').allowed, bucket.take('ws').allowed, bucket.take('ws').allowed]).toEqual([true, true, false]);
    expect(bucket.take('other').remaining).toBe(3);
  });
});
