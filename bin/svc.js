#!/usr/bin/env node
// No node flags and no environment on the line above: any V8 flag given at start makes Node compile each built-in
// module it loads afterwards from source instead of from the compiled code it ships (that code is tied to V8's default
// flags), which cost every command a third of its start. `svc serve` gives itself the flags and the malloc settings a
// long-running server wants (SERVE_NODE_FLAGS and SERVE_ENV in src/cli/commands/serve-process.ts, which say why).
import module from 'node:module';

// Node ≥ 22.1 keeps the compiled code of svc on disk where it keeps its compile cache by default (the system's
// temporary directory, or NODE_COMPILE_CACHE; NODE_DISABLE_COMPILE_CACHE=1 turns it off), so each later run compiles
// less; where that directory cannot be written, Node carries on without it. Node 20 has no such cache. The import
// below is dynamic so that it runs after the cache is on.
module.enableCompileCache?.();
await import('../dist/cli/svc.js');
