// `svc-mail/playwright`: fixtures for @playwright/test (docs/testing.md#browser-tests-with-playwright). A sandbox per
// worker — the `svc serve` that the config's `webServer` (or a global setup) started, found by its URL, or one the
// worker starts in its own process — and an inbox per test: addresses unique to the test and its retry, so that
// parallel workers never see each other's mail, a wait scoped to them (client/inbox-wait.ts, the wait of
// `svc inbox wait`), the message's HTML shown in the page as the sandbox serves it, and the test's mail attached to
// the report when it fails. @playwright/test is an optional peer dependency: only this module imports it.
import { createHash } from 'node:crypto';
import { test as base, type Page, type TestInfo } from '@playwright/test';
import { createClient, type Client } from '../client/index.js';
import { sleep } from '../client/backoff.js';
import { ServerStopped, caughtSince } from '../client/inbox-wait.js';
import {
  addressedTo,
  type CaughtMessage,
  type CaughtMessageSummary,
  type MessageAppearance,
} from '../contract/inbox.js';
import { findLocalServer, reachableAt } from '../lib/local-servers.js';
import type { Sandbox, SandboxOptions } from './index.js';
import { readMessage, type TestMessage, waitAndRead } from './message.js';

export { expect } from '@playwright/test';
export type { LinkChoice, LinkRole, MessageLink } from '../lib/extract.js';
export type { SandboxOptions } from './index.js';
export type { TestMessage } from './message.js';

/**
 * Which sandbox the tests use (the `svc` option, worker-scoped). With a `baseUrl` (or SVC_BASE_URL): the `svc serve`
 * there, with `adminToken` (or SVC_ADMIN_TOKEN; left out, found as `svc inbox` finds it, in the registry of the
 * servers running on this machine). Without, or with `sandbox` (svc-mail/testing's options) and no `baseUrl`: each
 * worker starts a sandbox of its own, in memory, on the real clock.
 */
export interface SvcOption {
  /** The API's base URL, `http://127.0.0.1:4010/v1`. */
  baseUrl?: string;
  adminToken?: string;
  /** For a sandbox the worker starts (svc-mail/testing's `startSandbox` options; the clock is `real` unless given). */
  sandbox?: SandboxOptions;
}

/** How each test's inbox is made (the `svcInbox` option, test-scoped). */
export interface SvcInboxOption {
  /** The local part before the `+` (default `test`): `signup` gives `signup+3f9a0c1d2e-0@example.org`. */
  prefix?: string;
  /** The domain of the addresses (default `example.org`). */
  domain?: string;
  /** Delete the test's messages when it ends, after its report has them (default false). */
  clear?: boolean;
  /** Milliseconds `waitFor` waits by default (default 10,000). */
  timeout?: number;
}

/** The sandbox of a worker. */
export interface WorkerSandbox {
  /** `http://127.0.0.1:PORT/v1` */
  apiUrl: string;
  adminToken: string;
  /** The package's client, with the admin token (and the seeded test key of a sandbox the worker started). */
  client: Client;
  /** The sandbox the worker started (svc-mail/testing's), or null when it uses a running `svc serve`. */
  local: Sandbox | null;
}

export interface InboxWaitOptions {
  /** Only mail to this address (default: any of the test's addresses). */
  to?: string;
  /** Only mail whose subject contains this text (any case). */
  subject?: string;
  /** Only mail this function takes. */
  match?: (m: TestMessage) => boolean;
  /** Milliseconds of real time before it gives up (default: the `svcInbox` option's, else 10,000). */
  timeout?: number;
}

/** The inbox of one test. */
export interface TestInbox {
  /** An address unique to this test and this retry: `test+<hash of the test>-<retry>@example.org`. */
  readonly address: string;
  /** Every address of the test, `address` first. */
  readonly addresses: readonly string[];
  /** Another address of the test's own (`test+<hash>-<retry>-<label or n>@…`), which `waitFor` watches too. */
  newAddress(label?: string): string;
  /**
   * The oldest message to the test's addresses (or `to`) caught since the test began that no earlier wait returned,
   * waiting for it: with its `code` and its action link (`link()`), as `svc inbox wait --extract` reads them.
   */
  waitFor(opts?: InboxWaitOptions): Promise<TestMessage>;
  /** Every message to the test's addresses caught since the test began, newest first. */
  list(): Promise<CaughtMessageSummary[]>;
  /**
   * Navigates `page` to the message's HTML as the sandbox serves it to the inbox page — the reader's view, with its
   * policy: no script, no remote content; links open a new page — for screenshots and visual assertions.
   * `appearance` shows it as a reader in light or dark mode sees it.
   */
  open(page: Page, message: string | { id: string }, opts?: { appearance?: MessageAppearance }): Promise<void>;
  /** Deletes the test's messages (only those: other tests' mail stays). */
  clear(): Promise<void>;
}

