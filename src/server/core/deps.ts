// What core needs from the outside world: time, secrets, durable jobs, configuration.
// Tests and the manual clock drive core through these; nothing in core calls Date.now().
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { Changes } from '../../lib/changes.js';
import { onMonotonic, type Clock } from '../../lib/clock.js';
import type { Logger } from '../../lib/log.js';
import type { Db, GroupCommit } from '../store/db.js';
import type { ExpectedRecord } from '../store/domains.js';
import { DEFAULT_QUEUE, type JobStore } from '../store/jobs.js';
import type { AttachmentUrlPolicy } from './rules/attachment-urls.js';
import type { JobKind, JobPayloads } from './rules/job-kinds.js';

export interface Secrets {
  /** HS256 key for access tokens. */
  jwtKey: Uint8Array;
  /** Key of the keyed hash that stores API keys, refresh tokens, invite and verification codes. */
  hashKey: Buffer;
}

export interface ServiceConfig {
  /**
   * The origin the service is reached at, e.g. `http://127.0.0.1:4010` (links in emails): the API's, known once it
   * listens, so only what runs from then on reads it (requests, and jobs, whose schedulers start then).
   */
  origin(): string;
  openSignup: boolean;
  waitlistUrl: string;
  /** Sender of the service's own mail (verification, notices). */
  systemFrom: string;
  /** The provider's host names that customers' records point at. */
  providerHosts: ProviderHosts;
  /** Where an attachment's `url` may lead: checked when a message is sent, and again when it is fetched. */
  attachmentUrls: AttachmentUrlPolicy;
}

export interface ProviderHosts {
  /** MX target of the MAIL FROM subdomain (bounces and feedback). */
  feedback: string;
  /** SPF include. */
  spf: string;
  /** CNAME target of a tracking host. */
  tracking: string;
  /** MX targets of a mailbox domain, by priority. */
  mailboxMx: string[];
  autodiscover: string;
  /** Mailbox for TLS-RPT reports. */
  tlsRpt: string;
}

export interface Jobs {
  /**
   * Adds a durable job (to the default queue unless one is named, in no lane unless one is); call inside the
   * transaction of the change that caused it. `runAt` (service clock, now by default) is kept as the same delay from
   * now: a later step of the wall clock neither holds it back nor brings it forward.
   */
  enqueue<K extends JobKind>(
    kind: K,
    payload: JobPayloads[K],
    when?: { runAt?: number; queue?: string; lane?: string },
  ): void;
  /**
   * Adds a durable job due at an instant its sender chose (a scheduled send), in the default queue: it runs when the
   * service clock reaches it, however the wall clock steps meanwhile, and through a restart.
   */
  enqueueAt<K extends JobKind>(kind: K, payload: JobPayloads[K], at: number, lane?: string): void;
  /** Drops every job of a queue (call inside a transaction). */
  dropQueue(queue: string): void;
  /** The id of the queue's job of this kind, added (due now) if there is none: a recurring job. */
  ensure<K extends JobKind>(kind: K, payload: JobPayloads[K], queue?: string): number;
  /** Makes a job of the queue that waits for a later time due now. */
  hasten(id: number, queue?: string): void;
}

export interface Deps {
  db: Db;
  /** Runs a write in the next group commit; resolves once it is durable. */
  commit: GroupCommit;
  clock: Clock;
  log: Logger;
  secrets: Secrets;
  config: ServiceConfig;
  jobs: Jobs;
  resolver: Resolver;
  /** Wakes long polls and live pages once a change has committed (topics: `events:<workspace id>`, `events`, `sink`, `webhooks`). */
  changes: Changes;
}

/**
 * The schedulers of the job queues, as the enqueuer tells them of its writes (core/scheduler.ts's Schedulers, which
 * core does not import). They need not have started: a kick before they start is a no-op, and a start finds the rows.
 */
export interface QueueSchedulers {
  /**
   * Asks the queue's scheduler for a step soon (after the current transaction has committed); `due`: the id of the job
   * enqueued, due now, that it is asked for.
   */
  kick(queue: string, due?: number): void;
  /** The queue's jobs were all dropped: its scheduler stops. */
  retire(queue: string): void;
}

/** Builds the job enqueuer: a durable row now, a kick to the queue's scheduler once the caller's transaction has committed. */
export function jobsFor(store: JobStore, clock: Clock, scheduler: QueueSchedulers): Jobs {
  return {
    enqueue(kind, payload, { runAt, queue = DEFAULT_QUEUE, lane } = {}) {
      const now = clock.monotonic();
      const id = store.enqueue(kind, payload, runAt === undefined ? now : onMonotonic(clock, runAt), now, {
        queue,
        lane,
      });
      scheduler.kick(queue, runAt === undefined ? id : undefined);
    },
    enqueueAt(kind, payload, at, lane) {
      store.enqueue(kind, payload, at, clock.monotonic(), { fixed: true, lane });
      scheduler.kick(DEFAULT_QUEUE);
    },
    dropQueue(queue) {
      store.dropQueue(queue);
      scheduler.retire(queue);
    },
    ensure(kind, payload, queue = DEFAULT_QUEUE) {
      const now = clock.monotonic();
      const id = store.ensure(kind, payload, now, now, queue);
      scheduler.kick(queue);
      return id;
    },
    hasten(id, queue = DEFAULT_QUEUE) {
      if (store.hasten(id, clock.monotonic())) scheduler.kick(queue);
    },
  };
}

/** HMAC-SHA-256 of a secret value under the server's hash key, hex. */
export function keyedHash(secrets: Secrets, value: string): string {
  return createHmac('sha256', secrets.hashKey).update(value, 'utf8').digest('hex');
}

/** Constant-time string comparison. */
export function safeEqual(a: string, b: string): boolean {
  const ab = Buffer.from(a);
  const bb = Buffer.from(b);
  return ab.length === bb.length && timingSafeEqual(ab, bb);
}

/** What one resolver said about one host and type. MX values are `PRIORITY EXCHANGE`; TXT chunks are joined. */
export type DnsAnswer =
  | { state: 'found'; values: string[] }
  | { state: 'none' }
  | { state: 'propagating' }
  | { state: 'error'; error: string };

/** The record types the service looks up: those of the records it asks a domain to publish. */
export type LookupType = ExpectedRecord['type'];

/** DNS as core sees it: the sandbox zone or real resolvers (one answer per configured resolver). */
export interface Resolver {
  readonly name: 'sandbox' | 'system';
  lookup(host: string, type: LookupType): Promise<DnsAnswer[]>;
  /** `dns.promises.resolve`-shaped lookup for mailauth (DKIM verification). */
  resolve(name: string, rrtype: string): Promise<unknown>;
}
