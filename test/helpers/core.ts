// Core over an in-memory SQLite database, built as the composition root builds it (server/backend.ts), for the unit
// tests beside core's rules (src/server/core/*.test.ts): a manual service clock, the sandbox zone for DNS, the real
// job store with no scheduler (a job stays in its table, where a test reads it and runs its step by hand), and the
// seed's account: an owner, a workspace, the verified domain example.test and a test key with every scope.
import { randomBytes } from 'node:crypto';
import { SCOPES } from '../../src/contract/keys.js';
import { createChanges } from '../../src/lib/changes.js';
import { manualClock, type ManualClock } from '../../src/lib/clock.js';
import { silentLogger } from '../../src/lib/log.js';
import { jobsFor, type ServiceConfig } from '../../src/server/core/deps.js';
import { LOCAL_PROVIDER_HOSTS } from '../../src/server/core/rules/domain-records.js';
import { createCore, type Core, type CoreOptions } from '../../src/server/core/index.js';
import type { CaughtMail } from '../../src/server/core/inbox-catch.js';
import type { KeyPrincipal } from '../../src/server/core/keys.js';
import { type Db, type GroupCommit, groupCommit, openDb } from '../../src/server/store/db.js';
import { createJobStore } from '../../src/server/store/jobs.js';

/** Where the service clock starts. */
export const START = Date.parse('2026-08-01T12:00:00.000Z');

export interface Job {
  kind: string;
  payload: Record<string, unknown>;
  /** When it is due, on the service clock. */
  runAt: number;
  queue: string;
}

export interface MemoryCore {
  core: Core;
  db: Db;
  /** Core's group commit: a write queued on it commits after (or with) every write queued before it. */
  commit: GroupCommit;
  clock: ManualClock;
  /** The jobs waiting, oldest first (of one kind when given). */
  jobs(kind?: string): Job[];
  /** The owner's workspace, its verified domain example.test, and a test key's principal with every scope. */
  seed: { userId: string; workspaceId: string; domainId: string; key: KeyPrincipal };
  close(): void;
}

export async function memoryCore(opts: Partial<CoreOptions> = {}): Promise<MemoryCore> {
  const { db } = openDb({ memory: true });
  const commit = groupCommit(db);
  const clock = manualClock(START);
  const jobStore = createJobStore(db);
  const config: ServiceConfig = {
    origin: () => 'http://127.0.0.1:4010',
    openSignup: true,
    waitlistUrl: 'https://svc.dev/waitlist',
    systemFrom: 'svc <no-reply@svc.test>',
    providerHosts: LOCAL_PROVIDER_HOSTS,
    attachmentUrls: { allowPrivate: false, ownPorts: () => new Set() },
  };
  const core = createCore(
    {
      db,
      commit,
      clock,
      log: silentLogger,
      secrets: { jwtKey: new Uint8Array(randomBytes(32)), hashKey: randomBytes(32) },
      config,
      jobs: jobsFor(jobStore, clock, { kick() {}, retire() {} }),
      resolver: 'sandbox',
      changes: createChanges(),
    },
    { sendRate: 1000, blockPatterns: [], ...opts },
  );
  const { user, workspace } = await core.accounts.seedOwner('owner@example.test', 'sandbox-password-1', 'Sandbox');
  const domain = await core.domains.create(workspace.id, { name: 'example.test' }, { inMemorySeed: true });
  core.domains.publish(domain.id, {});
  await core.domains.verify(workspace.id, domain.id);
  const created = core.keys.create(workspace.id, user.id, { name: 'test', scopes: [...SCOPES], mode: 'test' });
  const { ipAllowlist: _, ...key } = core.keys.authenticate(created.key);
  const rows = db.prepare('SELECT kind, payload, run_at, queue FROM jobs ORDER BY id');
  return {
    core,
    db,
    commit,
    clock,
    jobs: (kind) =>
      (rows.all() as { kind: string; payload: string; run_at: number; queue: string }[])
        .filter((j) => kind === undefined || j.kind === kind)
        .map((j) => ({ kind: j.kind, payload: JSON.parse(j.payload), runAt: j.run_at, queue: j.queue })),
    seed: { userId: user.id, workspaceId: workspace.id, domainId: domain.id, key },
    close: () => db.close(),
  };
}

/** Mail as the sink hands it to core: a plain message from a@example.net, to and subject as given. */
export function caughtMail(over: Partial<CaughtMail> = {}): CaughtMail {
  const to = over.to ?? ['ada@example.org'];
  const subject = over.subject ?? 'Hello';
  return {
    raw: Buffer.from(`From: a@example.net\r\nTo: ${to.join(', ')}\r\nSubject: ${subject}\r\n\r\nBody\r\n`),
    envelope: { mailFrom: 'a@example.net', rcptTo: to },
    messageIdHeader: null,
    from: 'a@example.net',
    to,
    cc: [],
    subject,
    headers: [],
    signed: false,
    preview: 'Body',
    hasAttachments: false,
    text: 'Body',
    ...over,
  };
}