export interface SvcTestFixtures {
  svcInbox: SvcInboxOption;
  inbox: TestInbox;
}

export interface SvcWorkerFixtures {
  svc: SvcOption;
  sandbox: WorkerSandbox;
}

const DEFAULT_WAIT_MS = 10_000;
const wallClock = { now: Date.now, sleep };

export const test = base.extend<SvcTestFixtures, SvcWorkerFixtures>({
  svc: [{}, { scope: 'worker', option: true }],
  svcInbox: [{}, { option: true }],

  sandbox: [
    async ({ svc }, use) => {
      const found = await connect(svc);
      try {
        await use(found);
      } finally {
        await found.local?.close();
      }
    },
    { scope: 'worker', timeout: 60_000 },
  ],

  inbox: async ({ sandbox, svcInbox }, use, testInfo) => {
    const inbox = await testInbox(sandbox, svcInbox, testInfo);
    await use(inbox);
    if (testInfo.status !== testInfo.expectedStatus) await attachMail(inbox, sandbox.client, testInfo);
    if (svcInbox.clear) await inbox.clear();
  },
});

/** The sandbox of the `svc` option, of SVC_BASE_URL and SVC_ADMIN_TOKEN, or one started in this worker. */
async function connect(svc: SvcOption): Promise<WorkerSandbox> {
  // Sandbox options ask for a sandbox of the worker's own, whatever SVC_BASE_URL says.
  const baseUrl = svc.baseUrl ?? (svc.sandbox ? undefined : process.env.SVC_BASE_URL);
  if (!baseUrl) {
    // Loaded only here: a worker that uses a running server never loads the server's modules.
    const { startSandbox } = await import('./index.js');
    const local = await startSandbox({ clock: 'real', ...svc.sandbox });
    return { apiUrl: local.apiUrl, adminToken: local.adminToken, client: local.client, local };
  }
  const apiUrl = reachableAt(baseUrl.replace(/\/+$/, ''));
  const adminToken = svc.adminToken ?? process.env.SVC_ADMIN_TOKEN ?? findLocalServer(apiUrl)?.admin_token;
  if (!adminToken) {
    throw new Error(
      `svc-mail/playwright: no admin token for the sandbox at ${apiUrl}. Give it (SVC_ADMIN_TOKEN, or the svc ` +
        "option's adminToken), or start `svc serve` on this machine, where its token is found by its URL; without a " +
        'base URL (SVC_BASE_URL, or the option) each worker starts a sandbox of its own.',
    );
  }
  return { apiUrl, adminToken, client: createClient({ baseUrl: apiUrl, adminToken }), local: null };
}

/**
 * The test's addresses: a hash of the test's id and repeat (the same test in another project, or repeated, is another
 * test) and its retry, so that a retry never takes the mail of the attempt before it.
 */
function testAddress(o: SvcInboxOption, testInfo: TestInfo): string {
  const hash = createHash('sha256')
    .update(`${testInfo.testId}\0${testInfo.repeatEachIndex}`)
    .digest('hex')
    .slice(0, 10);
  return `${o.prefix ?? 'test'}+${hash}-${testInfo.retry}@${o.domain ?? 'example.org'}`;
}

