// Where an attachment's `url` may lead (docs/api.md#attachment-urls): never to this server itself (its API, SMTP sink
// and submission ports, on any address of this machine), nor to an address that is not public — but loopback (a test's
// own file server), and private ranges when `svc serve --allow-private-attachment-urls` allows them. A send refuses
// what its url tells without DNS (an address, a localhost name); the delivery checks every address it may connect to,
// a name's too (workers/delivery.ts), so a name that points here or inside by then is refused there.
import { isIP } from 'node:net';
import { networkInterfaces } from 'node:os';
import ipaddr from 'ipaddr.js';
import { addressKind } from '../../../lib/address-kind.js';
import { isLoopbackHost } from '../../../lib/loopback.js';

export interface AttachmentUrlPolicy {
  /** Private ranges (RFC 1918, unique-local IPv6, CGNAT) may be fetched from (`--allow-private-attachment-urls`). */
  allowPrivate: boolean;
  /** The ports this server listens on (API, SMTP sink, submission), each once it is bound. */
  ownPorts(): ReadonlySet<number>;
}

/** The port a URL connects to. */
export const portOf = (url: URL): number => Number(url.port) || (url.protocol === 'https:' ? 443 : 80);

/** Whether an address is this machine's: loopback, unspecified (which reaches it too), or an interface's. */
function isThisMachine(address: string, kind: string | null): boolean {
  if (kind === 'loopback' || kind === 'unspecified') return true;
  const ip = ipaddr.process(address).toString();
  return Object.values(networkInterfaces()).some((list) =>
    list?.some((i) => ipaddr.isValid(i.address) && ipaddr.process(i.address).toString() === ip),
  );
}

/** Why an attachment may not be fetched from this address and port, for the sender (a field's error); null if it may. */
export function addressRefusal(address: string, port: number, policy: AttachmentUrlPolicy): string | null {
  const kind = addressKind(address);
  if (kind !== 'invalid' && policy.ownPorts().has(port) && isThisMachine(address, kind)) {
    return `must not lead to this server itself (port ${port} is one of its own)`;
  }
  if (kind === null || kind === 'loopback' || (kind === 'private' && policy.allowPrivate)) return null;
  const shown = kind === 'invalid' ? address : ipaddr.process(address).toString();
  return kind === 'private'
    ? `must not lead to a private address (${shown}); svc serve --allow-private-attachment-urls allows private ranges`
    : `must not lead to ${/^[aeiou]/.test(kind) ? 'an' : 'a'} ${kind} address (${shown})`;
}

/** What can be told of a url without DNS, when a message is sent: its address, or a localhost name's. */
export function urlRefusal(url: URL, policy: AttachmentUrlPolicy): string | null {
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (isIP(host)) return addressRefusal(host, portOf(url), policy);
  return isLoopbackHost(host) ? addressRefusal('127.0.0.1', portOf(url), policy) : null;
}
