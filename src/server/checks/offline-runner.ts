// The offline checks (offline-checks.ts, and html-validate's part, validator.ts) take tens of milliseconds each for a
// newsletter: `svc serve` runs them on two threads of their own side by side (offline-thread.ts), started at the first
// message (or before it, by warm()), so the event loop keeps answering meanwhile and a report waits for the longer of the two. A message's task
// has a deadline and a memory cap on its thread: a message that overruns either ends the thread, is answered with a
// finding that says so, and the next message's task runs on a new thread (docs/checks.md#how-long-it-takes).
import type { Worker } from 'node:worker_threads';
import type { Logger } from '../../lib/log.js';
import { startThread } from '../../lib/threads.js';
import type { CheckFinding } from '../../contract/checks.js';
import type { Failure } from './outcome.js';
import type { StaticInput, StaticResult } from './offline-checks.js';
import type { Validation } from './validator.js';

export interface OfflineRunner {
  run(input: StaticInput): Promise<StaticResult>;
  /**
   * Starts the threads now, in the background, so that the first message finds them loaded (spares, below); resolves
   * once they are started and loaded.
   */
  warm(): Promise<void>;
  close(): Promise<void>;
}

/**
 * The finding of a check (or part of one, `what`) that did not finish on the message: a warning, so that
 * `svc inbox check --fail-on warning` does not let such mail through unchecked.
 */
export function unfinished(what: string, f: Failure): CheckFinding {
  return f.overran
    ? {
        severity: 'warning',
        rule: 'check-timeout',
        title: `${what} did not finish in time`,
        detail: `On this message ${f.failed} and was stopped, so what it would find is not known. HTML this large or this intricate is the usual cause.`,
      }
    : {
        severity: 'warning',
        rule: 'check-failed',
        title: `${what} failed on this message`,
        detail: `${f.failed.charAt(0).toUpperCase()}${f.failed.slice(1)}, so what it would find is not known.`,
      };
}

/**
 * html-validate's findings added: invalid markup to the content check's, its accessibility rules' to that check's; or,
 * when it did not finish, a finding to each that says so.
 */
export function withValidation(r: StaticResult, v: Validation | null): StaticResult {
  if (!v) return r;
  const what = 'HTML validation (html-validate)';
  const found = 'ok' in v ? v.ok : { invalid: [unfinished(what, v)], accessibility: [unfinished(what, v)] };
  return {
    ...r,
    content: 'ok' in r.content ? { ok: [...r.content.ok, ...found.invalid] } : r.content,
    accessibility:
      r.accessibility && 'ok' in r.accessibility
        ? { ok: [...r.accessibility.ok, ...found.accessibility] }
        : r.accessibility,
  };
}

/** How long a message's offline checks may take on their thread, and the heap the thread may grow to, by default. */
const CHECKS_DEADLINE_MS = 10_000;
const CHECKS_MEMORY_MB = 256;
/** How often a busy thread's heap is looked at. */
const HEAP_WATCH_MS = 50;

/** A message's task that did not finish: its thread overran the deadline (and was ended), or died. */
class Unfinished extends Error {
  constructor(
    message: string,
    readonly overran: boolean,
  ) {
    super(message);
  }
}

export interface OfflineRunnerOptions {
  /** Run on two threads of their own (else one after the other on the caller's, as the bench compares). */
  thread: boolean;
  log: Logger;
  /** How long one message's task may run on its thread (default CHECKS_DEADLINE_MS). */
  deadlineMs?: number;
  /** The heap a thread may grow to, in MB (default CHECKS_MEMORY_MB). */
  memoryMb?: number;
}

type Task = 'checks' | 'validate';

/** A thread of one kind of task (offline-thread.ts), which keeps no process alive. */
function startWorker(task: Task, memoryMb: number): Worker {
  const worker = startThread(new URL('./offline-thread.js', import.meta.url), {
    workerData: { task },
    resourceLimits: { maxOldGenerationSizeMb: 2 * memoryMb },
  });
  worker.unref();
  return worker;
}