async function testInbox(sandbox: WorkerSandbox, o: SvcInboxOption, testInfo: TestInfo): Promise<TestInbox> {
  const { client, apiUrl, adminToken } = sandbox;
  const address = testAddress(o, testInfo);
  const addresses = [address];
  // Mail counts from the test's start on the service clock: a server reused across runs still holds the last run's
  // mail to these same addresses.
  const since = (await client.sandbox('getClock')).body.now;
  // The server's rule for `to`, for any of the test's addresses.
  const ours = (m: CaughtMessage) => addresses.some((a) => addressedTo([...m.envelope.rcpt_to, ...m.to, ...m.cc], a));
  const list = async () => {
    const seen = new Map<string, CaughtMessageSummary>();
    for (const a of addresses) for (const m of await caughtSince(client, a, since)) seen.set(m.id, m);
    return [...seen.values()].sort((a, b) => b.received_at.localeCompare(a.received_at));
  };

  return {
    address,
    addresses,
    newAddress(label) {
      const [local, domain] = [address.slice(0, address.lastIndexOf('@')), address.slice(address.lastIndexOf('@'))];
      const suffix = label === undefined ? String(addresses.length) : label.replace(/[^A-Za-z0-9._-]/g, '-');
      const added = `${local}-${suffix}${domain}`;
      if (!addresses.includes(added)) addresses.push(added);
      return added;
    },
    async waitFor(w = {}) {
      const timeout = w.timeout ?? o.timeout ?? DEFAULT_WAIT_MS;
      // One address: the listing filters by it; several: each message is asked whether it is to one of them.
      const to = w.to ?? (addresses.length === 1 ? address : undefined);
      let found;
      try {
        found = await waitAndRead(
          client,
          { to, subject: w.subject, since, timeoutMs: timeout, clock: wallClock },
          { accept: to === undefined ? ours : undefined, match: w.match },
        );
      } catch (err) {
        if (err instanceof ServerStopped) throw new Error('inbox.waitFor: the sandbox stopped while waiting for mail');
        throw err;
      }
      if (found) return found;
      const wanted = [
        `to ${to ?? addresses.join(' or ')}`,
        w.subject !== undefined && `with "${w.subject}" in its subject`,
      ]
        .filter(Boolean)
        .join(' ');
      const got = await list();
      const held = got.length
        ? `Caught for this test: ${got.map((m) => `"${m.subject ?? ''}" to ${m.to.join(', ')}${m.claimed ? ' (an earlier wait returned it)' : ''}`).join('; ')}`
        : 'Nothing was caught for this test (was the message sent to inbox.address, and accepted?)';
      throw new Error(`inbox.waitFor: no message ${wanted} was caught within ${timeout} ms. ${held}.`);
    },
    list,
    async open(page, message, opts = {}) {
      const id = typeof message === 'string' ? message : message.id;
      const url = new URL(`/sandbox/messages/${encodeURIComponent(id)}/html`, apiUrl);
      if (opts.appearance) url.searchParams.set('appearance', opts.appearance);
      // The admin token goes with this one request alone, never with what the message loads or links to.
      const only = (u: URL) => u.href === url.href;
      await page.route(only, (route) =>
        route.continue({ headers: { ...route.request().headers(), authorization: `Bearer ${adminToken}` } }),
      );
      try {
        const res = await page.goto(url.href);
        if (!res?.ok()) throw new Error(`inbox.open: the sandbox answered ${res?.status()} for message ${id}`);
      } finally {
        await page.unroute(only);
      }
    },
    async clear() {
      for (const m of await list()) {
        await client.sandbox('deleteMessage', { params: { id: m.id } }).catch(() => {});
      }
    },
  };
}

/** The test's mail in its report: subjects, codes and links as JSON, and each message's HTML. */
async function attachMail(inbox: TestInbox, client: Client, testInfo: TestInfo): Promise<void> {
  const caught = await inbox.list().catch(() => []);
  const messages = [];
  for (const [n, summary] of caught.reverse().entries()) {
    let m: TestMessage;
    try {
      m = readMessage((await client.sandbox('getMessage', { params: { id: summary.id } })).body);
    } catch {
      continue; // deleted meanwhile
    }
    messages.push({
      id: m.id,
      received_at: m.received_at,
      from: m.from,
      to: m.to,
      subject: m.subject,
      code: m.code,
      links: m.links.map((l) => ({ role: l.role, text: l.text, url: l.url })),
    });
    if (m.html) await testInfo.attach(`mail ${n + 1}.html`, { body: m.html, contentType: 'text/html' });
  }
  const body = JSON.stringify({ addresses: inbox.addresses, messages }, null, 2);
  await testInfo.attach('caught mail', { body, contentType: 'application/json' });
}
