#!/usr/bin/env -S node --max-semi-space-size=8 --heap-growing-percent=100
// `svc serve` allocates steadily for as long as it runs, and V8 would otherwise size its heap for throughput:
// --max-semi-space-size: the young generation stops at 8 MB semi-spaces instead of 32 MB (~50 MB of resident memory,
// no measurable throughput);
// --heap-growing-percent=100: the old generation may grow to twice what survived the last full collection before it
// collects again, instead of up to four times. The drain bench's peak RSS fell from 240–256 to 196–204 MB at the same
// throughput; the send bench measured 5–15 % fewer accepted/s, within its targets (README, Benchmarks).
import module from 'node:module';

// Node ≥ 22.1 keeps the compiled code of svc and its dependencies on disk (in the system's temporary directory;
// NODE_DISABLE_COMPILE_CACHE=1 turns it off), so each later run compiles less: on Node 24, `svc emails send` starts
// in 178 instead of 212 ms (bench:cli-start). Node 20 has no such cache. The import below is dynamic so that it
// runs after the cache is on.
module.enableCompileCache?.();
await import('../dist/cli/svc.js');
