// `--dns system`: real DNS through node's resolver, one view per configured server.
import { NO_RECORD_CODES, makeResolver, withTimeout } from '../../lib/dns.js';
import type { DnsAnswer, LookupType, Resolver } from '../core/deps.js';

/** How long a lookup may take by default: one slow resolver never holds a check longer than this. */
export const LOOKUP_TIMEOUT_MS = 5000;

export function systemResolver(servers: string[] = [], timeoutMs = LOOKUP_TIMEOUT_MS): Resolver {
  const views = (servers.length ? servers : [null]).map((s) => makeResolver(s, timeoutMs));
  async function one(r: (typeof views)[number], host: string, type: LookupType): Promise<DnsAnswer> {
    try {
      let values: string[];
      if (type === 'TXT') values = (await withTimeout(r.resolveTxt(host), timeoutMs)).map((chunks) => chunks.join(''));
      else if (type === 'CNAME') values = await withTimeout(r.resolveCname(host), timeoutMs);
      else values = (await withTimeout(r.resolveMx(host), timeoutMs)).map((mx) => `${mx.priority} ${mx.exchange}`);
      return values.length ? { state: 'found', values } : { state: 'none' };
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code ?? '';
      if (NO_RECORD_CODES.has(code)) return { state: 'none' };
      return { state: 'error', error: code || (err as Error).message };
    }
  }
  return {
    name: 'system',
    lookup: (host, type) => Promise.all(views.map((r) => one(r, host, type))),
    resolve: (name, rrtype) => withTimeout(views[0]!.resolve(name, rrtype) as Promise<unknown>, timeoutMs),
  };
}
