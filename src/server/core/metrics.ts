// The server's metrics, as GET /metrics serves them in Prometheus' text format (http/metrics.ts;
// docs/local-server.md#metrics). Two kinds of value:
// - What the database holds is read from it at each scrape, so it survives a restart: the message counters by
//   workspace and the webhook attempts (rows of `metric_counts`, kept by triggers: store/metrics.ts), and the job
//   queues' depth and oldest due job. Both reads are bounded: a row per counter and workspace, one walk of an index.
// - What only this process sees starts at zero with it: connections of the mail listeners, and the HTTP requests'
//   durations by route. The edges report them here (`connectionOpened`, `observeRequest`).
// One registry per server (a test process runs several); node's process metrics, the same for every server of a
// process, are collected once per process, from the first scrape on (prom-client's index is loaded then; the classes
// come from their own files: prom-client.ts).
import type { Registry as PromRegistry } from 'prom-client';
import type { Clock } from '../../lib/clock.js';
import type { Db } from '../store/db.js';
import { createMetricStore, type MetricCount } from '../store/metrics.js';
import { promClasses } from './prom-client.js';

/** The label of mail caught outside any workspace (an application's own SMTP client talking to the sink). */
export const NO_WORKSPACE = 'none';

/** Ends a connection counted by `connectionOpened`; a second call does nothing. */
export type ConnectionClosed = () => void;

/** What the counters of the database are called, and say. */
const COUNTERS: Record<MetricCount['name'], { name: string; help: string }> = {
  accepted: {
    name: 'svc_messages_accepted_total',
    help: 'Messages accepted for sending (POST /v1/emails, batches, SMTP submission), by workspace.',
  },
  caught: {
    name: 'svc_messages_caught_total',
    help: 'Messages the SMTP sink caught and stored, by workspace (none: mail that named no workspace).',
  },
  delivered: { name: 'svc_messages_delivered_total', help: 'Messages that reached status delivered, by workspace.' },
  bounced: { name: 'svc_messages_bounced_total', help: 'Messages that reached status bounced, by workspace.' },
  failed: { name: 'svc_messages_failed_total', help: 'Messages that reached status failed, by workspace.' },
  webhook_attempts: {
    name: 'svc_webhook_attempts_total',
    help: 'Webhook delivery attempts made, by the workspace of the endpoint.',
  },
  webhook_failures: {
    name: 'svc_webhook_failures_total',
    help: 'Webhook delivery attempts that failed (no 2xx answer in time), by the workspace of the endpoint.',
  },
};

/** The request durations' buckets, in seconds: from a cached read to a long poll held for its full wait. */
const REQUEST_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

let processRegistry: Promise<PromRegistry> | undefined;
/** Node's process metrics (CPU, memory, event loop delay, GC), one set per process, started by the first scrape. */
function processMetrics(): Promise<PromRegistry> {
  processRegistry ??= import('prom-client').then(({ collectDefaultMetrics, Registry }) => {
    const registry = new Registry();
    collectDefaultMetrics({ register: registry });
    return registry;
  });
  return processRegistry;
}

/** The queue label of a job queue: its own name, but `webhook` for every endpoint's queue (`webhook:<id>`). */
const queueLabel = (queue: string) => (queue.startsWith('webhook:') ? 'webhook' : queue);

export function createMetrics(deps: { db: Db; clock: Clock }) {
  const store = createMetricStore(deps.db);
  const { Counter, Gauge, Histogram, Registry } = promClasses();
  const registry = new Registry();
  const registers = [registry];
  const counters = new Map(
    Object.entries(COUNTERS).map(([key, c]) => [
      key,
      new Counter({ name: c.name, help: c.help, labelNames: ['workspace'], registers }),
    ]),
  );
  const queueJobs = new Gauge({
    name: 'svc_queue_jobs',
    help: 'Jobs in the job table (due, waiting for a later time, or running), by queue (webhook: every endpoint).',
    labelNames: ['queue'],
    registers,
  });
  const queueOldest = new Gauge({
    name: 'svc_queue_oldest_due_seconds',
    help: 'How long the job of the queue due longest has been due, on the service clock (0: none is due).',
    labelNames: ['queue'],
    registers,
  });
  const opened = new Counter({
    name: 'svc_connections_opened_total',
    help: 'Connections accepted by a mail listener since the server started, by protocol and listener.',
    labelNames: ['protocol', 'listener'],
    registers,
  });
  const open = new Gauge({
    name: 'svc_connections_open',
    help: 'Connections of a mail listener open now, by protocol and listener.',
    labelNames: ['protocol', 'listener'],
    registers,
  });
  const requests = new Histogram({
    name: 'svc_http_request_duration_seconds',
    help: 'HTTP requests since the server started, by method, route pattern and status code: from the first byte handled to the answer.',
    labelNames: ['method', 'route', 'code'],
    buckets: REQUEST_BUCKETS,
    registers,
  });

  /** Reads what the database holds into the series that report it. */
  function readDatabase() {
    for (const c of counters.values()) c.reset();
    for (const row of store.counts()) {
      counters.get(row.name)?.inc({ workspace: row.workspace_id || NO_WORKSPACE }, row.n);
    }
    queueJobs.reset();
    queueOldest.reset();
    const depth = new Map<string, { jobs: number; oldest: number }>();
    for (const q of store.queues({ monotonic: deps.clock.monotonic(), service: deps.clock.now() })) {
      const d = depth.get(queueLabel(q.queue)) ?? { jobs: 0, oldest: 0 };
      d.jobs += q.jobs;
      d.oldest = Math.max(d.oldest, q.oldestDueMs);
      depth.set(queueLabel(q.queue), d);
    }
    // The queues that always exist are reported when empty too, so a dashboard's series does not vanish.
    for (const queue of ['default', 'retention', 'webhook'])
      if (!depth.has(queue)) depth.set(queue, { jobs: 0, oldest: 0 });
    for (const [queue, d] of depth) {
      queueJobs.set({ queue }, d.jobs);
      queueOldest.set({ queue }, d.oldest / 1000);
    }
  }

  return {
    /**
     * Counts a connection a listener accepted, open until the returned function is called (call it when the socket
     * closes). `protocol` is `smtp`, `pop3`, `imap`…; `listener` tells the listeners of one protocol apart (the sink,
     * submission's STARTTLS and implicit-TLS ports), and is the protocol when it has one listener.
     */
    connectionOpened(protocol: string, listener: string = protocol): ConnectionClosed {
      const labels = { protocol, listener };
      opened.inc(labels);
      open.inc(labels);
      let closed = false;
      return () => {
        if (closed) return;
        closed = true;
        open.dec(labels);
      };
    },
    /** Records an HTTP request answered: `route` is its route's pattern (`/v1/emails/{id}`), never the path asked. */
    observeRequest(method: string, route: string, code: number | string, seconds: number): void {
      requests.observe({ method, route, code: String(code) }, seconds);
    },
    /** The text exposition of every series, the database's read now, and its content type. */
    async scrape(): Promise<{ body: string; contentType: string }> {
      const all = Registry.merge([await processMetrics(), registry]);
      // Read and taken in one turn: each series' values are copied as metrics() begins, before it first awaits.
      readDatabase();
      return { body: await all.metrics(), contentType: registry.contentType };
    },
  };
}
export type Metrics = ReturnType<typeof createMetrics>;
