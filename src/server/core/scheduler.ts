// The scheduler: the one place that decides when jobs run. Workers are handlers of job kinds; the manual clock and
// the scheduler's own timer both drive them through the same step().
import type { Clock } from '../../lib/clock.js';
import { MINUTE, SECOND, onMonotonic } from '../../lib/clock.js';
import type { Logger } from '../../lib/log.js';
import { isDiskFull } from '../../lib/disk-full.js';
import { DEFAULT_QUEUE, type DueNow, type JobRow, type JobStore } from '../store/jobs.js';
import type { JobPayloads } from './rules/job-kinds.js';
import { DISK_FULL_WAIT_MS, jobRetryDelay } from './rules/retry-policy.js';
import type { GroupCommit } from '../store/db.js';
import { hop } from '../../lib/hops.js';

/**
 * Run again at `retryAt` (service clock: kept as the same delay from now, which a later step of the wall clock does not
 * move), with a new payload if given; the attempt count starts again.
 */
export type Later = { retryAt: number; payload?: unknown };
/**
 * What a handler answers: nothing (done), `Later`, or `finish`: writes to make in the same transaction that completes
 * or reschedules the job, answering which of the two.
 */
export type JobResult = void | Later | { finish: () => Later | void };
export type JobRun<P = unknown> = (payload: P, job: JobRow) => Promise<JobResult> | JobResult;
/**
 * What a job kind does: `run` (throwing means "try again later", with a growing backoff), and optionally `exhausted`,
 * called once when the last attempt has thrown, before the job is dropped — so that what the job was for does not
 * stay half done (a message stuck in `queued`).
 */
export type JobHandler<P = unknown> =
  | JobRun<P>
  | { run: JobRun<P>; exhausted?(payload: P, error: unknown): Promise<void> | void };
/** A handler for every kind of job (core/rules/job-kinds.ts), each taking its kind's payload. */
export type JobHandlers<P = JobPayloads> = { [K in keyof P]: JobHandler<P[K]> };

/**
 * How long a claim holds a job that its process has not finished (a finishing write that failed), on the process's own
 * time (performance.now()): neither a step of the wall clock nor a move of the manual clock ends one early or holds one
 * back, and a start releases every claim, whatever it says (store/jobs.ts releaseAll).
 */
const LEASE_MS = 5 * MINUTE;
const IDLE_POLL_MS = 5 * SECOND;

export interface Scheduler {
  start(): void;
  /** Stops the timer and waits for jobs in flight. */
  stop(): Promise<void>;
  /**
   * Asks for a step soon (after the current transaction has committed); `due`: the id of the job enqueued, due now,
   * that the step is asked for.
   */
  kick(due?: number): void;
  /** Claims the jobs due now and runs them; resolves with how many ran. */
  step(): Promise<number>;
  /** Runs every job due now, including jobs those jobs make due, and waits for jobs already in flight. */
  runDue(): Promise<number>;
}

/** What every scheduler runs on. */
export interface SchedulerDeps<P = JobPayloads> {
  jobs: JobStore;
  clock: Clock;
  log: Logger;
  handlers: JobHandlers<P>;
  /** Group commit for finishing jobs; direct writes when absent. */
  commit?: GroupCommit;
}

