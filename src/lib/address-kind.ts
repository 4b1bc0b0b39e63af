// The kind of an IP address: public, or one that reaches into the network the server runs in. The one classification
// behind what a message may make the server connect to: the links check (docs/checks.md#links) and attachment urls
// (docs/api.md#attachment-urls).
import ipaddr from 'ipaddr.js';

/** Cloud instance metadata services outside link-local (169.254.169.254 is link-local): AWS's IPv6 one, Alibaba's. */
const METADATA = new Set(['fd00:ec2::254', '100.100.100.200']);

/**
 * The kind of a non-public address — `loopback`, `private` (RFC 1918, unique-local IPv6, CGNAT 100.64/10),
 * `link-local`, `cloud-metadata`, `unspecified`, `multicast`, `broadcast`, `reserved` (documentation, benchmarking,
 * IPv4-compatible and translated IPv6 forms, …) or `invalid` — and null for a public one. An IPv4-mapped IPv6 address
 * is its IPv4 address.
 */
export function addressKind(address: string): string | null {
  let ip: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    ip = ipaddr.process(address);
  } catch {
    return 'invalid';
  }
  if (METADATA.has(ip.toString())) return 'cloud-metadata';
  const range = ip.range();
  if (range === 'unicast') {
    // ::a.b.c.d, IPv4-compatible (deprecated, RFC 4291 section 2.5.5.1): not a public address either.
    return ip.kind() === 'ipv6' && (ip as ipaddr.IPv6).parts.slice(0, 6).every((p) => p === 0) ? 'reserved' : null;
  }
  if (range === 'private' || range === 'uniqueLocal' || range === 'carrierGradeNat') return 'private';
  if (range === 'linkLocal') return 'link-local';
  if (range === 'loopback' || range === 'unspecified' || range === 'multicast' || range === 'broadcast') return range;
  return 'reserved';
}
