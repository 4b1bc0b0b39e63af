// The static checks (static-checks.ts, and html-validate's part, validator.ts) take tens of milliseconds each for a
// newsletter: `svc serve` runs them on two threads of their own side by side (static-thread.ts), started at the first
// message, so the event loop keeps answering meanwhile and a report waits for the longer of the two.
import type { Worker } from 'node:worker_threads';
import type { Logger } from '../../lib/log.js';
import { startThread } from '../threads.js';
import type { StaticInput, StaticResult, Validation } from './static-checks.js';

export interface StaticRunner {
  run(input: StaticInput): Promise<StaticResult>;
  close(): Promise<void>;
}

/** html-validate's findings added: invalid markup to the content check's, its accessibility rules' to that check's. */
export function withValidation(r: StaticResult, v: Validation | null): StaticResult {
  if (!v) return r;
  if ('failed' in v) return { ...r, accessibility: r.accessibility && v };
  return {
    ...r,
    content: 'ok' in r.content ? { ok: [...r.content.ok, ...v.ok.invalid] } : r.content,
    accessibility:
      r.accessibility && 'ok' in r.accessibility
        ? { ok: [...r.accessibility.ok, ...v.ok.accessibility] }
        : r.accessibility,
  };
}

/**
 * One thread doing one kind of task, started when first needed, one task at a time in the order posted; a thread
 * that dies fails the tasks it held, and the next task starts a new one.
 */
function lane<T>(task: 'checks' | 'validate', log: Logger) {
  const pending = new Map<number, { resolve: (r: T) => void; reject: (e: Error) => void }>();
  let thread: Worker | null = null;
  let next = 0;
  const start = () => {
    const t = startThread(new URL('./static-thread.js', import.meta.url));
    t.unref();
    t.on('message', (m: { id: number; result?: T; error?: string }) => {
      const p = pending.get(m.id);
      if (!p) return;
      pending.delete(m.id);
      if (m.error === undefined) p.resolve(m.result as T);
      else p.reject(new Error(m.error));
    });
    t.on('error', (err) => log.error('checks thread failed', { task, error: err.stack ?? err.message }));
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
    post: (input: StaticInput) =>
      new Promise<T>((resolve, reject) => {
        const t = (thread ??= start());
        const id = next++;
        pending.set(id, { resolve, reject });
        t.postMessage({ id, task, input });
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

/** The static checks, on their threads (`thread: false`: one after the other on the caller's, as the bench compares). */
export function createStaticRunner(opts: { thread: boolean; log: Logger }): StaticRunner {
  if (!opts.thread) {
    // Loaded when first used.
    const modules = Promise.all([import('./static-checks.js'), import('./validator.js')]);
    return {
      async run(input) {
        const [checks, { validateHtml }] = await modules;
        const r = checks.runStatic(input);
        return input.only ? r : withValidation(r, checks.validation(input.html, validateHtml));
      },
      close: async () => {},
    };
  }
  const checks = lane<StaticResult>('checks', opts.log);
  const validate = lane<Validation | null>('validate', opts.log);
  return {
    async run(input) {
      if (input.only) return checks.post(input);
      const [r, v] = await Promise.all([checks.post(input), validate.post(input)]);
      return withValidation(r, v);
    },
    async close() {
      await Promise.all([checks.close(), validate.close()]);
    },
  };
}
