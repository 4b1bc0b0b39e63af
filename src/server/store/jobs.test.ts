import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { HOUR, MINUTE } from '../../lib/clock.js';
import Database from 'better-sqlite3';
import { migrate, openDb, type Db } from './db.js';
import { migrations } from './migrations.js';
import { insertRow } from '../../../test/helpers/rows.js';
import { createJobStore, DEFAULT_QUEUE } from './jobs.js';

const T0 = Date.UTC(2026, 7, 1, 12, 0, 0);
const HELD = 1_000_000;
/** The same time on both readings: the monotonic one (delays) and the service clock (fixed instants). */
const at = (t: number) => ({ monotonic: t, service: t });
const LEASE = 5 * MINUTE;

describe('job store', () => {
  const open: Db[] = [];
  const dirs: string[] = [];
  afterEach(() => {
    for (const db of open.splice(0)) if (db.open) db.close();
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });
  const memoryStore = () => {
    const { db } = openDb({ memory: true });
    open.push(db);
    return createJobStore(db);
  };

  it('claims each due job once: a second claim gets only what the first left', () => {
    const jobs = memoryStore();
    const ids = [1, 2, 3, 4, 5].map((n) => jobs.enqueue('k', { n }, T0, T0));
    const first = jobs.claimDue(at(T0), HELD, LEASE, 3);
    const second = jobs.claimDue(at(T0), HELD, LEASE, 10);
    expect(first).toHaveLength(3);
    expect(second).toHaveLength(2);
    const claimed = [...first, ...second].map((j) => j.id);
    expect(new Set(claimed).size).toBe(5);
    expect(claimed.sort((a, b) => a - b)).toEqual(ids);
    expect(jobs.claimDue(at(T0), HELD, LEASE, 10)).toEqual([]);
    // Claiming counts an attempt and sets the lease on the process's own time; the payload comes back as stored.
    expect(first[0]).toMatchObject({ kind: 'k', attempts: 1, claimed_until: HELD + LEASE, run_at: T0 });
    expect(first[0]!.payload).toEqual({ n: 1 });
  });

  it('claimIds claims the jobs named that are of the queue, due and unclaimed, once, with the attempt counted', () => {
    const jobs = memoryStore();
    const due = jobs.enqueue('k', { n: 1 }, T0, T0, { lane: 'ws_a' });
    const later = jobs.enqueue('k', { n: 2 }, T0 + MINUTE, T0);
    const fixedDue = jobs.enqueue('k', { n: 3 }, T0, T0, { fixed: true });
    const elsewhere = jobs.enqueue('k', { n: 4 }, T0, T0, { queue: 'wh_1' });
    const claimed = jobs.claimIds(at(T0), HELD, LEASE, [due, later, fixedDue, elsewhere, 999]);
    expect(claimed.map((j) => [j.id, j.payload, j.attempts])).toEqual([
      [due, { n: 1 }, 1],
      [fixedDue, { n: 3 }, 1],
    ]);
    expect(jobs.claimIds(at(T0), HELD, LEASE, [due, fixedDue])).toEqual([]);
    // The lanes' claim finds only what claimIds left: the later one once due.
    expect(jobs.claimDue(at(T0 + MINUTE), HELD, LEASE, 10).map((j) => j.id)).toEqual([later]);
  });

  it('claims the earliest due jobs first and leaves jobs due later alone', () => {
    const jobs = memoryStore();
    const late = jobs.enqueue('k', {}, T0 + 60_000, T0);
    const b = jobs.enqueue('k', {}, T0 - 1000, T0);
    const a = jobs.enqueue('k', {}, T0 - 5000, T0);
    expect(jobs.claimDue(at(T0), HELD, LEASE, 1).map((j) => j.id)).toEqual([a]);
    expect(jobs.claimDue(at(T0), HELD, LEASE, 10).map((j) => j.id)).toEqual([b]);
    expect(jobs.claimDue(at(T0 + 59_999), HELD, LEASE, 10)).toEqual([]);
    expect(jobs.claimDue(at(T0 + 60_000), HELD, LEASE, 10).map((j) => j.id)).toEqual([late]);
  });

  it('two connections to one database file never claim the same job', () => {
    const dir = mkdtempSync(join(tmpdir(), 'svc-jobs-'));
    dirs.push(dir);
    const a = openDb({ dataDir: dir }).db;
    const b = openDb({ dataDir: dir }).db;
    open.push(a, b);
    const storeA = createJobStore(a);
    const storeB = createJobStore(b);
    for (let i = 0; i < 20; i++) storeA.enqueue('k', { i }, T0, T0);
    const seen: number[] = [];
    for (let round = 0; round < 10; round++) {
      seen.push(...storeA.claimDue(at(T0), HELD, LEASE, 1).map((j) => j.id));
      seen.push(...storeB.claimDue(at(T0), HELD, LEASE, 1).map((j) => j.id));
    }
    expect(seen).toHaveLength(20);
    expect(new Set(seen).size).toBe(20);
  });

  it('a claim whose lease ran out can be claimed again, with the attempt counted', () => {
    const jobs = memoryStore();
    const id = jobs.enqueue('k', {}, T0, T0);
    expect(jobs.claimDue(at(T0), HELD, LEASE, 10)).toHaveLength(1);
    expect(jobs.claimDue(at(T0), HELD + LEASE - 1, LEASE, 10)).toEqual([]);
    const again = jobs.claimDue(at(T0), HELD + LEASE + 1, LEASE, 10);
    expect(again.map((j) => [j.id, j.attempts])).toEqual([[id, 2]]);
  });

  it('dueIn ignores claimed jobs; reschedule releases the claim; complete removes the job', () => {
    const jobs = memoryStore();
    expect(jobs.dueIn(at(T0))).toBeNull();
    const id = jobs.enqueue('k', {}, T0, T0);
    jobs.enqueue('other', {}, T0 + 5000, T0);
    expect(jobs.dueIn(at(T0))).toBe(0);
    jobs.claimDue(at(T0), HELD, LEASE, 1);
    expect(jobs.dueIn(at(T0))).toBe(5000);
    jobs.reschedule(id, T0 + 1000, T0);
    expect(jobs.dueIn(at(T0))).toBe(1000);
    expect(jobs.claimDue(at(T0 + 1000), HELD, LEASE, 1).map((j) => j.id)).toEqual([id]);
    jobs.complete(id);
    expect(jobs.count()).toBe(1);
    expect(jobs.count('k')).toBe(0);
    expect(jobs.count('other')).toBe(1);
  });

  it('reschedule keeps the attempt count (a failure); defer resets it (a planned rerun)', () => {
    const jobs = memoryStore();
    const id = jobs.enqueue('k', {}, T0, T0);
    jobs.claimDue(at(T0), HELD, LEASE, 1);
    jobs.reschedule(id, T0 + 1000, T0);
    expect(jobs.claimDue(at(T0 + 1000), HELD, LEASE, 1).map((j) => j.attempts)).toEqual([2]);
    jobs.defer(id, T0 + 2000, T0 + 1000);
    expect(jobs.claimDue(at(T0 + 1999), HELD, LEASE, 1)).toEqual([]);
    expect(jobs.claimDue(at(T0 + 2000), HELD, LEASE, 1).map((j) => j.attempts)).toEqual([1]);
  });

  it('ensure writes a recurring job once, whatever the restarts; hasten makes it due now, never later', () => {
    const jobs = memoryStore();
    const id = jobs.ensure('every-minute', {}, T0 + MINUTE, T0);
    expect(jobs.ensure('every-minute', {}, T0, T0)).toBe(id);
    expect(jobs.count('every-minute')).toBe(1);
    expect(jobs.claimDue(at(T0), HELD, LEASE, 10)).toEqual([]);
    expect(jobs.hasten(id, T0)).toBe(true);
    expect(jobs.claimDue(at(T0), HELD, LEASE, 10).map((j) => j.id)).toEqual([id]);
    // Claimed (its run_at already past): hastening changes nothing.
    expect(jobs.hasten(id, T0 + 1000)).toBe(false);
    jobs.defer(id, T0 + MINUTE, T0 + 1000);
    expect(jobs.hasten(id, T0 + 2000)).toBe(true);
    expect(jobs.dueIn(at(T0 + 2000))).toBe(0);
  });

  it('releaseAll frees every claim and says how many', () => {
    const jobs = memoryStore();
    jobs.enqueue('k', {}, T0, T0);
    jobs.enqueue('k', {}, T0, T0);
    jobs.enqueue('k', {}, T0 + 60_000, T0);
    expect(jobs.releaseAll()).toBe(0);
    jobs.claimDue(at(T0), HELD, LEASE, 10);
    expect(jobs.claimDue(at(T0), HELD, LEASE, 10)).toEqual([]);
    expect(jobs.releaseAll()).toBe(2);
    expect(jobs.claimDue(at(T0), HELD, LEASE, 10).map((j) => j.attempts)).toEqual([2, 2]);
  });

  it('a fixed instant is due on the service clock, a delay on the monotonic reading', () => {
    const jobs = memoryStore();
    // The wall clock was stepped back an hour: the service clock reads an hour less than the monotonic reading.
    const now = { monotonic: T0, service: T0 - HOUR };
    const delay = jobs.enqueue('k', {}, T0 + 2000, T0);
    const instant = jobs.enqueue('k', {}, T0 - HOUR + 30 * MINUTE, T0, { fixed: true });
    expect(jobs.dueIn(now)).toBe(2000);
    expect(
      jobs.claimDue({ monotonic: T0 + 2000, service: T0 - HOUR + 2000 }, HELD, LEASE, 10).map((j) => j.id),
    ).toEqual([delay]);
    expect(jobs.dueIn(now)).toBe(30 * MINUTE);
    expect(
      jobs.claimDue({ monotonic: T0 + 30 * MINUTE - 1, service: T0 - HOUR + 30 * MINUTE - 1 }, HELD, LEASE, 10),
    ).toEqual([]);
    const later = { monotonic: T0 + 30 * MINUTE, service: T0 - HOUR + 30 * MINUTE };
    const [claimed] = jobs.claimDue(later, HELD, LEASE, 10);
    expect(claimed).toMatchObject({ id: instant, fixed: 1 });
    // Its retry is a delay: due on the monotonic reading.
    jobs.reschedule(instant, later.monotonic + 2000, later.monotonic);
    expect(jobs.dueIn(later)).toBe(2000);
  });

  it('rebase makes a delay set after now the same delay from now, and leaves fixed instants and earlier delays', () => {
    const jobs = memoryStore();
    // Set while the clock ran two hours ahead: due at once, and 2 s on; then one set before, and a scheduled send.
    const ahead = T0 + 2 * HOUR;
    const atOnce = jobs.enqueue('k', {}, ahead, ahead);
    const retry = jobs.enqueue('k', {}, ahead + 2000, ahead);
    const earlier = jobs.enqueue('k', {}, T0 + MINUTE, T0 - MINUTE);
    const instant = jobs.enqueue('k', {}, ahead + HOUR, ahead, { fixed: true });
    expect(jobs.rebase(T0)).toBe(2);
    expect(jobs.claimDue(at(T0), HELD, LEASE, 10).map((j) => j.id)).toEqual([atOnce]);
    expect(jobs.claimDue(at(T0 + 2000), HELD, LEASE, 10).map((j) => j.id)).toEqual([retry]);
    expect(jobs.claimDue(at(T0 + MINUTE), HELD, LEASE, 10).map((j) => j.id)).toEqual([earlier]);
    expect(jobs.claimDue(at(ahead + HOUR - 1), HELD, LEASE, 10)).toEqual([]);
    expect(jobs.claimDue(at(ahead + HOUR), HELD, LEASE, 10).map((j) => j.id)).toEqual([instant]);
  });

  describe('lanes', () => {
    /** Who each claimed job belongs to and which of theirs it is, in the order the claim handed them out. */
    const names = (rows: { lane: string; payload: unknown }[]) =>
      rows.map((r) => `${r.lane}${(r.payload as { n: number }).n}`);

    it("takes due jobs round-robin across lanes: a lane's job waits behind its own backlog, not all of another's", () => {
      const jobs = memoryStore();
      // A floods first; B's two come after all of A's.
      for (let n = 1; n <= 6; n++) jobs.enqueue('deliver', { n }, T0, T0, { lane: 'a' });
      for (let n = 1; n <= 2; n++) jobs.enqueue('deliver', { n }, T0, T0, { lane: 'b' });
      const taken: string[] = [];
      for (let i = 0; i < 8; i++) taken.push(...names(jobs.claimDue(at(T0), HELD, LEASE, 1)));
      expect(taken).toEqual(['a1', 'b1', 'a2', 'b2', 'a3', 'a4', 'a5', 'a6']);
    });

    it('shares a claim of several slots equally, hands a share a lane cannot fill to the others, and turns', () => {
      const jobs = memoryStore();
      for (let n = 1; n <= 5; n++) jobs.enqueue('deliver', { n }, T0, T0, { lane: 'a' });
      jobs.enqueue('deliver', { n: 1 }, T0, T0, { lane: 'b' });
      for (let n = 1; n <= 5; n++) jobs.enqueue('deliver', { n }, T0, T0, { lane: 'c' });
      // Six slots, three lanes: two each, B's second slot goes to the lanes that have more.
      expect(names(jobs.claimDue(at(T0), HELD, LEASE, 6))).toEqual(['a1', 'a2', 'b1', 'c1', 'c2', 'a3']);
      // The next claim starts after the lane served last (A): C, then A.
      expect(names(jobs.claimDue(at(T0), HELD, LEASE, 2))).toEqual(['c3', 'a4']);
      expect(names(jobs.claimDue(at(T0), HELD, LEASE, 10))).toEqual(['c4', 'c5', 'a5']);
    });

    it("keeps each lane's own order: a scheduled send whose time has come first, then by due time; later work waits", () => {
      const jobs = memoryStore();
      jobs.enqueue('deliver', { n: 2 }, T0 - 1000, T0, { lane: 'a' });
      jobs.enqueue('deliver', { n: 3 }, T0, T0, { lane: 'a' });
      jobs.enqueue('deliver', { n: 1 }, T0 - HOUR, T0, { lane: 'a', fixed: true });
      jobs.enqueue('deliver', { n: 9 }, T0 + MINUTE, T0, { lane: 'a' });
      jobs.enqueue('deliver', { n: 1 }, T0 + MINUTE, T0, { lane: 'b' });
      expect(names(jobs.claimDue(at(T0), HELD, LEASE, 10))).toEqual(['a1', 'a2', 'a3']);
      // The lanes' next due times: B's and A's later jobs, a minute on.
      expect(jobs.dueIn(at(T0), DEFAULT_QUEUE)).toBe(MINUTE);
      // A was served last: B's turn comes first.
      expect(names(jobs.claimDue(at(T0 + MINUTE), HELD, LEASE, 10))).toEqual(['b1', 'a9']);
      expect(jobs.dueIn(at(T0 + MINUTE), DEFAULT_QUEUE)).toBeNull();
    });

    it('a claim answers when the next job left is due, as dueIn does after it, over every lane and kind of due time', () => {
      const jobs = memoryStore();
      jobs.enqueue('deliver', { n: 1 }, T0, T0, { lane: 'a' });
      jobs.enqueue('deliver', { n: 2 }, T0 + 3000, T0, { lane: 'a' });
      jobs.enqueue('deliver', { n: 1 }, T0 + 2000, T0, { lane: 'b' });
      // A scheduled send: fixed on the service clock, which reads an hour behind the monotonic reading here.
      jobs.enqueue('deliver', { n: 1 }, T0 - HOUR + 1000, T0, { lane: 'c', fixed: true });
      const now = { monotonic: T0, service: T0 - HOUR };
      const first = jobs.claimNext(now, HELD, LEASE, 10);
      expect(names(first.jobs)).toEqual(['a1']);
      expect(first.dueIn).toBe(1000);
      expect(jobs.dueIn(now)).toBe(1000);
      const later = { monotonic: T0 + 2000, service: T0 - HOUR + 2000 };
      const second = jobs.claimNext(later, HELD, LEASE, 10);
      expect(names(second.jobs)).toEqual(['b1', 'c1']);
      expect(second.dueIn).toBe(1000);
      expect(jobs.claimNext({ monotonic: T0 + 3000, service: T0 - HOUR + 3000 }, HELD, LEASE, 10).dueIn).toBeNull();
    });

    it('a job in no lane is taken in its turn like a lane of its own', () => {
      const jobs = memoryStore();
      for (let n = 1; n <= 3; n++) jobs.enqueue('deliver', { n }, T0, T0, { lane: 'ws_a' });
      jobs.enqueue('system_mail', { n: 1 }, T0, T0);
      expect(names(jobs.claimDue(at(T0), HELD, LEASE, 2))).toEqual(['1', 'ws_a1']);
    });

    it("a database from before lanes puts each waiting message's jobs in its workspace's lane, and others in none", () => {
      const db = new Database(':memory:');
      open.push(db as Db);
      db.pragma('foreign_keys = OFF');
      for (const m of migrations.filter((m) => m.version <= 14)) db.exec(m.sql);
      db.pragma('user_version = 14');
      insertRow(db, 'messages', { id: 'msg_a', workspace_id: 'ws_a', mode: 'test' });
      insertRow(db, 'messages', { id: 'msg_b', workspace_id: 'ws_b', mode: 'test' });
      const job = db.prepare('INSERT INTO jobs (kind, payload, run_at, set_at) VALUES (?, ?, 0, 0)');
      job.run('deliver', JSON.stringify({ message_id: 'msg_a' }));
      job.run('outcome', JSON.stringify({ message_id: 'msg_b', recipient: 'x', attempt: 2 }));
      job.run('system_mail', JSON.stringify({ to: 'x' }));
      migrate(db as Db);
      expect(db.prepare('SELECT kind, lane FROM jobs ORDER BY id').all()).toEqual([
        { kind: 'deliver', lane: 'ws_a' },
        { kind: 'outcome', lane: 'ws_b' },
        { kind: 'system_mail', lane: '' },
      ]);
    });
  });
});
