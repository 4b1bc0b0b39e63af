// `--dns sandbox`: the sandbox zone stored in SQLite answers as a resolver would; the sandbox routes write records
// into it and take them out.
import type { DnsAnswer, Resolver } from './deps.js';
import type { DomainStore, ZoneRecord } from '../store/domains.js';

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

export function sandboxResolver(store: DomainStore): Resolver {
  return {
    name: 'sandbox',
    async lookup(host, type): Promise<DnsAnswer[]> {
      const row = store.zoneGet(host, type);
      if (!row) return [{ state: 'none' }];
      if (row.state === 'propagating') return [{ state: 'propagating' }];
      return [{ state: 'found', values: row.values }];
    },
    async resolve(name, rrtype) {
      const row = store.zoneGet(name, rrtype);
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

/** The sandbox zone: its resolver, and the records the sandbox routes put and delete. */
export function createZone(store: DomainStore) {
  return {
    resolver: sandboxResolver(store),
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
