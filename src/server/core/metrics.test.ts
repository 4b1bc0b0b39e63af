// The metrics service over a real SQLite database (in memory) and the real job store: the queues' depth and how long
// their oldest due job has waited, on both kinds of due time, and the connection count of a listener.
import { afterEach, describe, expect, it } from 'vitest';
import { manualClock } from '../../lib/clock.js';
import { openDb, type Db } from '../store/db.js';
import { createJobStore } from '../store/jobs.js';
import { createMetrics } from './metrics.js';

const T0 = Date.UTC(2026, 7, 1, 12, 0, 0);

/** The value of the sample `name{labels}` in an exposition (labels in the order they are written). */
function sample(text: string, name: string, labels: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${name}{${labels}} `));
  return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(' ') + 1));
}

describe('metrics', () => {
  const open: Db[] = [];
  afterEach(() => {
    for (const db of open.splice(0)) db.close();
  });
  const setUp = () => {
    const { db } = openDb({ memory: true });
    open.push(db);
    const clock = manualClock(T0);
    return { db, clock, jobs: createJobStore(db), metrics: createMetrics({ db, clock }) };
  };

  it("reports each queue's jobs and how long its oldest due job has been due; endpoints' queues as one", async () => {
    const { clock, jobs, metrics } = setUp();
    jobs.enqueue('deliver', {}, T0 - 90_000, T0 - 90_000);
    jobs.enqueue('deliver', {}, T0 - 10_000, T0 - 10_000);
    jobs.enqueue('deliver', {}, T0 + 60_000, T0);
    // A scheduled send is due at an instant on the service clock.
    jobs.enqueue('deliver', {}, T0 - 120_000, T0 - 200_000, { fixed: true });
    jobs.enqueue('webhook', {}, T0 + 30_000, T0, { queue: 'webhook:ep_1' });
    jobs.enqueue('webhook', {}, T0 - 5_000, T0 - 5_000, { queue: 'webhook:ep_2' });
    let text = (await metrics.scrape()).body;
    expect(sample(text, 'svc_queue_jobs', 'queue="default"')).toBe(4);
    expect(sample(text, 'svc_queue_oldest_due_seconds', 'queue="default"')).toBe(120);
    expect(sample(text, 'svc_queue_jobs', 'queue="webhook"')).toBe(2);
    expect(sample(text, 'svc_queue_oldest_due_seconds', 'queue="webhook"')).toBe(5);
    expect(sample(text, 'svc_queue_jobs', 'queue="retention"')).toBe(0);
    expect(sample(text, 'svc_queue_oldest_due_seconds', 'queue="retention"')).toBe(0);
    clock.advance(60_000);
    text = (await metrics.scrape()).body;
    expect(sample(text, 'svc_queue_oldest_due_seconds', 'queue="default"')).toBe(180);
    expect(sample(text, 'svc_queue_oldest_due_seconds', 'queue="webhook"')).toBe(65);
  });

  it('counts a connection open until its close is called, once however often it is called', async () => {
    const { metrics } = setUp();
    const closeA = metrics.connectionOpened('pop3');
    const closeB = metrics.connectionOpened('smtp', 'sink');
    let text = (await metrics.scrape()).body;
    expect(sample(text, 'svc_connections_open', 'protocol="pop3",listener="pop3"')).toBe(1);
    expect(sample(text, 'svc_connections_opened_total', 'protocol="smtp",listener="sink"')).toBe(1);
    closeA();
    closeA();
    closeB();
    text = (await metrics.scrape()).body;
    expect(sample(text, 'svc_connections_open', 'protocol="pop3",listener="pop3"')).toBe(0);
    expect(sample(text, 'svc_connections_open', 'protocol="smtp",listener="sink"')).toBe(0);
    expect(sample(text, 'svc_connections_opened_total', 'protocol="pop3",listener="pop3"')).toBe(1);
  });
});
