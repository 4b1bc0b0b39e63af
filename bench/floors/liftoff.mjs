// Preloaded (--import) to give a floor script what svc gives itself (cli/context.ts): fetch's implementation loaded,
// then WebAssembly kept to Liftoff, so the process does not wait at exit for V8 to optimise the HTTP parser.
void globalThis.Response;
process.getBuiltinModule('node:v8').setFlagsFromString('--liftoff-only');
