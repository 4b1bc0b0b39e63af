// prom-client's metric classes (core/metrics.ts), loaded from their own files — lib/registry, lib/counter, lib/gauge,
// lib/histogram — rather than through its index, which loads besides them the push gateway, cluster aggregation,
// summaries (tdigest), the default process metrics and OpenTelemetry's API: some 40 ms more of every server's start,
// measured after the server's own modules, for what only a scrape or nothing at all needs. prom-client's package.json
// has no `exports` map, so the files resolve; each is the very class the index exports (prom-client.test.ts). Should a
// later prom-client move one, the index is loaded instead: a slower start, the same classes. The index itself (the
// process metrics) is loaded by the first scrape.
import { createRequire } from 'node:module';
import type * as PromClient from 'prom-client';

const require = createRequire(import.meta.url);

export type PromClasses = Pick<typeof PromClient, 'Registry' | 'Counter' | 'Gauge' | 'Histogram'>;

let loaded: PromClasses | undefined;

/** The four classes, from their files (or the index, when a file is not where it was). */
export function promClasses(): PromClasses {
  if (!loaded) {
    try {
      loaded = {
        Registry: require('prom-client/lib/registry'),
        Counter: require('prom-client/lib/counter'),
        Gauge: require('prom-client/lib/gauge'),
        Histogram: require('prom-client/lib/histogram'),
      };
    } catch {
      loaded = require('prom-client') as typeof PromClient;
    }
  }
  return loaded;
}
