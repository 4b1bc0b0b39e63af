// `--dns sandbox`: the sandbox zone stored in SQLite answers as a resolver would.
import type { DnsAnswer, Resolver } from '../core/deps.js';
import type { DomainStore } from '../store/domains.js';

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
      return [{ state: 'found', values: JSON.parse(row.vals) }];
    },
    async resolve(name, rrtype) {
      const row = store.zoneGet(name, rrtype);
      if (!row || row.state !== 'visible') throw notFound(name);
      const values = JSON.parse(row.vals) as string[];
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
