// A thread of the static checks (static.ts): one task at a time, in the order posted — the checks of static-checks.ts,
// or html-validate's (validator.ts), each loaded by the first task that needs it.
import { parentPort } from 'node:worker_threads';
import type { StaticInput } from './static-checks.js';

type Task = { id: number; task: 'checks' | 'validate'; input: StaticInput };

let queue: Promise<void> = Promise.resolve();
parentPort!.on('message', (m: Task) => {
  queue = queue.then(() => work(m));
});

async function work({ id, task, input }: Task): Promise<void> {
  try {
    const checks = await import('./static-checks.js');
    const result =
      task === 'checks'
        ? checks.runStatic(input)
        : checks.validation(input.html, (await import('./validator.js')).validateHtml);
    parentPort!.postMessage({ id, result });
  } catch (err) {
    parentPort!.postMessage({ id, error: err instanceof Error ? err.message : String(err) });
  }
}
