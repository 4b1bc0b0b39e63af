// Waiting for caught mail of a local server (`svc inbox wait`, svc-mail/testing's `inbox.waitFor`, `svc mcp`'s
// `wait_for_message`): a wait returns the oldest matching message, caught since a given service time, that no earlier
// wait returned — mail caught before the call included, since an app's mail is often caught before the call that
// sent it returns. The mark "returned" lives on the server (POST /sandbox/messages/{id}/claim), so waits in separate
// processes share it, and two waits racing for one message get it once. New mail comes by the server's inbox stream
// (GET /sandbox/stream, server-sent events; nothing polls), on the service clock, so a manual clock works too.
import type { CaughtMessage, CaughtMessageSummary, InboxEvent } from '../contract/inbox.js';
import { ApiError } from './errors.js';
import type { Client } from './index.js';

/** Whether a subject filter matches: a substring of the subject, case-insensitively (none: every message). */
export function subjectMatches(m: CaughtMessageSummary, subject: string | undefined): boolean {
  return subject === undefined || (m.subject ?? '').toLowerCase().includes(subject.toLowerCase());
}

/**
 * Whether a message is of the workspace named by its id or its name, in any case, as the listing's `?workspace=` reads
 * it (none named: every message).
 */
export function workspaceMatches(m: CaughtMessageSummary, workspace: string | undefined): boolean {
  if (workspace === undefined) return true;
  return (
    m.workspace !== null && (m.workspace.id === workspace || m.workspace.name.toLowerCase() === workspace.toLowerCase())
  );
}

/**
 * Every caught message to `to` (all of them when undefined) received at or after `since`, newest first, by the
 * service's own rule for `to` (an envelope recipient, or a To or Cc address, case-insensitively); with `claimed`,
 * only the mail a wait took (true) or none did (false); with `workspace`, only that workspace's (its id or name; one
 * that no workspace has is the listing's 404).
 */
