// The classes core/metrics.ts takes from prom-client's own files are the ones its index exports: an upgrade that
// changed what those files hold fails here rather than in a scrape.
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { promClasses } from './prom-client.js';

describe('promClasses', () => {
  it("are prom-client's Registry, Counter, Gauge and Histogram, as its index exports them", () => {
    const index = createRequire(import.meta.url)('prom-client');
    const classes = promClasses();
    expect(classes.Registry).toBe(index.Registry);
    expect(classes.Counter).toBe(index.Counter);
    expect(classes.Gauge).toBe(index.Gauge);
    expect(classes.Histogram).toBe(index.Histogram);
  });
});
