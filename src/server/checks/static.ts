// The static checks (static-checks.ts) take tens of milliseconds for a newsletter: `svc serve` runs them on a thread of
// their own (static-thread.ts), started at the first message, so the event loop keeps answering meanwhile.
import type { Worker } from 'node:worker_threads';
import type { Logger } from '../../lib/log.js';
import { startThread } from '../threads.js';
import type { StaticInput, StaticResult } from './static-checks.js';

export interface StaticRunner {
  run(input: StaticInput): Promise<StaticResult>;
  close(): Promise<void>;
}

/**
 * The static checks on a thread started at the first message (`thread: false`: on the caller's, as the benchmark
 * compares). One message at a time, in the order posted; a thread that dies fails the messages it held, and the next
 * message starts a new one.
 */
export function createStaticRunner(opts: { thread: boolean; log: Logger }): StaticRunner {
  if (!opts.thread) {
    // On the caller's thread, loaded when first used.
    const checks = import('./static-checks.js');
    return { run: async (input) => (await checks).runStatic(input), close: async () => {} };
  }
  const pending = new Map<number, { resolve: (r: StaticResult) => void; reject: (e: Error) => void }>();
  let thread: Worker | null = null;
  let next = 0;
  const start = () => {
    const t = startThread(new URL('./static-thread.js', import.meta.url));
    t.unref();
    t.on('message', (m: { id: number; result?: StaticResult; error?: string }) => {
      const p = pending.get(m.id);
      if (!p) return;
      pending.delete(m.id);
      if (m.result) p.resolve(m.result);
      else p.reject(new Error(m.error ?? 'the checks failed'));
    });
    t.on('error', (err) => opts.log.error('checks thread failed', { error: err.stack ?? err.message }));
    t.on('exit', (code) => {
      if (thread === t) thread = null;
      for (const [id, p] of pending) {
        pending.delete(id);
        p.reject(new Error(`the checks' thread stopped (exit code ${code})`));
      }
    });
    return t;
  };
  return {
    run: (input) =>
      new Promise((resolve, reject) => {
        const t = (thread ??= start());
        const id = next++;
        pending.set(id, { resolve, reject });
        t.postMessage({ id, input });
      }),
    async close() {
      const t = thread;
      thread = null;
      if (!t) return;
      t.removeAllListeners('exit');
      await t.terminate();
    },
  };
}
