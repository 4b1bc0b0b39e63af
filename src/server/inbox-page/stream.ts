// GET /sandbox/stream: the inbox's live feed as server-sent events. Caught mail, status changes and webhook attempts
// are read through core's inbox when the change signal says the sink, the events or the webhooks changed (after their
// commit), once for every open stream; deletions, read marks and clock moves are what the inbox publishes as it makes
// them.
import type { Context } from 'hono';
import { INBOX_EVENT_NAMES, type InboxEvent } from '../../contract/inbox.js';
import type { Changes } from '../../lib/changes.js';
import { ServiceError } from '../core/errors.js';
import type { Inbox } from '../core/inbox.js';
import { STREAM_SCOPE, type SandboxAuth } from './auth.js';
import { hop } from '../../lib/hops.js';

export interface InboxStream {
  /** Sends an event to every open stream. */
  publish(e: InboxEvent): void;
  /**
   * The route: the admin token or an inbox session as the bearer, like every sandbox route, or the session's view
   * token of the stream (`?view=`: an EventSource sends no header), which it lasts no longer than.
   */
  handle(c: Context): Response;
  /** Ends every open stream (the server is shutting down) and refuses new ones. */
  close(): void;
  /** How many streams are open. */
  readonly open: number;
}

const KEEPALIVE_MS = 25_000;
/** A reader this far behind (a stalled tab) is dropped; its EventSource reconnects and reloads. */
const MAX_BACKLOG_BYTES = 8 * 1024 * 1024;
const BATCH = 500;

export function bearerOf(req: Request): string | null {
  const h = req.headers.get('authorization');
  if (!h) return null;
  return /^Bearer\s+(\S+)\s*$/i.exec(h)?.[1] ?? '';
}

type EventName = InboxEvent['event'];

/** `?events=`: the names asked for (null: every event), or the first name that is none. */
function eventNames(value: string | undefined): Set<EventName> | null | { unknown: string } {
  if (value === undefined) return null;
  const names = new Set<EventName>();
  for (const name of value.split(',').map((n) => n.trim())) {
    if (!(INBOX_EVENT_NAMES as readonly string[]).includes(name)) return { unknown: name };
    names.add(name as EventName);
  }
  return names;
}

