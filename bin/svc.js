#!/usr/bin/env node
// No node flags on the line above: `svc serve` gives itself the ones a server wants (src/cli/commands/serve.ts), and
// any V8 flag here would slow every other command's start.
import module from 'node:module';

// Node ≥ 22.1 keeps the compiled code of svc on disk (in the system's temporary directory;
// NODE_DISABLE_COMPILE_CACHE=1 turns it off), so each later run compiles less. Node 20 has no such cache. The import
// below is dynamic so that it runs after the cache is on.
module.enableCompileCache?.();
await import('../dist/cli/svc.js');
