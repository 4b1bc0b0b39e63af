// A thread of the offline checks (offline-runner.ts): one kind of task — the checks of offline-checks.ts, or html-validate's
// (validator.ts) — one message at a time. It loads what its task needs, and nothing of the other's, and runs it once on a
// small document (which builds html-validate's configuration) before it says it is ready, so that a message's deadline
// counts its own work.
import { parentPort, workerData } from 'node:worker_threads';
import type { StaticInput } from './offline-checks.js';

const { task } = workerData as { task: 'checks' | 'validate' };
let run: (input: StaticInput) => unknown;
if (task === 'validate') {
  const { validation } = await import('./validator.js');
  run = (input) => validation(input.html);
} else run = (await import('./offline-checks.js')).runOffline;
run({
  html: '<!doctype html><html lang="en"><head><title>.</title></head><body><p>.</p></body></html>',
  sentHtmlBytes: 0,
  text: null,
  subject: null,
  from: null,
  headers: [],
});

parentPort!.on('message', (input: StaticInput) => {
  try {
    parentPort!.postMessage({ result: run(input) });
  } catch (err) {
    parentPort!.postMessage({ error: err instanceof Error ? err.message : String(err) });
  }
});
parentPort!.postMessage({ ready: true });
