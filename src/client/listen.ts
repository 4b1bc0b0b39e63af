// The listen engine: the workspace's events as an AsyncIterable, read from `GET /events` with its long poll, resumed
// after the last event seen through restarts of the service and network errors, so none is lost or repeated.
import type { Event } from '../contract/events.js';
import { MAX_EVENTS_WAIT } from '../contract/events.js';
import { backoffDelay, RECONNECT_BACKOFF } from './backoff.js';
import { ApiError, ConnectionError } from './errors.js';
import type { Client } from './index.js';

/** Where the stream starts: after the newest existing event (`now`), after a given event, or at a time. */
export type ListenFrom = { now: true } | { after: string } | { since: string };

export type ListenStatus =
  /** Caught up: every later event will be read (`after`: the last event already there, if any). */
  | { kind: 'ready'; after: string | undefined }
  /** The service refused `wait`: listing again every `intervalMs` instead. */
  | { kind: 'polling'; intervalMs: number }
  /** The service could not be reached or failed (5xx, 429): trying again, from the last event seen. */
  | { kind: 'disconnected'; error: Error; retryInMs: number }
  | { kind: 'reconnected' };

export interface Listened {
  event: Event;
  /** The event as JSON text, exactly as listed (every field, also those this client does not know). */
  body: string;
}

export interface ListenOptions {
  /** Default: `now`. */
  from?: ListenFrom;
  /** Only these event types (the service filters). */
  types?: readonly string[];
  /** Stops the stream: the pending request is aborted and the iteration ends. */
  signal?: AbortSignal;
  /** Waits between polls and before reconnecting (the CLI's clock, so tests need not wait). */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
  onStatus?(status: ListenStatus): void;
  /** Between listings when the service offers no long poll (default 2 s). */
  pollIntervalMs?: number;
}

const PAGE = 100;
/** A held request answers within `wait` seconds; this leaves room for a slow network on top. */
const LONG_POLL_TIMEOUT_MS = (MAX_EVENTS_WAIT + 10) * 1000;

/**
 * The events of the credential's workspace, oldest first, as they happen. Each request asks for the events after the
 * last one seen, so a reconnection resumes exactly there. A 401 or 403, or any other refusal, ends the iteration with
 * the ApiError; connection errors, 5xx and 429 are retried for as long as it runs.
 */
export async function* listenEvents(client: Client, o: ListenOptions): AsyncGenerator<Listened> {
  const from = o.from ?? { now: true };
  let after = 'after' in from ? from.after : undefined;
  let since = 'since' in from ? Date.parse(from.since) : undefined;
  // From "now": list to the end first, only to learn the id of the newest event.
  let catchingUp = 'now' in from;
  let longPoll = true;
  let ready = false;
  let failures = 0;
  const pollIntervalMs = o.pollIntervalMs ?? 2_000;
  const pause = async (ms: number) => {
    try {
      await o.sleep(ms, o.signal);
      return !o.signal?.aborted;
    } catch {
      return false;
    }
  };

  while (!o.signal?.aborted) {
    const wait = longPoll && ready ? MAX_EVENTS_WAIT : undefined;
    let page;
    try {
      page = await client.call('listEvents', {
        query: { after, type: o.types, limit: PAGE, wait },
        // A long poll holds its connection for up to `wait` seconds anyway, so it gets one of its own, closed after
        // the answer: a kept-alive connection polled again at once would keep a server that is shutting down (its
        // held polls answered at once) from ever finishing.
        headers: wait === undefined ? undefined : { connection: 'close' },
        timeoutMs: LONG_POLL_TIMEOUT_MS,
        signal: o.signal,
      });
    } catch (err) {
      if (o.signal?.aborted) return;
      if (wait !== undefined && waitRefused(err)) {
        longPoll = false;
        o.onStatus?.({ kind: 'polling', intervalMs: pollIntervalMs });
        continue;
      }
      if (!transient(err)) throw err;
      const retryInMs = backoffDelay(RECONNECT_BACKOFF, failures++);
      if (failures === 1) o.onStatus?.({ kind: 'disconnected', error: err as Error, retryInMs });
      if (!(await pause(retryInMs))) return;
      continue;
    }
    if (failures > 0) {
      failures = 0;
      o.onStatus?.({ kind: 'reconnected' });
    }
    // The items as received, beside their parsed form: the parse drops fields this client does not know.
    const raw = (page.raw as { data: unknown[] }).data;
    for (const [i, event] of page.body.data.entries()) {
      after = event.id;
      if (catchingUp) continue;
      if (since !== undefined) {
        if (Date.parse(event.created_at) < since) continue;
        since = undefined;
      }
      yield { event, body: JSON.stringify(raw[i]) };
      if (o.signal?.aborted) return;
    }
    if (page.body.has_more) continue;
    catchingUp = false;
    if (!ready) {
      ready = true;
      o.onStatus?.({ kind: 'ready', after });
      continue;
    }
    if (!longPoll && !(await pause(pollIntervalMs))) return;
  }
}

/** The service answered that it does not take `wait` (an older or other implementation): 400 naming that parameter. */
function waitRefused(err: unknown): boolean {
  return err instanceof ApiError && err.status === 400 && (err.problem.errors ?? []).some((e) => e.path === 'wait');
}

/** Worth trying again later: the service was unreachable, failing, or asked to slow down. */
function transient(err: unknown): boolean {
  if (err instanceof ConnectionError) return true;
  return err instanceof ApiError && (err.status >= 500 || err.status === 429);
}
