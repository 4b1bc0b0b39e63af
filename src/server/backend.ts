// The first phase of `svc serve`'s start-up: everything behind the listeners, opened before anything listens — the
// data directory's lock, the store (a write probed: no room, no start), secrets, the clock, the schedulers (built, not
// started), core, the chaos rules, the change signal and the seed. It knows nothing of the listeners: index.ts opens
// them on it, and hands it only the origin the API will listen on.
import { SCOPES } from '../contract/keys.js';
import type { ReadySeed, Seed } from '../contract/seed.js';
import { createChanges, type Changes } from '../lib/changes.js';
import { manualClock, realClock, type Clock } from '../lib/clock.js';
import { base62 } from '../lib/ids.js';
import type { Logger } from '../lib/log.js';
import { type ServeOptions, webDnsServer } from './options.js';
import { createCore, type Core } from './core/index.js';
import type { RelayConfig } from './core/rules/relay.js';
import type { AttachmentUrlPolicy } from './core/rules/attachment-urls.js';
import { jobsFor, type ServiceConfig } from './core/deps.js';
import { LOCAL_PROVIDER_HOSTS } from './core/rules/domain-records.js';
import type { RetentionPolicy } from './core/retention.js';
import { queueConcurrency } from './core/webhook-deliveries.js';
import { DataDirInUse, lockDataDir, prepareDataDir } from './data-dir.js';
import { systemResolver } from './dns/system.js';
import { opened } from './startup-stack.js';
import { createChaos, type Chaos } from './core/chaos.js';
import { instanceId } from './instance.js';
import { loadSecrets, loadSeed, saveSeed } from './secrets.js';
import { type CheckRunnerOptions, createCheckRunner } from './checks/index.js';
import { verifyDkim } from './checks/mailauth.js';
import { openStorage } from './core/storage.js';
import { createSchedulers, type Schedulers } from './core/scheduler.js';
import type { SeedApplied } from './core/seed-file.js';
import type { SeedSource } from './seed-file.js';

/** What the backend is opened from: the server's options that concern it, as ServeOptions has them, and what it derives. */
export interface BackendOptions
  extends Pick<
    ServeOptions,
    | 'clock'
    | 'time'
    | 'dns'
    | 'dnsServer'
    | 'dnsTimeoutMs'
    | 'openSignup'
    | 'sendRate'
    | 'blockPattern'
    | 'maxDbSize'
    | 'rotateAdminToken'
  > {
  /** The data directory; null for an in-memory database, with secrets made afresh. */
  dataDir: string | null;
  log: Logger;
  retention: RetentionPolicy;
  /** Make the demo account of a fresh data directory, and report the one an earlier start kept (false: neither). */
  seed: boolean;
  /** A seed file's declared state (`--seed FILE`, or startSandbox's object), checked: applied on every start. */
  seedFile?: SeedSource | null;
  /** The origin the API listens on, from the listening phase: known once the API listens (core's `config.origin`). */
  origin: () => string;
  /** Where an attachment's `url` may lead (core's `config.attachmentUrls`): its ports filled in as the listeners bind. */
  attachmentUrls: AttachmentUrlPolicy;
  /** The relay of caught mail (options.ts relaySettings); null or absent: none. */
  relay?: RelayConfig | null;
  /** What the message checks use: a spamd, whether links may reach private addresses, how long links may take. */
  checks?: Pick<
    CheckRunnerOptions,
    'spamd' | 'privateLinks' | 'linkTimeoutMs' | 'linksDeadlineMs' | 'checksDeadlineMs' | 'checksMemoryMb' | 'thread'
  >;
}

