// The thread of the static checks (static.ts): one message at a time, in the order posted.
import { parentPort } from 'node:worker_threads';
import { runStatic, type StaticInput } from './static-checks.js';

parentPort!.on('message', ({ id, input }: { id: number; input: StaticInput }) => {
  try {
    parentPort!.postMessage({ id, result: runStatic(input) });
  } catch (err) {
    parentPort!.postMessage({ id, error: err instanceof Error ? err.message : String(err) });
  }
});
