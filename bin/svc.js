#!/usr/bin/env -S node --max-semi-space-size=8 --heap-growing-percent=100
// `svc serve` allocates steadily for as long as it runs, and V8 would otherwise size its heap for throughput:
// --max-semi-space-size: the young generation stops at 8 MB semi-spaces instead of 32 MB (~50 MB of resident memory,
// no measurable throughput);
// --heap-growing-percent=100: the old generation may grow to twice what survived the last full collection before it
// collects again, instead of up to four times. The drain bench's peak RSS fell from 240–256 to 196–199 MB at the same
// throughput; the send bench measured 5–15 % fewer accepted/s, within its targets (README, Benchmarks).
import '../dist/main.js';
