#!/usr/bin/env -S MALLOC_MMAP_THRESHOLD_=131072 MALLOC_TRIM_THRESHOLD_=4194304 node --max-semi-space-size=8 --heap-growing-percent=100 --expose-gc
// `svc serve` allocates steadily for as long as it runs, and V8 would otherwise size its heap for throughput:
// --max-semi-space-size: the young generation stops at 8 MB semi-spaces instead of 32 MB (~50 MB of resident memory,
// no measurable throughput);
// --heap-growing-percent=100: the old generation may grow to twice what survived the last full collection before it
// collects again, instead of up to four times. The drain bench's peak RSS fell from 240–256 to 196–204 MB at the same
// throughput; the send bench measured 5–15 % fewer accepted/s, within its targets (README, Benchmarks).
// MALLOC_MMAP_THRESHOLD_ (glibc; other C libraries ignore it): every allocation of 128 KiB or more gets memory of its
// own, given back to the system when it is freed. glibc's default raises that threshold to the size of the largest
// block freed so far (up to 32 MiB), so once a big message had passed, the next ones' buffers were carved from the
// heap and stayed resident after they were freed: bench:big-mail left 356 MB resident a minute after its last
// message instead of 216. MALLOC_TRIM_THRESHOLD_: fixing the first also fixes the free space kept at the top of the
// heap at 128 KiB (the default raises it with the other), and the heap then shrank and grew again about once a
// message in a drain of small ones (2,106 brk calls for 2,000 messages instead of 130); 4 MiB keeps that as before.
// --expose-gc: `svc serve` starts a collection when a big message is through and nothing else is in delivery
// (workers/delivery.ts): left to V8, a server gone idle kept such a message's copies resident for up to a minute.
import module from 'node:module';

// Node ≥ 22.1 keeps the compiled code of svc and its dependencies on disk (in the system's temporary directory;
// NODE_DISABLE_COMPILE_CACHE=1 turns it off), so each later run compiles less: on Node 24, `svc emails send` starts
// in 178 instead of 212 ms (bench:cli-start). Node 20 has no such cache. The import below is dynamic so that it
// runs after the cache is on.
module.enableCompileCache?.();
await import('../dist/main.js');
