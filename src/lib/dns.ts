import { promises as dns } from 'node:dns';

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