export function createScheduler<P = JobPayloads>(
  deps: SchedulerDeps<P> & { concurrency?: number; queue?: string },
): Scheduler {
  const { jobs, clock, log, handlers } = deps;
  const queue = deps.queue ?? DEFAULT_QUEUE;
  const concurrency = deps.concurrency ?? 32;
  // A claim is a write of its own: free slots are refilled a batch at a time, not one per finished job.
  const batch = Math.max(1, Math.ceil(concurrency / 4));
  const inflight = new Set<Promise<void>>();
  let timer: NodeJS.Timeout | undefined;
  let soon: NodeJS.Immediate | undefined;
  let running = false;
  const now = (): DueNow => ({ monotonic: clock.monotonic(), service: clock.now() });

  const write = deps.commit ?? (async <T>(fn: () => T) => fn());

  /**
   * Until when (on the monotonic reading) the queue is known to have no job due but those a kick handed over since
   * (`handed`, their ids), as the last claim found it and the kicks since told: a job that finishes before then needs
   * no step to look for more, which would find nothing, and the next step claims the handed jobs by their ids without
   * reading the lanes (bench:latency). A kick that names no job due now, or a job put back for later, forgets it.
   */
  let quietUntil = Number.NEGATIVE_INFINITY;
  let handed: number[] = [];
  const forgetQuiet = () => {
    quietUntil = Number.NEGATIVE_INFINITY;
    handed = [];
  };
  const quiet = () => quietUntil - clock.monotonic();

  async function runJob(job: JobRow): Promise<void> {
    // A kind no handler takes can only come from a database written by another version: it fails like a throw.
    const handler = (handlers as Record<string, JobHandler<unknown> | undefined>)[job.kind];
    const run = typeof handler === 'function' ? handler : handler?.run;
    let result: JobResult;
    try {
      if (!run) throw new Error(`no handler for job kind ${job.kind}`);
      result = await run(job.payload, job);
    } catch (err) {
      // A full disk is no fault of the job's: it waits for space without using up its attempts (a message is never
      // failed for it). The postponing write may not fit either; then the job runs again once its claim expires.
      forgetQuiet();
      if (isDiskFull(err)) {
        log.warn('job postponed: the disk is full', { job: job.id, kind: job.kind });
        await postpone(job.id);
        return;
      }
      const delay = jobRetryDelay(job.attempts);
      if (delay === null) {
        log.error('job failed for good', { job: job.id, kind: job.kind, attempts: job.attempts, error: String(err) });
        if (handler && typeof handler !== 'function' && handler.exhausted) {
          // try/catch: a clean-up that throws at once is logged like one that rejects, and the job is still dropped.
          try {
            await handler.exhausted(job.payload, err);
          } catch (e) {
            log.error('job clean-up failed', { job: job.id, kind: job.kind, error: String(e) });
          }
        }
        await write(() => jobs.complete(job.id));
      } else {
        log.warn('job failed, will retry', { job: job.id, kind: job.kind, attempts: job.attempts, error: String(err) });
        const at = clock.monotonic();
        await write(() => jobs.reschedule(job.id, at + delay, at));
      }
      return;
    }
    // try/catch, not .catch(): a .catch() chained onto the group commit's promise slowed every job's completion
    // (bench/README.md, bench:drain).
    try {
      await write(() => {
        const then = result && 'finish' in result ? result.finish() : result;
        if (then) {
          forgetQuiet();
          jobs.defer(job.id, onMonotonic(clock, then.retryAt), clock.monotonic(), then.payload);
        } else jobs.complete(job.id);
      });
    } catch (err) {
      forgetQuiet();
      log.error('finishing a job failed; it runs again once its claim expires', {
        job: job.id,
        kind: job.kind,
        error: String(err),
      });
    }
  }

  /**
   * Jobs met a full disk and their postponing could not be written either: their claims are given back as soon as a
   * write fits again (each step tries), rather than after the lease.
   */
  const stranded = new Set<number>();
  async function postpone(id: number): Promise<void> {
    try {
      const at = clock.monotonic();
      await write(() => jobs.postpone(id, at + DISK_FULL_WAIT_MS, at));
      stranded.delete(id);
    } catch {
      stranded.add(id);
    }
  }

  const canClaim = () => inflight.size === 0 || concurrency - inflight.size >= batch;

  /** How long until the next job is due, as the last claim found it (undefined: no claim since tick() read it). */
  let claimedWait: number | null | undefined;

  async function step(): Promise<number> {
    if (stranded.size) await Promise.all([...stranded].map(postpone));
    if (!canClaim()) return 0;
    const free = concurrency - inflight.size;
    let due: JobRow[];
    if (handed.length && handed.length <= free && quiet() > 0) {
      // They are all that is due: the lanes' turns have nothing to share out.
      const ids = handed;
      due = jobs.claimIds(now(), performance.now(), LEASE_MS, ids, queue);
      handed = [];
      claimedWait = quiet();
      // One was not there to claim (its enqueuing write rolled back, say): what the queue has is read again.
      if (due.length < ids.length) {
        forgetQuiet();
        claimedWait = undefined;
      }
    } else {
      const claimed = jobs.claimNext(now(), performance.now(), LEASE_MS, free, queue);
      due = claimed.jobs;
      claimedWait = claimed.dueIn;
      handed = [];
      quietUntil = claimed.dueIn === null ? Number.POSITIVE_INFINITY : clock.monotonic() + claimed.dueIn;
    }
    for (const job of due) {
      const p = runJob(job).finally(() => {
        inflight.delete(p);
        if (!running || !canClaim()) return;
        // Nothing else due yet: the next step comes when something is (a kick, or the timer), not now.
        const wait = quiet();
        arm(wait > 0 ? Math.min(wait, IDLE_POLL_MS) : 0);
      });
      inflight.add(p);
    }
    return due.length;
  }

  /**
   * The next step: on the loop's next turn for new work (`now`: a kick, the start), never behind a timer, since a 0 ms
   * timeout waits at least 1 ms on the way of every send (bench:latency); after `delay` otherwise. Slots freed by
   * finished jobs are refilled after a 0 ms timer: the jobs that finish meanwhile are refilled by the same claim.
   */
  function arm(delay: number, now = false) {
    if (!running || (soon && !now)) return; // a step already comes on the next turn
    disarm();
    if (now) soon = setImmediate(tick);
    else timer = setTimeout(tick, delay);
    (soon ?? timer)?.unref?.();
  }
  function disarm() {
    if (timer) clearTimeout(timer);
    if (soon) clearImmediate(soon);
    timer = soon = undefined;
  }

  async function tick() {
    hop('scheduler: step');
    timer = soon = undefined;
    let failed = false;
    claimedWait = undefined;
    try {
      await step();
    } catch (err) {
      failed = true;
      log.error('scheduler step failed', { error: String(err) });
    }
    // Every slot taken: the jobs in flight ask for the next step as they finish, and the queue need not be read now.
    if (!canClaim() && !failed) return arm(IDLE_POLL_MS);
    // The step's claim read when the next job is due in its own transaction; a step that failed to claim asks now.
    const wait = claimedWait === undefined ? jobs.dueIn(now(), queue) : claimedWait;
    if (wait == null) return arm(IDLE_POLL_MS);
    // A manual clock does not move by itself: due work runs now, later work waits for POST /sandbox/clock. A step
    // that failed (a claim that could not be written) is tried again 50 ms on, not on every turn.
    if (wait <= 0) return arm(canClaim() && !failed ? 0 : 50);
    arm(clock.mode === 'manual' ? IDLE_POLL_MS : Math.min(wait, IDLE_POLL_MS));
  }

  return {
    start() {
      running = true;
      arm(0, true);
    },
    async stop() {
      running = false;
      disarm();
      await Promise.allSettled([...inflight]);
    },
    kick(due) {
      hop('scheduler: told of a job');
      if (due !== undefined && quiet() > 0) handed.push(due);
      else forgetQuiet();
      if (!running || soon) return; // a step already comes on the next turn
      // On the next turn: the transaction that enqueued has committed by then.
      arm(0, true);
    },
    step,
    async runDue() {
      let ran = 0;
      for (;;) {
        ran += await step();
        if (inflight.size === 0) {
          const wait = jobs.dueIn(now(), queue);
          if (wait == null || wait > 0) return ran;
          continue;
        }
        await Promise.race(inflight);
      }
    },
  };
}

