import { VERSION } from './lib/version.js';

// `svc --version` alone is answered before the command tree is loaded (commander and the root's options: a third of
// its start; bench:cli-start). With anything else on the line, commander reads the flag as it always does.
const [, , only, ...rest] = process.argv;
const versionAlone = rest.length === 0 && (only === '--version' || only === '-V');
if (versionAlone) process.stdout.write(`${VERSION}\n`);
const code = versionAlone ? 0 : await (await import('./cli/program.js')).run(process.argv);
// The work is done: exit once stdout and stderr have taken everything written to them, rather than when nothing is
// left for the event loop — what a command leaves behind (a kept-alive connection, a library's timer) is not worth
// waiting for. (V8's compilation threads are joined even by process.exit: what would keep them busy is kept away
// where the client is made, in cli/context.ts.)
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
