import { run } from './cli/program.js';

const code = await run(process.argv);
// The work is done: exit once stdout and stderr have taken everything written to them. Left to end by itself, the
// process would first wait for what no command needs any more — V8 finishing in the background its optimised
// compilation of fetch's HTTP parser (WebAssembly), tens of milliseconds after the answer was printed.
await Promise.all([flushed(process.stdout), flushed(process.stderr)]);
process.exit(code);

/** Resolves when everything written to `stream` so far has been handed to the system (or the stream is gone). */
function flushed(stream: NodeJS.WriteStream): Promise<void> {
  return new Promise((resolve) => {
    if (stream.destroyed || !stream.writable) return resolve();
    // Writes are taken in order: the callback of an empty one comes after those before it.
    stream.write('', () => resolve());
  });
}
