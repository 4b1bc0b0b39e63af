import { promises as dns } from 'node:dns';
import type { LookupFunction } from 'node:net';

export type HostAddress = { address: string; family: number };

/** One resolver (the system's, or a given `HOST[:PORT]`) with a per-query timeout. */
export function makeResolver(server: string | null, timeoutMs: number): dns.Resolver {
  const r = new dns.Resolver({ timeout: timeoutMs, tries: 1 });
  if (server) r.setServers([server]);
  return r;
}

/** Races a lookup against a timeout so one slow resolver never holds a check longer than `ms`. */
export function withTimeout<T>(p: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout;
  return Promise.race([
    p.finally(() => clearTimeout(timer)),
    new Promise<T>((_, reject) => {
      timer = setTimeout(() => reject(Object.assign(new Error(`no answer within ${ms} ms`), { code: 'ETIMEOUT' })), ms);
    }),
  ]);
}

/** Codes that mean "no such record", as opposed to a failed lookup. */
export const NO_RECORD_CODES = new Set(['ENODATA', 'ENOTFOUND', 'NXDOMAIN', 'ENONAME']);

/** A host's addresses: the system's lookup (hosts file included), or A and AAAA from the DNS server given. */
export function hostLookup(server: string | null, timeoutMs: number): (host: string) => Promise<HostAddress[]> {
  if (!server) return (host) => dns.lookup(host, { all: true, verbatim: true });
  const r = makeResolver(server, timeoutMs);
  return async (host) => {
    const [v4, v6] = await Promise.allSettled([r.resolve4(host), r.resolve6(host)]);
    const addresses = [
      ...(v4.status === 'fulfilled' ? v4.value.map((address) => ({ address, family: 4 })) : []),
      ...(v6.status === 'fulfilled' ? v6.value.map((address) => ({ address, family: 6 })) : []),
    ];
    if (!addresses.length)
      throw v4.status === 'rejected' ? v4.reason : Object.assign(new Error(host), { code: 'ENOTFOUND' });
    return addresses;
  };
}

/**
 * A connector's `lookup` (net.connect's) answered by `addresses`, which checks what it answers: the connection goes to
 * an address that was checked, never to a second answer of the DNS. An IP address is not looked up by the connector.
 */
export function connectLookup(addresses: (host: string) => Promise<HostAddress[]>): LookupFunction {
  return (hostname, options, callback) => {
    addresses(hostname.replace(/^\[|\]$/g, '')).then(
      (found) => {
        if ((options as { all?: boolean }).all) (callback as (e: null, a: HostAddress[]) => void)(null, found);
        else callback(null, found[0]!.address, found[0]!.family);
      },
      (err: Error) => callback(err as NodeJS.ErrnoException, '', 0),
    );
  };
}