/** The backend, open: what the listening phase builds on. */
export interface Backend {
  clock: Clock;
  config: ServiceConfig;
  core: Core;
  changes: Changes;
  /** The chaos rules of this server, which the HTTP API and the SMTP sink both follow; empty on every start. */
  chaos: Chaos;
  /** The job schedulers, built but not started: they start with their handlers once the API listens. */
  scheduler: Schedulers;
  adminToken: string;
  /** The data directory's instance id (the Svc-Sandbox-Instance header). */
  instance: string;
  /** The demo account created by this start (a fresh data directory, or in memory); null when none was. */
  seed: Seed | null;
  /** The seed the ready line reports: this start's, or the one kept by an earlier start while it still works. */
  readySeed: ReadySeed | null;
  /** What the seed file's start did, and the ids of what it declares; null without one. */
  seeded: SeedApplied | null;
  /** A write that touches the disk and leaves nothing behind; throws when the database cannot be written. */
  probeWrite(): void;
  /** Records the API's address in the data directory's lock, for the message a second server gets. */
  listening(api: string): void;
  /**
   * Closes what the backend opened, in reverse: the checkpoints, the database, then the lock; for a start that failed
   * (`failed`), a data directory that held nothing of svc's is then emptied of what this start made there.
   */
  close(failed?: boolean): Promise<void>;
}

/** Opens the backend; when that fails part-way, what it opened is closed again before the error goes on. */
export async function openBackend(o: BackendOptions): Promise<Backend> {
  const { dataDir, log } = o;
  const stack = opened();
  let failed = false;
  try {
    if (dataDir) {
      const prepared = prepareDataDir(dataDir);
      // At the bottom of the stack: once everything is closed, a failed start takes back what it made.
      stack.push(() => {
        if (failed) prepared.undo();
      });
    }
    // One server per data directory: a second one is refused here, before it opens the database.
    const lock = dataDir ? lockDataDir(dataDir) : null;
    if (lock) stack.push(() => lock.release());
    const { db, fresh, commit, jobs: jobStore, stopCheckpoints } = openStorage({ dataDir, maxBytes: o.maxDbSize, log });
    stack.push(() => void db.close());
    stack.push(stopCheckpoints);
    const { secrets, adminToken } = loadSecrets(dataDir, o.rotateAdminToken);
    if (o.rotateAdminToken && dataDir) log.info('a new admin token: every inbox session made with the last one ended');
    const clock: Clock = o.clock === 'manual' ? manualClock() : realClock(o.time);
    // A server that cannot write answers nothing but errors: it refuses to start, so a supervisor sees it exit.
    jobStore.probe();
    const released = jobStore.releaseAll();
    if (released) log.info('resuming jobs claimed before a restart', { jobs: released });
    // Work whose delay was set on a clock later than this one (the machine's clock ran ahead, a manual clock was moved
    // on) is due the same delay from now, not once the clock catches up.
    const rebased = jobStore.rebase(clock.monotonic());
    if (rebased) log.info('jobs set on a clock ahead of this one are due from now', { jobs: rebased });

    // The schedulers are built from what they run on, before core (whose enqueuer kicks them); they get their
    // handlers when they start, in the listening phase, which opens the outbound side the handlers use.
    const scheduler = createSchedulers({
      jobs: jobStore,
      commit,
      clock,
      log,
      concurrency: queueConcurrency,
    });
    const config: ServiceConfig = {
      origin: o.origin,
      openSignup: Boolean(o.openSignup),
      waitlistUrl: 'https://svc.dev/waitlist',
      systemFrom: 'svc <no-reply@svc.test>',
      providerHosts: LOCAL_PROVIDER_HOSTS,
      attachmentUrls: o.attachmentUrls,
    };
    const resolver = o.dns === 'system' ? systemResolver(o.dnsServer ?? [], o.dnsTimeoutMs) : 'sandbox';
    // The checks' thread and link connections start with the first message checked.
    const checker = createCheckRunner({
      log,
      spamd: o.checks?.spamd ?? null,
      privateLinks: o.checks?.privateLinks ?? false,
      linkTimeoutMs: o.checks?.linkTimeoutMs,
      linksDeadlineMs: o.checks?.linksDeadlineMs,
      checksDeadlineMs: o.checks?.checksDeadlineMs,
      checksMemoryMb: o.checks?.checksMemoryMb,
      dnsServer: webDnsServer(o),
      thread: o.checks?.thread,
      now: () => clock.now(),
    });
    stack.push(() => checker.close());
    const changes = createChanges();
    const core = createCore(
      { db, commit, clock, log, secrets, config, jobs: jobsFor(jobStore, clock, scheduler), resolver, changes },
      {
        sendRate: o.sendRate ?? 50,
        blockPatterns: (o.blockPattern ?? []).map((p) => new RegExp(p, 'i')),
        retention: o.retention,
        verifyDkim: (raw, dns) => verifyDkim(raw, (name, rrtype) => dns.resolve(name, rrtype)),
        checker,
        relay: o.relay ?? null,
      },
    );
    // One set of chaos rules per running server, followed by the `/v1` routes and the SMTP sink alike; they start empty
    // on every start.
    const chaos = createChaos();

    // The demo account is made before the API listens: a request never meets a server half set up.
    let seed: Seed | null = null;
    let readySeed: ReadySeed | null = null;
    if (o.seed) {
      if (fresh) {
        seed = await seedSandbox(core, o.dns !== 'system', !dataDir);
        if (dataDir) saveSeed(dataDir, seed);
      }
      readySeed = seed ?? (dataDir ? keptSeed(core, loadSeed(dataDir)) : null);
    }
    // The seed file's state, on every start, also before the API listens (core/seed-file.ts: what it changes).
    let seeded: SeedApplied | null = null;
    if (o.seedFile) {
      seeded = await core.seedFile.apply(o.seedFile.seed, { sandboxZone: o.dns !== 'system' });
      const { created, updated, unchanged } = seeded;
      log.info('seed file applied', { from: o.seedFile.from, created, updated, unchanged });
    }

    return {
      clock,
      config,
      core,
      changes,
      chaos,
      scheduler,
      adminToken,
      instance: instanceId(secrets),
      seed,
      readySeed,
      seeded,
      probeWrite() {
        jobStore.probe();
        if (commit.full) throw Object.assign(new Error('the last commit found no room'), { diskFull: true });
      },
      listening: (api) => lock?.listening(api),
      close: (failedStart = false) => {
        failed = failedStart;
        return stack.unwind();
      },
    };
  } catch (err) {
    // Refused for another server on the directory: what is there is that server's.
    failed = !(err instanceof DataDirInUse);
    await stack.unwind();
    throw err;
  }
}

