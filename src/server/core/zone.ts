// `--dns sandbox`: the sandbox zone stored in SQLite answers as a resolver would; the sandbox routes write records
// into it and take them out.
import type { DnsAnswer, ProviderHosts, Resolver } from './deps.js';
import type { DomainStore, ZoneRecord } from '../store/domains.js';

/**
 * The provider's own records, which customers' records lean on: the SPF host their MAIL FROM domains include. Locally
 * the provider sends from this machine, and the sink sees the service's mail come from a loopback address, so its SPF
 * record covers those: a receiver's SPF check of the service's own mail passes (docs/checks.md). A record put at the
 * same host and type through the sandbox routes takes its place.
 */
export function providerRecords(hosts: ProviderHosts): ZoneRecord[] {
  return [{ host: hosts.spf, type: 'TXT', values: ['v=spf1 ip4:127.0.0.0/8 ip6:::1 -all'], state: 'visible' }];
}

function notFound(name: string): Error {
  return Object.assign(new Error(`queryTxt ENOTFOUND ${name}`), { code: 'ENOTFOUND' });
}

/** Splits a TXT value into 255-byte character-strings, as DNS carries it. */
export function txtChunks(value: string): string[] {
  const bytes = Buffer.from(value, 'utf8');
  const out: string[] = [];
  for (let i = 0; i < bytes.length; i += 255) out.push(bytes.subarray(i, i + 255).toString('utf8'));
  return out.length ? out : [''];
}

export function sandboxResolver(store: DomainStore, provider: ZoneRecord[] = []): Resolver {
  const builtIn = new Map(provider.map((r) => [`${r.host} ${r.type}`, r]));
  const get = (host: string, type: string) =>
    store.zoneGet(host, type) ?? builtIn.get(`${host.toLowerCase().replace(/\.$/, '')} ${type}`);
  return {
    name: 'sandbox',
    async lookup(host, type): Promise<DnsAnswer[]> {
      const row = get(host, type);
      if (!row) return [{ state: 'none' }];
      if (row.state === 'propagating') return [{ state: 'propagating' }];
      return [{ state: 'found', values: row.values }];
    },
    async resolve(name, rrtype) {
      const row = get(name, rrtype);
      if (row?.state !== 'visible') throw notFound(name);
      const values = row.values;
      if (rrtype === 'TXT') return values.map(txtChunks);
      if (rrtype === 'MX') {
        return values.map((v) => {
          const [priority, exchange] = v.split(/\s+/);
          return { priority: Number(priority), exchange };
        });
      }
      return values;
    },
  };
}

/** The sandbox zone: its resolver (with the provider's own records), and the records the sandbox routes put and delete. */
export function createZone(store: DomainStore, hosts: ProviderHosts) {
  return {
    resolver: sandboxResolver(store, providerRecords(hosts)),
    /** The record of a host and type, as stored. */
    get: (host: string, type: string) => store.zoneGet(host, type),
    /** PUT /sandbox/dns: sets a host's records of one type (the host in lower case, without a final dot). */
    put(record: { host: string; type: string; values: string[]; state?: ZoneRecord['state'] }) {
      const host = record.host.toLowerCase().replace(/\.$/, '');
      const state = record.state ?? 'visible';
      store.zonePut(host, record.type, record.values, state);
      return { host, type: record.type, values: record.values, state };
    },
    /** DELETE /sandbox/dns: removes a host's records of one type. */
    delete(host: string, type: string): void {
      store.zoneDelete(host.toLowerCase(), type);
    },
  };
}
export type Zone = ReturnType<typeof createZone>;
