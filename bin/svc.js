#!/usr/bin/env -S node --max-semi-space-size=8
// --max-semi-space-size: `svc serve` allocates steadily for as long as it runs, and V8 would otherwise grow its
// young generation to 32 MB; 8 MB semi-spaces cost no measurable throughput and keep ~50 MB of resident memory.
import '../dist/main.js';