/**
 * Threads started before any message is checked (a runner's `warm()`: svc-mail/testing's sandbox when it starts), at
 * most one of each task in the process, each taken, loaded or still loading, by the first lane of any runner that then
 * needs a thread of its task and memory cap. A later `warm()` starts one again: sandboxes started side by side load one
 * pair between them, not a pair each, and each sandbox's first check finds one. Ended when the last runner that warmed
 * closes.
 */
const spares = (() => {
  type Spare = { worker: Worker; memoryMb: number; ready: boolean; off(): void };
  const threads = new Map<Task, Spare>();
  let holders = 0;
  /** Starts the spare of a task; resolves once it is ready, gone or taken. */
  const spare = (task: Task, memoryMb: number, log: Logger) =>
    new Promise<void>((settled) => {
      const worker = startWorker(task, memoryMb);
      const onMessage = (m: { ready?: true }) => {
        if (!m.ready) return;
        s.ready = true;
        settled();
      };
      const onError = (err: Error) => log.error('checks thread failed', { task, error: err.stack ?? err.message });
      const onExit = () => {
        if (threads.get(task) === s) threads.delete(task);
        settled();
      };
      const s: Spare = {
        worker,
        memoryMb,
        ready: false,
        off() {
          worker.off('message', onMessage).off('error', onError).off('exit', onExit);
          settled();
        },
      };
      worker.on('message', onMessage).on('error', onError).on('exit', onExit);
      threads.set(task, s);
    });
  return {
    /** Holds the spares until `release()`, starting those missing; resolves once they are ready (or gone). */
    async hold(memoryMb: number, log: Logger): Promise<void> {
      holders++;
      const tasks = (['checks', 'validate'] as const).filter((task) => !threads.has(task));
      await Promise.all(tasks.map((task) => spare(task, memoryMb, log)));
    },
    async release() {
      if (--holders) return;
      const ending = [...threads.values()];
      threads.clear();
      await Promise.all(ending.map((s) => s.worker.terminate()));
    },
    /** The spare of a task, now the caller's, when there is one of that memory cap. */
    take(task: Task, memoryMb: number): { worker: Worker; ready: boolean } | undefined {
      const s = threads.get(task);
      if (s?.memoryMb !== memoryMb) return undefined;
      threads.delete(task);
      s.off();
      return s;
    },
  };
})();

/**
 * One thread doing one kind of task, one message at a time in the order asked, each within the deadline and the memory
 * cap. A thread that overruns either is ended, and one that dies is gone: either way the task it held fails with
 * Unfinished, and the next task starts a new thread.
 *
 * The cap is watched from here: V8's own limit (resourceLimits, set above the cap as a last resort) ends a worker only
 * at best — an allocation that passes it at the wrong moment aborts the whole process instead, so a thread is ended
 * when its heap passes the cap, well before it gets there.
 */
