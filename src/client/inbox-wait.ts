// Waiting for the next caught message of a local server (`svc inbox wait`, svc/testing's `inbox.waitFor`): by the
// server's inbox stream (GET /sandbox/stream, server-sent events; nothing polls), on the service clock, so a manual
// clock works too.
import type { CaughtMessageSummary, InboxEvent } from '../contract/sandbox.js';
import type { Client } from './index.js';

/** Whether a subject filter matches: a substring of the subject, case-insensitively (none: every message). */
export function subjectMatches(m: CaughtMessageSummary, subject: string | undefined): boolean {
  return subject === undefined || (m.subject ?? '').toLowerCase().includes(subject.toLowerCase());
}

/**
 * Every caught message to `to` (all of them when undefined) received at or after `since`, newest first, by the
 * service's own rule for `to` (an envelope recipient, or a To or Cc address, case-insensitively).
 */
export async function caughtSince(
  client: Client,
  to: string | undefined,
  since: string | undefined,
): Promise<CaughtMessageSummary[]> {
  const all: CaughtMessageSummary[] = [];
  for (let after: string | undefined; ; ) {
    const page = (await client.sandbox('listMessages', { query: { to, since, limit: 100, after } })).body;
    all.push(...page.data);
    if (!page.has_more) return all;
    after = page.data.at(-1)!.id;
  }
}

/**
 * Whether a message just caught (from the stream) is to `to` by the service's rule. Its To and Cc are in the
 * summary; only an envelope recipient (a Bcc) needs the service, asked for the mail to `to` since it was received.
 */
export async function isTo(client: Client, to: string, m: CaughtMessageSummary): Promise<boolean> {
  const wanted = to.toLowerCase();
  if ([...m.to, ...m.cc].some((a) => a.toLowerCase() === wanted)) return true;
  return (await caughtSince(client, to, m.received_at)).some((c) => c.id === m.id);
}

/** The server ended the inbox stream while a wait was on: it stopped. */
export class InboxStreamEnded extends Error {
  constructor() {
    super('the server ended the inbox stream while waiting: it stopped');
    this.name = 'InboxStreamEnded';
  }
}

export interface CaughtWait {
  /** Only mail to this address (an envelope recipient, To or Cc); any when undefined. */
  to?: string;
  /** Besides `to`: whether a message is the one awaited. */
  accept(m: CaughtMessageSummary): boolean | Promise<boolean>;
  /** Take mail received at or after this service time, rather than only mail arriving after the wait began. */
  since?: string;
  timeoutMs: number;
  /** The local clock the timeout runs on. */
  clock: { now(): number; sleep(ms: number, signal?: AbortSignal): Promise<void> };
  /** Called once nothing already caught matches, just before the wait proper (a spinner, a log line). */
  onWaiting?(since: string): void | Promise<void>;
}

export interface CaughtWaitResult {
  /** The message awaited; undefined when the time ran out. */
  found?: CaughtMessageSummary;
  /** The service time the wait counted from. */
  since: string;
  /** Matching mail already there when the wait began (not taken, unless `since` was given). */
  already: ReadonlySet<string>;
}

/**
 * Waits for the next caught message that `to` and `accept` take. "Next" is on the service clock: mail received at or
 * after its time when the wait began (or `since`), except mail already there at that moment (under a manual clock
 * that has not moved, earlier mail has the same time). Throws InboxStreamEnded when the server stops meanwhile.
 */
export async function waitForCaught(client: Client, o: CaughtWait): Promise<CaughtWaitResult> {
  const deadline = o.clock.now() + o.timeoutMs;
  const matching = async (since: string | undefined) => {
    const all = await caughtSince(client, o.to, since);
    const taken: CaughtMessageSummary[] = [];
    for (const m of all) if (await o.accept(m)) taken.push(m);
    return taken;
  };
  const since = o.since ?? (await client.sandbox('getClock')).body.now;
  const already = new Set(o.since ? [] : (await matching(since)).map((m) => m.id));
  const stop = new AbortController();
  try {
    // The stream first, then what arrived before it started: a message is in one or the other, or both.
    const stream = await client.inboxStream({ signal: stop.signal });
    const found = (await matching(since)).filter((m) => !already.has(m.id)).at(-1);
    if (found) return { found, since, already };
    await o.onWaiting?.(since);
    const arrival = nextMatch(client, stream, o);
    const expiry = o.clock.sleep(Math.max(0, deadline - o.clock.now()), stop.signal).then(() => undefined);
    // Whichever loses is ended by the abort below; its rejection is expected.
    arrival.catch(() => {});
    expiry.catch(() => {});
    return { found: await Promise.race([arrival, expiry]), since, already };
  } finally {
    stop.abort();
  }
}

/** The first message of the stream that matches; throws when the stream ends (the server stopped). */
async function nextMatch(
  client: Client,
  stream: AsyncIterable<InboxEvent>,
  o: CaughtWait,
): Promise<CaughtMessageSummary> {
  for await (const e of stream) {
    if (e.event === 'message' && (o.to === undefined || (await isTo(client, o.to, e.data))) && (await o.accept(e.data)))
      return e.data;
  }
  throw new InboxStreamEnded();
}