export function inboxStream(deps: { inbox: Inbox; changes: Changes; auth: SandboxAuth }): InboxStream {
  const { inbox, changes } = deps;
  const encoder = new TextEncoder();
  /** Each open stream, with the events it asked for (null: all). */
  const clients = new Map<ReadableStreamDefaultController<Uint8Array>, Set<EventName> | null>();
  let closed = false;
  let lastSeq = 0;
  let lastEventSeq = 0;
  let lastAttemptId = 0;
  let stopWatching: (() => void) | null = null;
  const wanted = (name: EventName) => [...clients.values()].some((names) => !names || names.has(name));

  /** Sends to every open stream that asked for the event (a comment, `name` undefined, goes to all). */
  const send = (text: string, name?: EventName) => {
    let bytes: Uint8Array | undefined;
    for (const [c, names] of [...clients]) {
      if (name && names && !names.has(name)) continue;
      if ((c.desiredSize ?? 0) < -MAX_BACKLOG_BYTES) {
        drop(c);
        continue;
      }
      bytes ??= encoder.encode(text);
      c.enqueue(bytes);
    }
  };
  const publish = (e: InboxEvent) => {
    if (wanted(e.event)) send(`event: ${e.event}\ndata: ${JSON.stringify(e.data)}\n\n`, e.event);
  };
  // What the inbox publishes as it changes (deletions, read marks, clock moves) goes to every open stream.
  const unlisten = inbox.listen(publish);

  const onCaught = () => {
    for (;;) {
      const rows = inbox.caughtAfter(lastSeq, BATCH);
      for (const r of rows) {
        hop('inbox stream: message sent');
        publish({ event: 'message', data: r.summary });
      }
      lastSeq = rows.at(-1)?.seq ?? lastSeq;
      if (rows.length < BATCH) return;
    }
  };
  // Status changes and webhook attempts are read only while a stream asks for them (a wait for mail asks for neither).
  const onEvents = () => {
    if (!wanted('status')) return;
    for (;;) {
      const { through, changes: found, more } = inbox.statusChangesAfter(lastEventSeq, BATCH);
      for (const data of found) publish({ event: 'status', data });
      lastEventSeq = through;
      if (!more) return;
    }
  };

  // One message for the attempts of a turn (a busy receiver gets hundreds a second): the page reads what it shows again.
  const onWebhooks = () => {
    if (!wanted('webhooks')) return;
    const eventIds = new Set<string>();
    for (;;) {
      const rows = inbox.attemptedAfter(lastAttemptId, BATCH);
      for (const r of rows) eventIds.add(r.event_id);
      lastAttemptId = rows.at(-1)?.id ?? lastAttemptId;
      if (rows.length < BATCH) break;
    }
    publish({ event: 'webhooks', data: { event_ids: [...eventIds] } });
  };

  // One watcher for all streams, while any is open: each change is read once, whatever the number of tabs.
  const watch = () => {
    const at = inbox.positions();
    lastSeq = at.caught;
    lastEventSeq = at.event;
    lastAttemptId = at.attempt;
    const unsubscribe = [
      changes.subscribe('sink', onCaught),
      changes.subscribe('events', onEvents),
      changes.subscribe('webhooks', onWebhooks),
    ];
    const keepalive = setInterval(() => send(': keep-alive\n\n'), KEEPALIVE_MS);
    keepalive.unref();
    stopWatching = () => {
      for (const u of unsubscribe) u();
      clearInterval(keepalive);
      stopWatching = null;
    };
  };
  const drop = (c: ReadableStreamDefaultController<Uint8Array>) => {
    if (!clients.delete(c)) return;
    try {
      c.close();
    } catch {
      // Already closed by the reader going away.
    }
    if (clients.size === 0) stopWatching?.();
  };

  return {
    publish,
    get open() {
      return clients.size;
    },
    handle(c) {
      const bearer = bearerOf(c.req.raw);
      const viewed = bearer === null ? deps.auth.viewOf(c.req.query('view'), STREAM_SCOPE) : null;
      if (!deps.auth.admits(bearer) && !viewed) {
        throw new ServiceError(
          'missing_credentials',
          'Sandbox routes take the admin token printed at start: "Authorization: Bearer <admin_token>".',
        );
      }
      if (closed) throw new ServiceError('conflict', 'The server is shutting down.');
      const names = eventNames(c.req.query('events'));
      if (names && 'unknown' in names) {
        throw new ServiceError(
          'validation_failed',
          `events: "${names.unknown}" is no event of the stream; name some of ${INBOX_EVENT_NAMES.join(', ')}, comma-separated.`,
        );
      }
      let self: ReadableStreamDefaultController<Uint8Array>;
      // A stream opened with a view token ends with its session: reconnecting with it is then refused.
      const ends = viewed ? setTimeout(() => drop(self), Math.max(0, viewed.expires - Date.now())) : null;
      ends?.unref();
      const body = new ReadableStream<Uint8Array>(
        {
          start(controller) {
            self = controller;
            if (clients.size === 0) watch();
            else {
              // Read from now on, not from when no stream asked for them.
              const at = inbox.positions();
              if ((!names || names.has('status')) && !wanted('status')) lastEventSeq = at.event;
              if ((!names || names.has('webhooks')) && !wanted('webhooks')) lastAttemptId = at.attempt;
            }
            clients.set(controller, names);
            // Sent at once so the response starts (and EventSource fires `open`) without waiting for news.
            controller.enqueue(encoder.encode('retry: 2000\n: connected\n\n'));
          },
          cancel() {
            if (ends) clearTimeout(ends);
            drop(self);
          },
        },
        new ByteLengthQueuingStrategy({ highWaterMark: 64 * 1024 }),
      );
      c.req.raw.signal?.addEventListener(
        'abort',
        () => {
          if (ends) clearTimeout(ends);
          drop(self);
        },
        { once: true },
      );
      return new Response(body, {
        headers: {
          'Content-Type': 'text/event-stream; charset=utf-8',
          'Cache-Control': 'no-store',
          'X-Accel-Buffering': 'no',
          // The connection ends with the stream rather than idling in keep-alive (which would hold up a shutdown).
          Connection: 'close',
        },
      });
    },
    close() {
      closed = true;
      unlisten();
      for (const c of [...clients.keys()]) drop(c);
    },
  };
}