function lane<T>(task: Task, o: Required<Omit<OfflineRunnerOptions, 'thread'>>) {
  type Job = { input: StaticInput; resolve: (r: T) => void; reject: (e: Error) => void };
  type Thread = {
    worker: Worker;
    ready: boolean;
    job: Job | null;
    error: Error | null;
    timers: NodeJS.Timeout[];
  };
  const queue: Job[] = [];
  let thread: Thread | null = null;
  let closed = false;
  const outOfMemory = `its thread ran out of memory (${o.memoryMb} MB)`;
  /** The thread's task, taken from it. */
  const finish = (t: Thread) => {
    const job = t.job;
    t.job = null;
    for (const timer of t.timers.splice(0)) clearTimeout(timer);
    return job;
  };
  /** Ends the thread with the task it is stuck in; the next task starts a new one. */
  const end = (t: Thread, why: Unfinished) => {
    finish(t)?.reject(why);
    if (thread === t) thread = null;
    void t.worker.terminate();
    next();
  };
  const start = (): Thread => {
    const { worker, ready } = spares.take(task, o.memoryMb) ?? { worker: startWorker(task, o.memoryMb), ready: false };
    const t: Thread = { worker, ready, job: null, error: null, timers: [] };
    worker.on('message', (m: { ready?: true; result?: T; error?: string }) => {
      if (m.ready) t.ready = true;
      else {
        const job = finish(t);
        if (m.error === undefined) job?.resolve(m.result as T);
        else job?.reject(new Unfinished(m.error, false));
      }
      next();
    });
    worker.on('error', (err) => {
      t.error = err;
      o.log.error('checks thread failed', { task, error: err.stack ?? err.message });
    });
    worker.on('exit', (code) => {
      if (thread === t) thread = null;
      const job = finish(t);
      const why =
        (t.error as NodeJS.ErrnoException | null)?.code === 'ERR_WORKER_OUT_OF_MEMORY'
          ? outOfMemory
          : `its thread stopped (${t.error?.message ?? `exit code ${code}`})`;
      // A thread that dies before it is ready fails the task that was to run next, so that a thread that cannot start
      // is not started over and over.
      (job ?? (t.ready ? undefined : queue.shift()))?.reject(new Unfinished(why, false));
      next();
    });
    return t;
  };
  const next = () => {
    if (closed || !queue.length || thread?.job) return;
    const t = (thread ??= start());
    if (!t.ready) return;
    const job = queue.shift()!;
    t.job = job;
    t.timers.push(
      setTimeout(() => end(t, new Unfinished(`it ran for longer than ${o.deadlineMs / 1000} s`, true)), o.deadlineMs),
    );
    // Node 22.14 and 22.15 cannot tell a worker's heap: V8's limit is all there is.
    if (typeof t.worker.getHeapStatistics === 'function') {
      const watch = () =>
        t.timers.push(
          setTimeout(async () => {
            const heap = await t.worker.getHeapStatistics().catch(() => null);
            if (t.job !== job) return;
            if (heap && heap.used_heap_size > o.memoryMb * 2 ** 20) end(t, new Unfinished(outOfMemory, false));
            else watch();
          }, HEAP_WATCH_MS),
        );
      watch();
    }
    t.worker.postMessage(job.input);
  };
  return {
    post: (input: StaticInput) =>
      new Promise<T>((resolve, reject) => {
        queue.push({ input, resolve, reject });
        next();
      }),
    async close() {
      closed = true;
      const t = thread;
      thread = null;
      const stopped = new Unfinished('the server stopped', false);
      for (const job of [...(t ? [finish(t)] : []), ...queue.splice(0)]) job?.reject(stopped);
      if (!t) return;
      t.worker.removeAllListeners('exit');
      await t.worker.terminate();
    },
  };
}

/** The offline checks, on their threads (`thread: false`: one after the other on the caller's, as the bench compares). */
export function createOfflineRunner(opts: OfflineRunnerOptions): OfflineRunner {
  if (!opts.thread) {
    // Loaded when first used.
    const modules = Promise.all([import('./offline-checks.js'), import('./validator.js')]);
    return {
      async run(input) {
        const [{ runOffline }, { validation }] = await modules;
        const r = runOffline(input);
        return input.only ? r : withValidation(r, validation(input.html));
      },
      warm: async () => {},
      close: async () => {},
    };
  }
  const limits = {
    log: opts.log,
    deadlineMs: opts.deadlineMs ?? CHECKS_DEADLINE_MS,
    memoryMb: opts.memoryMb ?? CHECKS_MEMORY_MB,
  };
  const checks = lane<StaticResult>('checks', limits);
  const validate = lane<Validation | null>('validate', limits);
  let warmed = false;
  let closed = false;
  return {
    async run(input) {
      if (input.only) return checks.post(input);
      const [r, v] = await Promise.allSettled([checks.post(input), validate.post(input)]);
      if (r.status === 'rejected') throw r.reason;
      return withValidation(r.value, v.status === 'fulfilled' ? v.value : failureOf(v.reason));
    },
    async warm() {
      if (warmed || closed) return;
      warmed = true;
      await spares.hold(limits.memoryMb, opts.log);
    },
    async close() {
      closed = true;
      const held = warmed;
      warmed = false;
      await Promise.all([checks.close(), validate.close(), held && spares.release()]);
    },
  };
}

/** Why a task did not finish, as an outcome. */
export const failureOf = (err: unknown): Failure =>
  err instanceof Unfinished && err.overran
    ? { failed: err.message, overran: true }
    : { failed: err instanceof Error ? err.message : String(err) };
