import { describe, expect, it } from 'vitest';
import { addressMatcher, bareAddress, redactRelayUrl, relayPatternProblem, relayUrlProblem } from './relay.js';

describe('the relay rules', () => {
  it('match addresses by glob, whole and in any case, never as a regular expression', () => {
    const m = addressMatcher(['*@example.com', 'qa+?@example.org', 'Ann@Example.net']);
    expect(['x@example.com', 'X.Y@EXAMPLE.COM', 'qa+1@example.org', 'ann@example.net'].map(m)).toEqual([
      true,
      true,
      true,
      true,
    ]);
    // A dot is a dot, and the whole address must match: no subdomain, no suffix, no second character for `?`.
    expect(
      ['x@sub.example.com', 'x@example.com.evil', 'x@exampleXcom', 'qa+12@example.org', 'bob@example.net'].map(m),
    ).toEqual([false, false, false, false, false]);
    expect(addressMatcher([])('a@b.c')).toBe(false);
    expect(addressMatcher(['a(b)+c@x.y'])('a(b)+c@x.y')).toBe(true);
  });

  it('show a URL with its password hidden, and nothing else changed', () => {
    expect(redactRelayUrl('smtp://user:p%40ss@mail.example.com:587')).toBe('smtp://user:***@mail.example.com:587');
    expect(redactRelayUrl('smtps://mail.example.com?tls=skip-verify')).toBe('smtps://mail.example.com?tls=skip-verify');
    expect(redactRelayUrl('not a url :pw@')).toBe('(an invalid relay URL)');
  });

  it('take smtp:// and smtps:// with at most ?tls=skip-verify; refuse patterns that are no address', () => {
    expect(relayUrlProblem('smtp://h:25')).toBeNull();
    expect(relayUrlProblem('smtps://u:p@h?tls=skip-verify')).toBeNull();
    expect(relayUrlProblem('http://h')).toMatch(/smtp:\/\/ or smtps:\/\//);
    expect(relayUrlProblem('smtp://h?pool=true')).toMatch(/only \?tls=skip-verify/);
    expect(relayUrlProblem('nonsense')).toMatch(/give an smtp/);
    expect(relayPatternProblem('*@example.com')).toBeNull();
    expect(relayPatternProblem('a b@example.com')).toMatch(/not an address pattern/);
    expect(relayPatternProblem('')).toMatch(/not an address pattern/);
    expect(bareAddress('Ann <ann@example.com>')).toBe('ann@example.com');
    expect(bareAddress(' ann@example.com ')).toBe('ann@example.com');
  });
});
