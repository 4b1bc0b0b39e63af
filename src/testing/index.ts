// `svc-mail/testing`: the whole service inside a test run. `startSandbox()` starts it in this process — in memory, on
// ports chosen by the system, under a manual clock, seeded — and hands the test what it needs: a client with the
// seeded test key, a wait for caught mail with its links and codes, the clock, and webhook receivers that verify
// what they are sent. `close()` stops everything it started, so the test runner exits by itself.
// docs/testing.md describes it for users.
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createClient, type Client } from '../client/index.js';
import { sleep } from '../client/backoff.js';
import { ServerStopped, caughtSince, workspaceMatches } from '../client/inbox-wait.js';
import type { EventType, TypedEvent } from '../contract/events.js';
import type { MessageChecks } from '../contract/checks.js';
import type { CaughtMessageSummary, ReleaseResult } from '../contract/inbox.js';
import type { ChaosRule, ChaosState } from '../contract/chaos.js';
import type { ReadySeed } from '../contract/seed.js';
import type { SeedFile } from '../contract/seed-file.js';
import { ATTEMPT_HEADER, SIGNATURE_HEADER, verifyWebhook } from '../contract/signature.js';
import { parseDuration } from '../lib/duration.js';
import { createLogger } from '../lib/log.js';
import { startServer } from '../server/index.js';
import { type TestMessage, waitAndRead } from './message.js';

export type { ChaosRule, ChaosState } from '../contract/chaos.js';
export type { EventData, EventDataMap, EventType, TypedEvent } from '../contract/events.js';
export type { CheckFinding, MessageCheck, MessageChecks } from '../contract/checks.js';
export type { ReleaseResult } from '../contract/inbox.js';
export type { SeedFile } from '../contract/seed-file.js';
export type { LinkChoice, LinkRole, MessageLink } from '../lib/extract.js';
export type { TestMessage } from './message.js';

export interface SandboxOptions {
  /** `manual` (default): time moves only when the test moves it; `real`: the wall clock. */
  clock?: 'manual' | 'real';
  /**
   * Create the demo account, its verified domain and keys (default true); or what must exist, in the shape of
   * `svc serve --seed FILE`'s file (users, workspaces, domains, api_keys, webhook_endpoints, suppressions), which
   * replaces the demo account unless it says `demo_account: true`. A seed that is refused rejects with the file's
   * message, without a line.
   */
  seed?: boolean | SeedFile;
  /** Keep the data in this directory (SQLite files, secrets) instead of in memory. */
  dataDir?: string;
  /** Let anyone sign up through the API (default: only with an invite). */
  openSignup?: boolean;
  /** Sending requests a second per workspace (default 50). */
  sendRate?: number;
  /** Caught messages kept, the newest (default 10,000); null keeps them all. */
  maxMessages?: number | null;
  /**
   * Whether the SMTP sink offers STARTTLS (default false: a client needs only its host and port, as `svc serve`'s sink).
   * true for code under test that must meet STARTTLS; a client that upgrades whenever it is offered then needs
   * `submission.ca`.
   */
  smtpStarttls?: boolean;
  /** The server's log lines on stderr (default: none). */
  log?: boolean;
  /** A SpamAssassin spamd (`HOST:PORT`) for the spam check of `inbox.check` (default: that check is skipped). */
  spamd?: string;
  /** Let the links check of `inbox.check` reach loopback and private addresses (a test's own HTTP server). */
  checkPrivateLinks?: boolean;
  /** Let attachment urls lead to private addresses (RFC 1918, unique-local, CGNAT); loopback needs nothing. */
  allowPrivateAttachmentUrls?: boolean;
  /**
   * A relay (`svc serve --relay-url` and its flags, docs/local-server.md#release-and-relay) that `inbox.release` sends
   * caught mail through: its `smtp[s]://user:pass@host:port` URL, the envelope sender (default: the message's own),
   * the recipients it may reach (globs such as `*@example.com`; default anyone), and relay rules (`matching`: live
   * mail to matching recipients relayed as it is caught).
   */
  relay?: { url: string; from?: string; allow?: string[]; matching?: string[] };
}

