import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { HOUR, MINUTE, SECOND, manualClock, realClock, type ManualClock } from '../../lib/clock.js';
import { steppableTime } from '../../../test/helpers/clock.js';
import { silentLogger } from '../../lib/log.js';
import { openDb, type Db } from '../store/db.js';
import { createJobStore, DEFAULT_QUEUE, type DueNow, type JobRow, type JobStore } from '../store/jobs.js';
import { createScheduler, createSchedulers, type JobHandler, type JobHandlers, type Scheduler } from './scheduler.js';

const T0 = Date.UTC(2026, 7, 1, 12, 0, 0);

interface Rig {
  db: Db;
  jobs: JobStore;
  clock: ManualClock;
  scheduler: Scheduler;
  enqueue(kind: string, payload: unknown, runAt?: number): number;
  /** Now, as the jobs' due times read it. */
  due(): DueNow;
}

describe('scheduler', () => {
  const cleanups: (() => unknown)[] = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });

  function rig(handlers: Record<string, JobHandler>, opts: { db?: Db; concurrency?: number } = {}): Rig {
    const db = opts.db ?? openDb({ memory: true }).db;
    if (!opts.db) cleanups.push(() => db.close());
    const jobs = createJobStore(db);
    const clock = manualClock(T0);
    const scheduler = createScheduler({ jobs, clock, log: silentLogger, handlers, concurrency: opts.concurrency });
    cleanups.push(() => scheduler.stop());
    return {
      db,
      jobs,
      clock,
      scheduler,
      enqueue: (kind, payload, runAt) => jobs.enqueue(kind, payload, runAt ?? clock.now(), clock.now()),
      due: () => ({ monotonic: clock.now(), service: clock.now() }),
    };
  }

  it('runs the jobs due now with their payload and removes them once done', async () => {
    const seen: unknown[] = [];
    const r = rig({ mail: (p) => void seen.push(p) });
    r.enqueue('mail', { to: 'a@example.test' });
    r.enqueue('mail', { to: 'b@example.test' }, T0 - 1000);
    expect(await r.scheduler.runDue()).toBe(2);
    expect(seen).toEqual(expect.arrayContaining([{ to: 'a@example.test' }, { to: 'b@example.test' }]));
    expect(r.jobs.count()).toBe(0);
    expect(await r.scheduler.runDue()).toBe(0);
  });

  it('leaves a job due later alone until the manual clock passes its run_at', async () => {
    const handler = vi.fn();
    const r = rig({ later: handler });
    r.enqueue('later', {}, T0 + 60 * SECOND);
    expect(await r.scheduler.runDue()).toBe(0);
    r.clock.advance(59_999);
    expect(await r.scheduler.runDue()).toBe(0);
    expect(handler).not.toHaveBeenCalled();
    r.clock.advance(1);
    expect(await r.scheduler.runDue()).toBe(1);
    expect(handler).toHaveBeenCalledTimes(1);
    expect(r.jobs.count()).toBe(0);
  });

  it('runDue also runs the jobs that the jobs it runs make due, and waits for them', async () => {
    const order: string[] = [];
    let r!: Rig;
    r = rig({
      first: async () => {
        await new Promise((res) => setImmediate(res));
        order.push('first');
        r.enqueue('second', {});
      },
      second: async () => {
        await new Promise((res) => setImmediate(res));
        order.push('second');
      },
    });
    r.enqueue('first', {});
    expect(await r.scheduler.runDue()).toBe(2);
    expect(order).toEqual(['first', 'second']);
    expect(r.jobs.count()).toBe(0);
  });

  it('runs more jobs than its concurrency in one runDue', async () => {
    let running = 0;
    let peak = 0;
    const r = rig(
      {
        k: async () => {
          running++;
          peak = Math.max(peak, running);
          await new Promise((res) => setImmediate(res));
          running--;
        },
      },
      { concurrency: 2 },
    );
    for (let i = 0; i < 7; i++) r.enqueue('k', { i });
    expect(await r.scheduler.runDue()).toBe(7);
    expect(peak).toBeLessThanOrEqual(2);
    expect(r.jobs.count()).toBe(0);
  });

  it('reschedules a job whose handler answers {retryAt} and runs it again only then', async () => {
    const calls: JobRow[] = [];
    const r = rig({
      poll: (_p, job) => {
        calls.push(job);
        return calls.length === 1 ? { retryAt: T0 + 10 * MINUTE } : undefined;
      },
    });
    const id = r.enqueue('poll', { domain: 'example.test' });
    expect(await r.scheduler.runDue()).toBe(1);
    expect(r.jobs.count()).toBe(1);
    expect(r.jobs.dueIn(r.due())).toBe(10 * MINUTE);
    r.clock.advance(10 * MINUTE - 1);
    expect(await r.scheduler.runDue()).toBe(0);
    r.clock.advance(1);
    expect(await r.scheduler.runDue()).toBe(1);
    // The same job both times; a planned rerun is not a failed attempt.
    expect(calls.map((j) => [j.id, j.attempts])).toEqual([
      [id, 1],
      [id, 1],
    ]);
    expect(r.jobs.count()).toBe(0);
  });

  it('retries a throwing handler with a growing backoff on the service clock', async () => {
    const attempts: number[] = [];
    const r = rig({
      flaky: (_p, job) => {
        attempts.push(job.attempts);
        if (job.attempts < 3) throw new Error('provider unavailable');
      },
    });
    r.enqueue('flaky', {});
    expect(await r.scheduler.runDue()).toBe(1);
    // First failure: retried 2 s later, not before.
    expect(r.jobs.dueIn(r.due())).toBe(2 * SECOND);
    r.clock.advance(2 * SECOND - 1);
    expect(await r.scheduler.runDue()).toBe(0);
    r.clock.advance(1);
    expect(await r.scheduler.runDue()).toBe(1);
    // Second failure: the delay doubles.
    expect(r.jobs.dueIn(r.due())).toBe(4 * SECOND);
    r.clock.advance(4 * SECOND - 1);
    expect(await r.scheduler.runDue()).toBe(0);
    r.clock.advance(1);
    expect(await r.scheduler.runDue()).toBe(1);
    expect(attempts).toEqual([1, 2, 3]);
    expect(r.jobs.count()).toBe(0);
  });

  it('gives up on a job that keeps failing instead of retrying it forever', async () => {
    const handler = vi.fn(() => {
      throw new Error('always broken');
    });
    const r = rig({ broken: handler });
    r.enqueue('broken', {});
    for (let i = 0; i < 20 && r.jobs.count() > 0; i++) {
      await r.scheduler.runDue();
      r.clock.advance(HOUR);
    }
    expect(r.jobs.count()).toBe(0);
    expect(handler.mock.calls.length).toBeGreaterThan(3);
    expect(handler.mock.calls.length).toBeLessThanOrEqual(20);
  });

  it("calls a kind's exhausted clean-up once after the last attempt, and drops the job even when the clean-up throws", async () => {
    const exhausted = vi.fn((_payload: unknown, _err: unknown) => {
      throw new Error('clean-up broken too');
    });
    const r = rig({
      broken: {
        run: () => {
          throw new Error('always broken');
        },
        exhausted,
      },
    });
    r.enqueue('broken', { id: 7 });
    for (let i = 0; i < 20 && r.jobs.count() > 0; i++) {
      await r.scheduler.runDue();
      r.clock.advance(HOUR);
    }
    expect(r.jobs.count()).toBe(0);
    expect(exhausted).toHaveBeenCalledTimes(1);
    expect(exhausted.mock.calls[0]![0]).toEqual({ id: 7 });
    expect(String(exhausted.mock.calls[0]![1])).toContain('always broken');
  });

  it('a recurring job that has run many times still gets retried when one run fails', async () => {
    // Like a domain's background check: it answers {retryAt} run after run, then one check throws.
    const runs: string[] = [];
    const r = rig({
      recurring: () => {
        const n = runs.length + 1;
        if (n <= 12) {
          runs.push('again');
          return { retryAt: r.clock.now() + HOUR };
        }
        if (n === 13) {
          runs.push('threw');
          throw new Error('resolver hiccup');
        }
        runs.push('done');
      },
    });
    r.enqueue('recurring', {});
    for (let i = 0; i < 12; i++) {
      expect(await r.scheduler.runDue()).toBe(1);
      r.clock.advance(HOUR);
    }
    expect(await r.scheduler.runDue()).toBe(1);
    expect(runs.at(-1)).toBe('threw');
    // Not dropped: retried after the first step of the backoff, as a job that never failed before.
    expect(r.jobs.count()).toBe(1);
    expect(r.jobs.dueIn(r.due())).toBe(2 * SECOND);
    r.clock.advance(2 * SECOND);
    expect(await r.scheduler.runDue()).toBe(1);
    expect(runs.at(-1)).toBe('done');
    expect(r.jobs.count()).toBe(0);
  });

  it('a job of a kind nobody handles does not stop the others', async () => {
    const handler = vi.fn();
    const r = rig({ known: handler });
    r.enqueue('unknown', {});
    r.enqueue('known', {});
    expect(await r.scheduler.runDue()).toBe(2);
    expect(handler).toHaveBeenCalledTimes(1);
    expect(r.jobs.count('known')).toBe(0);
  });

  it('once started, runs a job enqueued now without any clock move', async () => {
    const handler = vi.fn();
    const r = rig({ mail: handler });
    r.scheduler.start();
    r.enqueue('mail', { to: 'x@example.test' });
    r.scheduler.kick();
    await vi.waitFor(() => expect(handler).toHaveBeenCalledTimes(1), { timeout: 2000, interval: 10 });
    await vi.waitFor(() => expect(r.jobs.count()).toBe(0), { timeout: 2000, interval: 10 });
    expect(r.clock.now()).toBe(T0);
  });

  it('after a restart, jobs claimed by the dead process are released and run exactly once', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'svc-sched-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));

    // The first process enqueues two jobs, claims one, and dies before finishing it.
    const first = openDb({ dataDir: dir }).db;
    const before = createJobStore(first);
    before.enqueue('mail', { n: 1 }, T0, T0);
    before.enqueue('mail', { n: 2 }, T0 + HOUR, T0);
    expect(before.claimDue({ monotonic: T0, service: T0 }, performance.now(), 5 * MINUTE, 10)).toHaveLength(1);
    first.close();

    // The new process opens the same file.
    const { db, fresh } = openDb({ dataDir: dir });
    cleanups.push(() => db.close());
    expect(fresh).toBe(false);
    const seen: unknown[] = [];
    const r = rig({ mail: (p) => void seen.push(p) }, { db });
    // Without the release, the dead process's lease would hold the job back.
    expect(await r.scheduler.runDue()).toBe(0);
    expect(r.jobs.releaseAll()).toBe(1);
    expect(await r.scheduler.runDue()).toBe(1);
    expect(seen).toEqual([{ n: 1 }]);
    expect(await r.scheduler.runDue()).toBe(0);
    r.clock.advance(HOUR);
    expect(await r.scheduler.runDue()).toBe(1);
    expect(seen).toEqual([{ n: 1 }, { n: 2 }]);
    expect(r.jobs.count()).toBe(0);
  });

  it('a step of the wall clock neither holds a retry back nor runs it early; a fixed instant keeps to the wall clock', async () => {
    const db = openDb({ memory: true }).db;
    cleanups.push(() => db.close());
    const jobs = createJobStore(db);
    const time = steppableTime(T0);
    const clock = realClock(time.sources);
    const runs: string[] = [];
    const scheduler = createScheduler({
      jobs,
      clock,
      log: silentLogger,
      handlers: {
        flaky: (_p: unknown, job: JobRow) => {
          runs.push(`flaky ${job.attempts}`);
          if (job.attempts < 3) throw new Error('the sink answered 451');
        },
        scheduled: () => void runs.push('scheduled'),
      },
    });
    cleanups.push(() => scheduler.stop());
    jobs.enqueue('flaky', {}, clock.monotonic(), clock.monotonic());
    expect(await scheduler.runDue()).toBe(1);

    // Back an hour: the retry is still due 2 s after the failure.
    time.step(-HOUR);
    time.pass(2 * SECOND - 1);
    expect(await scheduler.runDue()).toBe(0);
    time.pass(1);
    expect(await scheduler.runDue()).toBe(1);
    // Forward an hour: the next one still waits its 4 s.
    time.step(HOUR);
    time.pass(4 * SECOND - 1);
    expect(await scheduler.runDue()).toBe(0);
    time.pass(1);
    expect(await scheduler.runDue()).toBe(1);
    expect(runs).toEqual(['flaky 1', 'flaky 2', 'flaky 3']);

    // Scheduled for 30 min on: the wall clock stepped back an hour takes an hour and a half; stepped forward, none.
    const at = clock.now() + 30 * MINUTE;
    jobs.enqueue('scheduled', {}, at, clock.monotonic(), { fixed: true });
    time.step(-HOUR);
    time.pass(HOUR + 30 * MINUTE - 1);
    expect(await scheduler.runDue()).toBe(0);
    time.pass(1);
    expect(await scheduler.runDue()).toBe(1);
    jobs.enqueue('scheduled', {}, clock.now() + 30 * MINUTE, clock.monotonic(), { fixed: true });
    time.step(HOUR);
    expect(await scheduler.runDue()).toBe(1);
    expect(runs.slice(3)).toEqual(['scheduled', 'scheduled']);
  });

  it('a job that finishes with nothing else due asks for no step until a job is enqueued or the idle poll comes', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setImmediate', 'clearImmediate', 'performance'] });
    cleanups.push(() => vi.useRealTimers());
    const ran: string[] = [];
    let r!: Rig;
    r = rig({
      mail: (payload) => {
        const p = payload as { n: number };
        ran.push(`mail ${p.n}`);
        // The first job enqueues a second one as it runs: the kick is remembered, and it runs at once.
        if (p.n === 1) r.enqueue('mail', { n: 2 });
        if (p.n === 1) r.scheduler.kick();
      },
    });
    const claims = vi.spyOn(r.jobs, 'claimNext');
    r.scheduler.start();
    r.enqueue('mail', { n: 1 });
    r.scheduler.kick();
    await vi.advanceTimersByTimeAsync(10);
    expect(ran).toEqual(['mail 1', 'mail 2']);
    expect(r.jobs.count()).toBe(0);
    // One claim for each: once the second is done, nothing is due, and no step reads the queue again within the poll.
    expect(claims).toHaveBeenCalledTimes(2);
    await vi.advanceTimersByTimeAsync(4 * SECOND);
    expect(claims).toHaveBeenCalledTimes(2);
    // A job enqueued now, handed over by its id, runs on the next turn, claimed by its id: the lanes are not read.
    const byId = vi.spyOn(r.jobs, 'claimIds');
    r.scheduler.kick(r.enqueue('mail', { n: 3 }));
    await vi.advanceTimersByTimeAsync(1);
    expect(ran).toEqual(['mail 1', 'mail 2', 'mail 3']);
    expect(byId).toHaveBeenCalledTimes(1);
    expect(claims).toHaveBeenCalledTimes(2);
    // A job due later is not claimed by its id, even if it were handed over as due: it waits for its time.
    r.scheduler.kick(r.enqueue('mail', { n: 4 }, T0 + MINUTE));
    await vi.advanceTimersByTimeAsync(1);
    expect(ran).toEqual(['mail 1', 'mail 2', 'mail 3']);
    // A kick that names no job reads the lanes again.
    r.scheduler.kick();
    await vi.advanceTimersByTimeAsync(1);
    expect(claims).toHaveBeenCalledTimes(3);
    // A manual clock moved past its time: the step that follows reads the lanes and runs it.
    r.clock.advance(MINUTE);
    expect(await r.scheduler.runDue()).toBe(1);
    expect(ran).toEqual(['mail 1', 'mail 2', 'mail 3', 'mail 4']);
    // A job whose handler puts it back for later is run at its time, though nothing else is due.
    ran.length = 0;
    const again = rig({
      later: () => {
        ran.push(`later ${ran.length + 1}`);
        return ran.length === 1 ? { retryAt: again.clock.now() } : undefined;
      },
    });
    again.scheduler.start();
    again.enqueue('later', {});
    again.scheduler.kick();
    await vi.advanceTimersByTimeAsync(10);
    expect(ran).toEqual(['later 1', 'later 2']);
  });

  it('stop() waits for the jobs in flight', async () => {
    let finish!: () => void;
    let done = false;
    const r = rig({
      slow: () =>
        new Promise<void>((res) => {
          finish = () => {
            done = true;
            res();
          };
        }),
    });
    r.enqueue('slow', {});
    expect(await r.scheduler.step()).toBe(1);
    const stopped = r.scheduler.stop();
    let stoppedYet = false;
    void stopped.then(() => (stoppedYet = true));
    await new Promise((res) => setImmediate(res));
    expect(stoppedYet).toBe(false);
    finish();
    await stopped;
    expect(done).toBe(true);
    expect(r.jobs.count()).toBe(0);
  });

  it('the schedulers of every queue get their handlers when they start: until then a kick claims nothing', async () => {
    const db = openDb({ memory: true }).db;
    cleanups.push(() => db.close());
    const jobs = createJobStore(db);
    const schedulers = createSchedulers({ jobs, clock: manualClock(T0), log: silentLogger });
    cleanups.push(() => schedulers.stop());
    const seen: unknown[] = [];
    jobs.enqueue('mail', { n: 1 }, T0, T0);
    schedulers.kick(DEFAULT_QUEUE);
    expect(await schedulers.runDue()).toBe(0);
    expect(jobs.count()).toBe(1);

    schedulers.start({ mail: (p: unknown) => void seen.push(p) } as unknown as JobHandlers);
    await vi.waitFor(() => expect(seen).toEqual([{ n: 1 }]), { timeout: 2000, interval: 10 });
    // Started again after a stop, they run the handlers of their first start.
    await schedulers.stop();
    jobs.enqueue('mail', { n: 2 }, T0, T0);
    schedulers.start();
    await vi.waitFor(() => expect(seen).toEqual([{ n: 1 }, { n: 2 }]), { timeout: 2000, interval: 10 });
  });
});