export async function caughtSince(
  client: Client,
  to: string | undefined,
  since: string | undefined,
  claimed?: boolean,
  workspace?: string,
): Promise<CaughtMessageSummary[]> {
  const all: CaughtMessageSummary[] = [];
  const filter = claimed === undefined ? {} : { claimed: claimed ? ('true' as const) : ('false' as const) };
  for (let after: string | undefined; ; ) {
    const query = { to, workspace, since, limit: 100, after, ...filter };
    const page = (await client.sandbox('listMessages', { query })).body;
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

/**
 * Which mail a wait takes: to `to` (an envelope recipient, To or Cc), of `workspace` (its id or name, any case), with
 * `subject` in its subject (any case); each: any when undefined.
 */
export interface MessageFilters {
  to?: string;
  workspace?: string;
  subject?: string;
}

/** A subscription to the inbox stream: the events that come after it began, until closed or the stream ends. */
interface Subscription {
  events: AsyncIterable<InboxEvent>;
  close(): void;
}

/**
 * One inbox stream shared by the waits of one client (svc-mail/testing's sandbox): opened by the first wait and kept
 * until close(), so that a wait does not open (and the server set up) a stream of its own — a request and its answer
 * on the way of every wait (bench:latency). A wait hears the events that come after it subscribed, as it would on a
 * stream of its own; when the server ends the stream, the waits on it end (InboxStreamEnded), and the next wait opens
 * another.
 */
export interface InboxWatch {
  subscribe(): Promise<Subscription>;
  /** Ends the stream and every wait on it. */
  close(): void;
}

export function createInboxWatch(client: Client): InboxWatch {
  type Listener = { push(e: InboxEvent): void; end(err?: unknown): void };
  /** The stream open now (or opening), with the waits that listen to it. */
  type Stream = { listeners: Set<Listener>; ended: boolean; stop: AbortController };
  let current: Promise<Stream> | undefined;
  let closed = false;

  async function open(): Promise<Stream> {
    const stream: Stream = { listeners: new Set(), ended: false, stop: new AbortController() };
    const events = await client.inboxStream({ signal: stream.stop.signal, events: ['message'] });
    void (async () => {
      let failure: unknown;
      try {
        for await (const e of events) for (const l of stream.listeners) l.push(e);
      } catch (err) {
        // Aborted by close(): the waits end as if the server had ended it.
        if (!stream.stop.signal.aborted) failure = err;
      } finally {
        stream.ended = true;
        for (const l of stream.listeners) l.end(failure);
        stream.listeners.clear();
      }
    })();
    return stream;
  }

  return {
    async subscribe() {
      if (closed) throw new InboxStreamEnded();
      const queue: InboxEvent[] = [];
      let wake: (() => void) | undefined;
      let ended: { err?: unknown } | undefined;
      const listener: Listener = {
        push(e) {
          queue.push(e);
          wake?.();
        },
        end(err) {
          ended ??= { err };
          wake?.();
        },
      };
      // A stream found ended (the server stopped since) is opened again, once; one that cannot be opened is thrown
      // to this wait, and the next wait tries again.
      let stream: Stream | undefined;
      for (let tries = 0; tries < 2 && !stream; tries++) {
        const p = current ?? open();
        current = p;
        let s: Stream;
        try {
          s = await p;
        } catch (err) {
          if (current === p) current = undefined;
          throw err;
        }
        if (!s.ended) stream = s;
        else if (current === p) current = undefined;
      }
      if (!stream) throw new InboxStreamEnded();
      stream.listeners.add(listener);
      const owner = stream;
      return {
        events: (async function* () {
          try {
            for (;;) {
              while (queue.length) yield queue.shift()!;
              if (ended) {
                if (ended.err !== undefined) throw ended.err;
                return;
              }
              await new Promise<void>((r) => {
                wake = r;
              });
              wake = undefined;
            }
          } finally {
            owner.listeners.delete(listener);
          }
        })(),
        close() {
          owner.listeners.delete(listener);
          listener.end();
        },
      };
    },
    close() {
      closed = true;
      void current?.then(
        (s) => s.stop.abort(),
        () => {},
      );
    },
  };
}

export interface MessageWait extends MessageFilters {
  /** Besides the filters: whether a message is the one awaited (svc-mail/testing's `match`). */
  match?(m: CaughtMessageSummary): boolean | Promise<boolean>;
  /** Only mail received at or after this service time (ISO 8601): where the caller's "since" begins. */
  since: string;
  timeoutMs: number;
  /** The local clock the timeout runs on. */
  clock: { now(): number; sleep(ms: number, signal?: AbortSignal): Promise<void> };
  /** Called once nothing already caught is taken, just before the wait on the stream (a spinner, a log line). */
  onWaiting?(): void | Promise<void>;
  /** The stream shared by the client's waits (none: the wait opens its own). */
  watch?: InboxWatch;
}

/**
 * The one wait for caught mail of `svc inbox wait`, `svc mcp`'s `wait_for_message` and svc-mail/testing's
 * `inbox.waitFor`: the oldest caught message received at or after `since` that the filters and `match` take and that
 * no earlier wait returned, claimed, in full (the claim's answer has it); undefined when the time runs out first. The
 * stream is opened before the mail already caught is listed, so a message is in one or the other (or both: a claim
 * takes it once). Throws InboxStreamEnded when the server stops meanwhile, and the listing's 404 for a workspace no
 * workspace is.
 */
export async function waitForMessage(client: Client, o: MessageWait): Promise<CaughtMessage | undefined> {
  const deadline = o.clock.now() + o.timeoutMs;
  const stop = new AbortController();
  const accept = async (m: CaughtMessageSummary) => subjectMatches(m, o.subject) && (!o.match || (await o.match(m)));
  let shared: Subscription | undefined;
  try {
    shared = await o.watch?.subscribe();
    // A wait hears of new mail alone: the server sends no other event.
    const stream = shared?.events ?? (await client.inboxStream({ signal: stop.signal, events: ['message'] }));
    // Newest first from the listing: tried oldest first.
    for (const m of (await caughtSince(client, o.to, o.since, false, o.workspace)).reverse()) {
      const taken = (await accept(m)) && (await claim(client, m.id));
      if (taken) return taken;
    }
    await o.onWaiting?.();
    const arrival = nextClaimed(client, stream, o, accept);
    const expiry = o.clock.sleep(Math.max(0, deadline - o.clock.now()), stop.signal).then(() => undefined);
    // Whichever loses is ended by the abort below; its rejection is expected.
    arrival.catch(() => {});
    expiry.catch(() => {});
    return await Promise.race([arrival, expiry]);
  } finally {
    stop.abort();
    shared?.close();
  }
}

/** The filters in words: `message to ada@example.org of workspace Acme with "code" in its subject`. */
export function describeWanted(f: MessageFilters): string {
  return [
    'message',
    f.to !== undefined && `to ${f.to}`,
    f.workspace !== undefined && `of workspace ${f.workspace}`,
    f.subject !== undefined && `with "${f.subject}" in its subject`,
  ]
    .filter(Boolean)
    .join(' ');
}

/**
 * After a wait gave up: the latest message the filters take, when a wait could not have taken it — an earlier wait
 * returned it (`claimed`), or it came before `since` (`before-since`) — for a caller that sent to the right address.
 */
export async function latestMissed(
  client: Client,
  f: MessageFilters,
  since: string,
): Promise<{ message: CaughtMessageSummary; why: 'claimed' | 'before-since' } | undefined> {
  const query = { to: f.to, workspace: f.workspace, limit: 100 };
  const recent = (await client.sandbox('listMessages', { query })).body.data;
  const latest = recent.find((m) => subjectMatches(m, f.subject));
  if (latest?.claimed) return { message: latest, why: 'claimed' };
  if (latest && Date.parse(latest.received_at) < Date.parse(since)) return { message: latest, why: 'before-since' };
  return undefined;
}

/**
 * A request about a message a wait has seen; undefined when the server answers 404: the message was deleted since (the
 * inbox emptied, the message pruned), so it is not the wait's message.
 */
export async function unlessDeleted<T>(request: Promise<T>): Promise<T | undefined> {
  try {
    return await request;
  } catch (err) {
    if (err instanceof ApiError && err.status === 404) return undefined;
    throw err;
  }
}

/**
 * Claims a message for this wait: the message in full when this call took it (none: another wait did, or it was
 * deleted).
 */
async function claim(client: Client, id: string): Promise<CaughtMessage | undefined> {
  const claimed = (await unlessDeleted(client.sandbox('claimMessage', { params: { id } })))?.body;
  return claimed?.taken ? claimed.message : undefined;
}

/** The first message of the stream that matches and that this wait claims; throws when the stream ends. */
async function nextClaimed(
  client: Client,
  stream: AsyncIterable<InboxEvent>,
  o: MessageWait,
  accept: (m: CaughtMessageSummary) => Promise<boolean>,
): Promise<CaughtMessage> {
  const since = Date.parse(o.since);
  for await (const e of stream) {
    if (e.event !== 'message' || Date.parse(e.data.received_at) < since) continue;
    if (!workspaceMatches(e.data, o.workspace)) continue;
    if (o.to !== undefined && !(await isTo(client, o.to, e.data))) continue;
    const taken = (await accept(e.data)) && (await claim(client, e.data.id));
    if (taken) return taken;
  }
  throw new InboxStreamEnded();
}