export interface WaitForOptions {
  /** Only mail to this address (an envelope recipient, To or Cc). */
  to?: string;
  /** Only mail whose subject contains this text (any case). */
  subject?: string;
  /**
   * Only mail of this workspace (its id or name): mail sent through the API or SMTP submission with its keys, or caught
   * by the sink from a client that logged in with one of its keys.
   */
  workspace?: string;
  /** Only mail this function takes. */
  match?: (m: TestMessage) => boolean;
  /** Only mail caught at or after this service time (a `Date` or ISO 8601), rather than since the sandbox started. */
  since?: string | Date;
  /** Milliseconds of real time before it gives up (default 5,000). */
  timeout?: number;
}

/**
 * An event a captured endpoint was sent, its signature verified on arrival: `data` is typed by `type`
 * (`e.type === 'email.bounced'` narrows it to one with `bounce`).
 */
export type CapturedEvent<T extends EventType = EventType> = TypedEvent<T> & {
  /** The attempt that delivered it (the `Service-Delivery-Attempt` header), from 1. */
  attempt: number;
};

export interface Capture {
  /** The receiver's address, registered as an endpoint of the seeded workspace. */
  url: string;
  /** The endpoint's signing secret (`whsec_…`). */
  secret: string;
  endpointId: string;
  /** Every event received so far, in order of arrival. */
  events(): CapturedEvent[];
  /** The first event of the type (and predicate) received, waiting for it when it has not come yet. */
  waitFor<T extends EventType>(
    type: T,
    predicate?: (e: CapturedEvent<T>) => boolean,
    opts?: { timeout?: number },
  ): Promise<CapturedEvent<T>>;
  /** Removes the endpoint and stops the receiver. */
  close(): Promise<void>;
}

export interface Sandbox {
  /** `http://127.0.0.1:PORT/v1` */
  apiUrl: string;
  smtp: { host: string; port: number; url: string };
  /**
   * SMTP submission (docs/smtp.md): `port` with STARTTLS, `securePort` with implicit TLS; log in with any username and
   * an API key as the password. `ca` is the certificate both present (PEM), for the client to trust (nodemailer's
   * `tls: { ca }`).
   */
  submission: { host: string; port: number; securePort: number; ca: string; fingerprint: string };
  /** The inbox page, signed in by its token. */
  inboxUrl: string;
  adminToken: string;
  /** The demo account (email, password, workspace, domain, keys); null with `seed: false`. */
  seed: ReadySeed | null;
  /** With a seed object: the ids of the workspaces (by name) and users (by email) it declares; else null. */
  seeded: { workspaces: Record<string, string>; users: Record<string, string> } | null;
  /** The package's client, with the seeded test key (when seeded) and the admin token for the sandbox routes. */
  client: Client;
  inbox: {
    /**
     * The oldest caught message that matches and that no earlier `waitFor` returned, caught since the sandbox started
     * (or `since`) — before the call too — waiting for one when none has come yet.
     */
    waitFor(opts?: WaitForOptions): Promise<TestMessage>;
    /** Every caught message, newest first (only a workspace's, its id or name given). */
    list(opts?: { workspace?: string }): Promise<CaughtMessageSummary[]>;
    /** Deletes every caught message. */
    clear(): Promise<void>;
    /**
     * The checks of a caught message (docs/checks.md): HTML compatibility, links, authentication, content,
     * accessibility, spam. Made on the first call and kept; `refresh: 'links'` checks the links again. `message` is
     * the message, its `eml_…` id, or the `msg_…` id its send answered.
     */
    check(message: string | { id: string }, opts?: { refresh?: 'links' }): Promise<MessageChecks>;
    /**
     * Sends a caught message, its bytes as caught, to `to` through the sandbox's relay (the `relay` option); each
     * recipient must be on its allow-list. Rejects with the Problem of a refusal (`relay_refused`,
     * `relay_unreachable`, `relay_recipient_not_allowed`, `relay_not_configured`). `message` as for `check`.
     */
    release(message: string | { id: string }, to: string | string[]): Promise<ReleaseResult>;
  };
  clock: {
    /** The service's time. */
    now(): Date;
    /** Moves the clock forward (`'30s'`, `'10m'`, `'1h'`, `'2d'`, or seconds) and runs everything that became due. */
    advance(by: string | number): Promise<Date>;
    /** Moves the clock forward to a time and runs everything that became due. */
    set(to: Date | string): Promise<Date>;
  };
  webhooks: {
    /** A receiver on 127.0.0.1, registered as an endpoint of the seeded workspace (for `events`, or every type). */
    capture(opts?: { events?: EventType[]; workspaceId?: string }): Promise<Capture>;
  };
  /** Failures on purpose (docs/local-server.md#chaos): `/v1` requests and SMTP stages refused, delayed or dropped. */
  chaos: {
    /** Replaces the rules (none: `[]`); `seed` makes the draws of `probability` repeatable. Resolves with them as listed. */
    set(rules: ChaosRule[], seed?: number): Promise<ChaosState>;
    /** The rules in force, each with how many more matches it applies to (`remaining`), and the seed. */
    list(): Promise<ChaosState>;
    /** Removes every rule. */
    clear(): Promise<void>;
  };
  /** Stops the receivers and the server: every socket, timer and thread it started. */
  close(): Promise<void>;
}

