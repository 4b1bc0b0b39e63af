// Waiting for caught mail of a local server (`svc inbox wait`, svc-mail/testing's `inbox.waitFor`, `svc mcp`'s
// `wait_for_message`): a wait returns the oldest matching message, caught since a given service time, that no earlier
// wait returned — mail caught before the call included, since an app's mail is often caught before the call that
// sent it returns. The mark "returned" lives on the server, so waits in separate processes share it, and two waits
// racing for one message get it once. A wait is one request the server holds (POST /sandbox/messages/wait) until such
// a message is caught, woken by the sink's commit (nothing polls), on the service clock, so a manual clock works too.
// The inbox stream's readers (`svc inbox --follow`) ask `isTo` of what it announces.
import { addressedTo, type CaughtMessage, type CaughtMessageSummary, subjectHas } from '../contract/inbox.js';
import { ApiError } from './errors.js';
import type { Client } from './index.js';

/** Whether a subject filter matches: a substring of the subject, case-insensitively (none: every message). */
export function subjectMatches(m: CaughtMessageSummary, subject: string | undefined): boolean {
  return subjectHas(m.subject, subject);
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
  if (addressedTo([...m.to, ...m.cc], to)) return true;
  return (await caughtSince(client, to, m.received_at)).some((c) => c.id === m.id);
}

/** The server stopped while a wait was on (it answered the held wait with 503 as it shut down). */
export class ServerStopped extends Error {
  constructor() {
    super('the server stopped while waiting');
    this.name = 'ServerStopped';
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

export interface MessageWait extends MessageFilters {
  /** Besides the filters: whether a message is the one awaited (svc-mail/testing's `match`); it sees it in full. */
  match?(m: CaughtMessage): boolean | Promise<boolean>;
  /** Only mail received at or after this service time (ISO 8601): where the caller's "since" begins. */
  since: string;
  timeoutMs: number;
  /** The local clock the timeout runs on. */
  clock: { now(): number; sleep(ms: number, signal?: AbortSignal): Promise<void> };
  /** Called once nothing already caught is taken, just before the wait for new mail (a spinner, a log line). */
  onWaiting?(): void | Promise<void>;
}

/** Seconds a wait's request is held before it is made again (the server holds one up to MAX_MESSAGE_WAIT). */
const HOLD_SECONDS = 25;

/**
 * The one wait for caught mail of `svc inbox wait`, `svc mcp`'s `wait_for_message` and svc-mail/testing's
 * `inbox.waitFor`: the oldest caught message received at or after `since` that the filters and `match` take and that
 * no earlier wait returned, claimed, in full; undefined when the time runs out first. The server holds the request
 * (`POST /sandbox/messages/wait`) and answers as soon as such a message is caught, claimed for it. With `match`, each
 * message the filters take is shown unclaimed, oldest first, and the one `match` takes is claimed by its id. Throws
 * ServerStopped when the server stops meanwhile, and the 404 of a workspace no workspace is.
 */
export async function waitForMessage(client: Client, o: MessageWait): Promise<CaughtMessage | undefined> {
  const stop = new AbortController();
  let answered!: () => void;
  const firstAnswer = new Promise<void>((r) => {
    answered = r;
  });
  try {
    const arrival = nextTaken(client, o, stop.signal, answered);
    // The time runs out once the first look has its answer (held no longer than the time): a wait of 0 looks once.
    const expiry = o.clock
      .sleep(o.timeoutMs, stop.signal)
      .then(() => firstAnswer)
      .then(() => undefined);
    // Whichever loses is ended by the abort below; its rejection is expected.
    arrival.catch(() => {});
    expiry.catch(() => {});
    return await Promise.race([arrival, expiry]);
  } finally {
    stop.abort();
  }
}

/**
 * The message this wait takes, asking the server until one comes (`signal`: the wait is over); `answered` is called
 * once the first look has its answer.
 */
async function nextTaken(
  client: Client,
  o: MessageWait,
  signal: AbortSignal,
  answered: () => void,
): Promise<CaughtMessage> {
  const filters = { to: o.to, workspace: o.workspace, subject: o.subject, since: o.since, claim: !o.match };
  // A caller told when nothing already caught is taken looks once without waiting first.
  let waiting = !o.onWaiting;
  for (let after: string | undefined, first = true; ; first = false) {
    const wait = !waiting ? 0 : first ? Math.min(HOLD_SECONDS, o.timeoutMs / 1000) : HOLD_SECONDS;
    let message: CaughtMessage | null;
    try {
      const r = await client.sandbox('waitForMessage', {
        body: { ...filters, after, wait },
        signal,
        // A wait is no call to repeat: one the server ends as it stops is the wait's end.
        retries: 0,
        timeoutMs: (wait + 30) * 1000,
      });
      message = r.body.message;
    } catch (err) {
      if (err instanceof ApiError && err.status === 503) throw new ServerStopped();
      throw err;
    }
    if (first) answered();
    if (!message) {
      if (!waiting) {
        waiting = true;
        await o.onWaiting?.();
      }
      continue;
    }
    if (!o.match) return message;
    after = message.id;
    if (!(await o.match(message))) continue;
    const taken = await claim(client, message.id);
    if (taken) return taken;
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