/**
 * The demo account of a fresh data directory: a confirmed owner, a workspace, the verified domain `example.test`
 * (its records published in the sandbox zone), and a test and a live key with every scope.
 */
async function seedSandbox(core: Core, sandboxDns: boolean, inMemory: boolean): Promise<Seed> {
  const email = 'owner@example.test';
  const password = `sandbox-${base62(16)}`;
  const { user, workspace } = await core.accounts.seedOwner(email, password, 'Sandbox');
  const domain = await core.domains.create(workspace.id, { name: 'example.test' }, { inMemorySeed: inMemory });
  if (sandboxDns) {
    core.domains.publish(domain.id, {});
    await core.domains.verify(workspace.id, domain.id);
  }
  const test = core.keys.create(workspace.id, user.id, { name: 'Sandbox test key', scopes: [...SCOPES], mode: 'test' });
  const live = core.keys.create(workspace.id, user.id, { name: 'Sandbox live key', scopes: [...SCOPES], mode: 'live' });
  return {
    email,
    password,
    user_id: user.id,
    workspace_id: workspace.id,
    domain: domain.name,
    domain_id: domain.id,
    api_key_test: test.key,
    api_key_live: live.key,
  };
}

/**
 * The seed kept from an earlier start, as the ready line reports it: null once its account is gone (the database was
 * replaced), and a key that no longer works (revoked) as null.
 */
function keptSeed(core: Core, kept: Seed | null): ReadySeed | null {
  if (!kept || !core.accounts.exists(kept.user_id)) return null;
  const working = (key: string) => (core.keys.active(key) ? key : null);
  return { ...kept, api_key_test: working(kept.api_key_test), api_key_live: working(kept.api_key_live) };
}