const DEFAULT_WAIT_MS = 5_000;

export async function startSandbox(options: SandboxOptions = {}): Promise<Sandbox> {
  const server = await startServer({
    host: '127.0.0.1',
    port: 0,
    smtpPort: 0,
    submissionPort: 0,
    submissionsPort: 0,
    pop3Port: 0,
    imapPort: 0,
    clock: options.clock ?? 'manual',
    ...(typeof options.seed === 'object' && options.seed !== null
      ? { seedObject: options.seed }
      : { seed: options.seed ?? true }),
    ...(options.dataDir ? { dataDir: options.dataDir } : { memory: true }),
    openSignup: options.openSignup,
    sendRate: options.sendRate,
    maxMessages: options.maxMessages,
    spamd: options.spamd,
    checkPrivateLinks: options.checkPrivateLinks,
    allowPrivateAttachmentUrls: options.allowPrivateAttachmentUrls,
    smtpStarttls: options.smtpStarttls,
    ...(options.relay
      ? {
          relayUrl: options.relay.url,
          relayFrom: options.relay.from,
          relayAllow: options.relay.allow,
          relayMatching: options.relay.matching,
        }
      : {}),
    log: createLogger({ silent: !options.log }),
  });
  const seed = server.ready.seed;
  // With a seed object, the client sends with its first test key (or its first key) unless the demo account came too.
  const given = typeof options.seed === 'object' ? (options.seed.api_keys ?? []) : [];
  const seededKey = (given.find((k) => k.value.startsWith('svc_test_')) ?? given[0])?.value;
  const client = createClient({
    baseUrl: server.api,
    apiKey: seed?.api_key_test ?? seededKey,
    adminToken: server.adminToken,
  });
  const captures = new Set<Capture>();
  const wallClock = { now: Date.now, sleep };
  // Where a wait's "since" begins: nothing older is left after inbox.clear() either.
  const started = new Date(server.clock.now()).toISOString();

  const sandbox: Sandbox = {
    apiUrl: server.api,
    smtp: { host: '127.0.0.1', port: server.smtpPort, url: server.smtp },
    submission: {
      host: '127.0.0.1',
      port: server.submissionPort!,
      securePort: server.submissionsPort!,
      ca: server.smtpTls.cert.toString(),
      fingerprint: server.smtpTls.fingerprint,
    },
    inboxUrl: server.inbox,
    adminToken: server.adminToken,
    seed,
    seeded: server.seeded && { workspaces: server.seeded.workspaces, users: server.seeded.users },
    client,
    inbox: {
      async waitFor(o = {}) {
        const timeout = o.timeout ?? DEFAULT_WAIT_MS;
        const from = o.since === undefined ? undefined : new Date(o.since);
        if (from && !Number.isFinite(from.getTime()))
          throw new TypeError(`inbox.waitFor: since takes a Date or an ISO 8601 time (got ${JSON.stringify(o.since)})`);
        const since = from ? from.toISOString() : started;
        let found;
        try {
          // The workspace is matched here, not by the server: a name no workspace has is a wait that times out.
          const workspace = o.workspace;
          found = await waitAndRead(
            client,
            { to: o.to, subject: o.subject, since, timeoutMs: timeout, clock: wallClock },
            { accept: workspace === undefined ? undefined : (m) => workspaceMatches(m, workspace), match: o.match },
          );
        } catch (err) {
          if (err instanceof ServerStopped)
            throw new Error('inbox.waitFor: the sandbox was closed while waiting for mail');
          throw err;
        }
        if (found) return found;
        throw new Error(await timedOut(o, timeout, since));
      },
      list: async (o = {}) =>
        (await caughtSince(client, undefined, undefined)).filter((m) => workspaceMatches(m, o.workspace)),
      async clear() {
        await client.sandbox('deleteMessages');
      },
      async check(message, o = {}) {
        const id = typeof message === 'string' ? message : message.id;
        return (
          await client.sandbox('getMessageChecks', { params: { id }, query: o.refresh ? { refresh: o.refresh } : {} })
        ).body;
      },
      async release(message, to) {
        const id = typeof message === 'string' ? message : message.id;
        return (await client.sandbox('releaseMessage', { params: { id }, body: { to } })).body;
      },
    },
    clock: {
      now: () => new Date(server.clock.now()),
      async advance(by) {
        const ms = typeof by === 'number' ? by * 1000 : parseDuration(by);
        if (ms === null || !Number.isFinite(ms) || ms < 0) {
          throw new TypeError(
            `clock.advance takes seconds or a duration such as '30s', '10m', '1h', '2d' (got ${JSON.stringify(by)})`,
          );
        }
        const r = await client.sandbox('moveClock', { body: { advance_seconds: ms / 1000 } });
        return new Date(r.body.now);
      },
      async set(to) {
        const r = await client.sandbox('moveClock', { body: { to: new Date(to).toISOString() } });
        return new Date(r.body.now);
      },
    },
    webhooks: {
      async capture(o = {}) {
        const workspaceId = o.workspaceId ?? seed?.workspace_id ?? Object.values(server.seeded?.workspaces ?? {})[0];
        if (!workspaceId) throw new Error('webhooks.capture: a sandbox started with seed: false needs a workspaceId');
        const c = await capture(client, workspaceId, o.events, () => captures.delete(c));
        captures.add(c);
        return c;
      },
    },
    chaos: {
      async set(rules, seed) {
        return (await client.sandbox('setChaos', { body: { rules, ...(seed !== undefined ? { seed } : {}) } })).body;
      },
      async list() {
        return (await client.sandbox('getChaos')).body;
      },
      async clear() {
        await client.sandbox('clearChaos');
      },
    },
    async close() {
      await Promise.all([...captures].map((c) => c.close()));
      await server.close();
    },
  };

  /** Why a wait gave up, with what the inbox does hold, so a test's failure shows what came instead. */
  async function timedOut(o: WaitForOptions, timeout: number, since: string): Promise<string> {
    const filters = [
      o.to && `to ${o.to}`,
      o.subject !== undefined && `with "${o.subject}" in its subject`,
      o.workspace !== undefined && `of workspace ${o.workspace}`,
      o.match && 'taken by match()',
    ]
      .filter(Boolean)
      .join(', ');
    const caught = await caughtSince(client, undefined, undefined);
    const lines = caught
      .slice(0, 10)
      .map(
        (m) =>
          `  ${m.received_at}  to ${[...m.to, ...m.cc].join(', ') || '(none)'}  "${m.subject ?? ''}"` +
          (m.claimed ? '  (an earlier wait returned it)' : ''),
      );
    const held = caught.length
      ? `The inbox holds ${caught.length} message${caught.length === 1 ? '' : 's'}${caught.length > 10 ? ', the newest 10' : ''}:\n${lines.join('\n')}`
      : 'The inbox is empty: nothing was caught (was the message sent, and accepted?).';
    return `inbox.waitFor: no message${filters ? ` ${filters}` : ''} was caught within ${timeout} ms (counting from ${since}). ${held}`;
  }

  // What the first delivery would load on its way, loaded in the background once the sandbox is handed over.
  server.warmUp();
  // And what the first inbox.check() would: the checks' threads, their data and html-validate (docs/testing.md).
  setImmediate(() => server.core.checks.warm());
  return sandbox;
}

