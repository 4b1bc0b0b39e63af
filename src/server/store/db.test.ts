import { describe, expect, it } from 'vitest';
import { groupCommit, openDb } from './db.js';

function setup(minIntervalMs?: number) {
  const { db } = openDb({ memory: true });
  db.exec('CREATE TABLE t (v INTEGER NOT NULL)');
  // openDb hands out one compiled statement per SQL text, so this is the COMMIT the group commit runs.
  const commitStmt = db.prepare('COMMIT');
  const run = commitStmt.run.bind(commitStmt);
  const counter = { commits: 0 };
  commitStmt.run = ((...args: unknown[]) => {
    counter.commits++;
    return run(...(args as []));
  }) as typeof commitStmt.run;
  const insert = (v: number) => () => db.prepare('INSERT INTO t (v) VALUES (?)').run(v).changes;
  const values = () => (db.prepare('SELECT v FROM t ORDER BY v').all() as { v: number }[]).map((r) => r.v);
  return { db, commit: groupCommit(db, minIntervalMs), counter, insert, values };
}

const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

describe('groupCommit', () => {
  it('commits the writes queued in one turn together, and one that throws rolls back alone', async () => {
    const { commit, counter, insert, values } = setup();
    const results = await Promise.allSettled([
      commit(insert(1)),
      commit(() => {
        insert(2)();
        throw new Error('refused');
      }),
      commit(insert(3)),
    ]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect(values()).toEqual([1, 3]);
    expect(counter.commits).toBe(1);
  });

  it('refuses an async write function instead of committing before it has run', async () => {
    const { commit, values } = setup();
    await expect(commit(async () => 1)).rejects.toThrow(/must not be async/);
    expect(values()).toEqual([]);
  });

  it('under a steady stream, writes queued over several turns after a commit share the next one', async () => {
    const { commit, counter, insert, values } = setup(200);
    await commit(insert(1)); // a quiet server: committed on the next turn
    expect(counter.commits).toBe(1);
    const pending = [commit(insert(2))];
    await nextTurn();
    pending.push(commit(insert(3)));
    await nextTurn();
    pending.push(commit(insert(4)));
    await Promise.all(pending);
    expect(values()).toEqual([1, 2, 3, 4]);
    expect(counter.commits).toBe(2);
  });

  it('a write that finds no room fails alone with SQLITE_FULL, the others of its commit are kept, and it says so until one fits', async () => {
    const { db, commit, values } = setup();
    db.exec('CREATE TABLE blobs (b BLOB)');
    db.pragma(`max_page_count = ${(db.pragma('page_count', { simple: true }) as number) + 8}`);
    const big = () => db.prepare('INSERT INTO blobs (b) VALUES (?)').run(Buffer.alloc(64 * 1024)).changes;
    const results = await Promise.allSettled([
      commit(() => db.prepare('INSERT INTO t (v) VALUES (1)').run().changes),
      commit(big),
      commit(() => db.prepare('INSERT INTO t (v) VALUES (2)').run().changes),
    ]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect((results[1] as PromiseRejectedResult).reason).toMatchObject({ code: 'SQLITE_FULL' });
    expect(values()).toEqual([1, 2]);
    expect(db.inTransaction).toBe(false);
    // Only the big write alone: the commit reports the lack of room, until a write commits again.
    await expect(commit(big)).rejects.toMatchObject({ code: 'SQLITE_FULL' });
    expect(commit.full).toBe(true);
    await commit(() => db.prepare('INSERT INTO t (v) VALUES (3)').run().changes);
    expect(commit.full).toBe(false);
    expect(values()).toEqual([1, 2, 3]);
  });

  it('under a steady stream, a turn that brings no new write commits at once instead of waiting out the interval', async () => {
    const { commit, counter, insert, values } = setup(60_000);
    await commit(insert(1));
    const second = commit(insert(2)); // within the interval of the first commit
    for (let turn = 0; turn < 3 && counter.commits < 2; turn++) await nextTurn();
    expect(counter.commits).toBe(2);
    await second;
    expect(values()).toEqual([1, 2]);
  });

  it('atEnd runs after every write of the transaction, and not for a write that threw', async () => {
    const { commit, counter, insert, values } = setup();
    const order: string[] = [];
    const results = await Promise.allSettled([
      commit(() => {
        insert(1)();
        commit.atEnd(() => {
          order.push('end of 1');
          insert(10)();
        });
      }),
      commit(() => {
        commit.atEnd(() => insert(20)());
        throw new Error('refused');
      }),
      commit(() => {
        order.push('write 3');
        insert(3)();
      }),
    ]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect(order).toEqual(['write 3', 'end of 1']);
    expect(values()).toEqual([1, 3, 10]);
    expect(counter.commits).toBe(1);
    expect(() => commit.atEnd(() => {})).toThrow(/inside a group-commit function/);
  });

  it('atEnd work that throws fails the whole transaction', async () => {
    const { commit, insert, values } = setup();
    const results = await Promise.allSettled([
      commit(() => insert(1)()),
      commit(() => {
        insert(2)();
        commit.atEnd(() => {
          throw new Error('index full');
        });
      }),
    ]);
    expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected']);
    expect(values()).toEqual([]);
  });
});
