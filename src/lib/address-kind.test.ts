// The one classification of addresses (the links check, attachment urls): which are public, and what the others are.
import { describe, expect, it } from 'vitest';
import { addressKind } from './address-kind.js';

describe('addressKind', () => {
  it('tells the kind of an address, an IPv4-mapped IPv6 one by its IPv4 address', () => {
    const kinds = {
      '93.184.215.14': null,
      '2606:2800:21f:cb07:6820:80da:af6b:8b2c': null,
      '127.0.0.1': 'loopback',
      '127.9.9.9': 'loopback',
      '::1': 'loopback',
      '::ffff:127.0.0.1': 'loopback',
      '10.1.2.3': 'private',
      '172.16.0.1': 'private',
      '192.168.0.1': 'private',
      '100.64.0.1': 'private',
      'fd00::1': 'private',
      '::ffff:10.0.0.1': 'private',
      '169.254.169.254': 'link-local',
      'fe80::1': 'link-local',
      'fd00:ec2::254': 'cloud-metadata',
      '100.100.100.200': 'cloud-metadata',
      '0.0.0.0': 'unspecified',
      '::': 'unspecified',
      '224.0.0.1': 'multicast',
      'ff02::1': 'multicast',
      '255.255.255.255': 'broadcast',
      '192.0.2.1': 'reserved',
      '::a00:1': 'reserved',
      '64:ff9b::a00:1': 'reserved',
      '2002:a00:1::': 'reserved',
      'not an address': 'invalid',
    };
    expect(Object.fromEntries(Object.keys(kinds).map((a) => [a, addressKind(a)]))).toEqual(kinds);
  });
});