/** A receiver on 127.0.0.1:0 registered as an endpoint; it answers 204 to what verifies and 400 to what does not. */
async function capture(
  client: Client,
  workspaceId: string,
  events: EventType[] | undefined,
  forget: () => void,
): Promise<Capture> {
  const received: CapturedEvent[] = [];
  const waiters = new Set<() => void>();
  let secret = '';
  const http: Server = createServer(async (req, res) => {
    const body = await readBody(req);
    try {
      verifyWebhook({ secret, header: header(req, SIGNATURE_HEADER), body });
    } catch {
      res.writeHead(400).end();
      return;
    }
    const e = JSON.parse(body.toString('utf8')) as TypedEvent;
    if (!received.some((r) => r.id === e.id)) {
      received.push({ ...e, attempt: Number(header(req, ATTEMPT_HEADER) ?? 1) } as CapturedEvent);
      for (const w of waiters) w();
    }
    res.writeHead(204).end();
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(http.address() as AddressInfo).port}/webhooks`;
  let endpoint;
  try {
    endpoint = (
      await client.sandbox('createWebhook', { body: { workspace_id: workspaceId, url, ...(events ? { events } : {}) } })
    ).body;
  } catch (err) {
    await closeServer(http);
    throw err;
  }
  secret = endpoint.secret;
  let closed = false;
  return {
    url,
    secret,
    endpointId: endpoint.id,
    events: () => [...received],
    waitFor<T extends EventType>(
      type: T,
      predicate: (e: CapturedEvent<T>) => boolean = () => true,
      o: { timeout?: number } = {},
    ): Promise<CapturedEvent<T>> {
      const timeout = o.timeout ?? DEFAULT_WAIT_MS;
      const of = (e: CapturedEvent) => (e.type === type ? (e as CapturedEvent<T>) : undefined);
      const find = () => received.map(of).find((e) => e !== undefined && predicate(e));
      return new Promise((resolve, reject) => {
        const check = () => {
          const found = find();
          if (!found) return;
          done();
          resolve(found);
        };
        const timer = setTimeout(() => {
          done();
          const got = received.map((e) => e.type).join(', ') || 'none';
          reject(new Error(`webhooks.waitFor: no ${type} event arrived within ${timeout} ms (received: ${got})`));
        }, timeout);
        const done = () => {
          clearTimeout(timer);
          waiters.delete(check);
        };
        waiters.add(check);
        check();
      });
    },
    async close() {
      if (closed) return;
      closed = true;
      forget();
      await client.sandbox('deleteWebhook', { params: { id: endpoint.id } }).catch(() => {});
      await closeServer(http);
    },
  };
}

function header(req: IncomingMessage, name: string): string | undefined {
  const v = req.headers[name.toLowerCase()];
  return Array.isArray(v) ? v[0] : v;
}

function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

function closeServer(http: Server): Promise<void> {
  http.closeAllConnections();
  return new Promise((resolve) => http.close(() => resolve()));
}