/**
 * The schedulers of every queue, run as one: started and stopped together, and `runDue` runs them all until none has
 * work due. They are built from what they run on and given their handlers when they start, since the handlers need
 * what is opened after them (core, the outbound side); until then a kick is a no-op and nothing is claimed.
 */
export interface Schedulers {
  /** Starts every queue's scheduler, running `handlers`; a start after stop() may leave them out: the same ones run. */
  start(handlers?: JobHandlers): void;
  stop(): Promise<void>;
  /** Asks the queue's scheduler for a step, creating it on the first job of a new queue (`due`: Scheduler's). */
  kick(queue: string, due?: number): void;
  /** A queue whose jobs were all dropped (its webhook endpoint is gone): its scheduler stops. */
  retire(queue: string): void;
  /** Runs every job due now in every queue, including what those jobs make due in any queue. */
  runDue(): Promise<number>;
}

/**
 * One scheduler per job queue: the default queue, and one per webhook endpoint (`concurrency` names a queue's
 * concurrency, the default queue's by default), so a receiver that hangs holds up only its own deliveries.
 */
export function createSchedulers(
  deps: Omit<SchedulerDeps, 'handlers'> & { concurrency?: (queue: string) => number | undefined },
): Schedulers {
  const all = new Map<string, Scheduler>();
  let handlers: JobHandlers | undefined;
  let running = false;
  // A queue's scheduler is made only once the handlers are known: before the first start there is none to kick.
  const get = (queue: string, run: JobHandlers) => {
    let s = all.get(queue);
    if (!s) {
      s = createScheduler({ ...deps, handlers: run, queue, concurrency: deps.concurrency?.(queue) });
      all.set(queue, s);
      if (running) s.start();
    }
    return s;
  };
  return {
    start(given) {
      if (handlers && given && given !== handlers)
        throw new Error('the schedulers run the handlers of their first start');
      handlers ??= given;
      if (!handlers) throw new Error('the schedulers are first started with their handlers');
      running = true;
      get(DEFAULT_QUEUE, handlers);
      // Queues with jobs left by a previous run (a webhook endpoint's retries) get their scheduler back.
      for (const queue of deps.jobs.queues()) get(queue, handlers);
      for (const s of all.values()) s.start();
    },
    async stop() {
      running = false;
      await Promise.all([...all.values()].map((s) => s.stop()));
    },
    kick(queue, due) {
      if (handlers) get(queue, handlers).kick(due);
    },
    retire(queue) {
      const s = all.get(queue);
      if (!s || queue === DEFAULT_QUEUE) return;
      all.delete(queue);
      void s.stop();
    },
    async runDue() {
      let total = 0;
      for (;;) {
        let ran = 0;
        for (const s of [...all.values()]) ran += await s.runDue();
        total += ran;
        if (ran === 0) return total;
      }
    },
  };
}
