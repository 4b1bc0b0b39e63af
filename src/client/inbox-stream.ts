// `GET /sandbox/stream` of a local server as a client reads it: server-sent events, each checked against the
// contract's schema for its name.
import type { z } from 'zod';
import {
  CaughtMessageSummary,
  InboxDeleted,
  InboxRead,
  InboxStatusChange,
  InboxWebhooks,
  type InboxEvent,
} from '../contract/inbox.js';
import { ClockState } from '../contract/clock.js';
import { ConnectionError, ContractError } from './errors.js';

const SCHEMAS = {
  message: CaughtMessageSummary,
  status: InboxStatusChange,
  deleted: InboxDeleted,
  read: InboxRead,
  clock: ClockState,
  webhooks: InboxWebhooks,
} satisfies Record<InboxEvent['event'], z.ZodType>;

/**
 * Server-sent events as the HTML standard reads them ("event stream interpretation", eventsource-parser): lines end
 * with CRLF, LF or CR; `event:` names the event, `data:` lines are joined with newlines, a blank line sends it, `:`
 * starts a comment; `id:` and `retry:` are read and left unused (the stream is not resumed by id).
 */
export async function* serverSentEvents(
  chunks: AsyncIterable<Uint8Array>,
): AsyncGenerator<{ event: string; data: string }> {
  // Loaded when a stream is read: the client's other calls never need it.
  const { createParser } = await import('eventsource-parser');
  const decoder = new TextDecoder();
  let ready: { event: string; data: string }[] = [];
  const parser = createParser({ onEvent: (e) => ready.push({ event: e.event ?? 'message', data: e.data }) });
  // A CR that ends a chunk ends a line, but may be half a CRLF. The parser would hold it until a later chunk brought
  // another line end, keeping an event whose blank line it ends from being sent: it is given as a CRLF at once, and
  // an LF that then starts the next chunk, the other half, is dropped.
  let afterCr = false;
  for await (const chunk of chunks) {
    let text = decoder.decode(chunk, { stream: true });
    if (text === '') continue;
    if (afterCr && text.startsWith('\n')) text = text.slice(1);
    afterCr = text.endsWith('\r');
    parser.feed(afterCr ? `${text}\n` : text);
    if (ready.length === 0) continue;
    const events = ready;
    ready = [];
    yield* events;
  }
}

/**
 * The inbox's events from the stream's body. An event of a name this client does not know is skipped (a newer
 * server may send more); one whose data breaks its schema is a ContractError. Ends when the server ends the stream.
 */
export async function* inboxEvents(
  body: AsyncIterable<Uint8Array>,
  baseUrl: string,
  signal?: AbortSignal,
): AsyncGenerator<InboxEvent> {
  try {
    for await (const e of serverSentEvents(body)) {
      if (!(e.event in SCHEMAS)) continue;
      const schema = SCHEMAS[e.event as InboxEvent['event']];
      let json: unknown;
      try {
        json = JSON.parse(e.data);
      } catch {
        throw new ContractError('inboxStream', 200, `${e.event}: not JSON`, baseUrl);
      }
      const checked = schema.safeParse(json);
      if (!checked.success) {
        const issue = checked.error.issues[0];
        throw new ContractError('inboxStream', 200, `${e.event}.${issue?.path.join('.')}: ${issue?.message}`, baseUrl);
      }
      yield { event: e.event, data: checked.data } as InboxEvent;
    }
  } catch (err) {
    if (signal?.aborted) throw signal.reason ?? err;
    if (err instanceof ContractError) throw err;
    // The connection broke or went quiet beyond the keep-alive (the server died, the network went away).
    throw new ConnectionError(baseUrl, err);
  }
}
