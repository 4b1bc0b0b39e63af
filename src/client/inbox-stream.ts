// `GET /sandbox/stream` of a local server as a client reads it: server-sent events, each checked against the
// contract's schema for its name.
import type { z } from 'zod';
import {
  CaughtMessageSummary,
  ClockState,
  InboxDeleted,
  InboxRead,
  InboxStatusChange,
  InboxWebhooks,
  type InboxEvent,
} from '../contract/sandbox.js';
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
 * Server-sent events as the HTML standard reads them ("event stream interpretation"): lines end with CRLF, LF or CR;
 * `event:` names the event, `data:` lines are joined with newlines, a blank line sends it, `:` starts a comment.
 */
export async function* serverSentEvents(
  chunks: AsyncIterable<Uint8Array>,
): AsyncGenerator<{ event: string; data: string }> {
  const decoder = new TextDecoder();
  let buffer = '';
  let event = '';
  let data: string[] = [];
  for await (const chunk of chunks) {
    buffer += decoder.decode(chunk, { stream: true });
    for (;;) {
      const end = buffer.search(/[\r\n]/);
      // A CR last in the buffer may be the first half of a CRLF: wait for the next chunk.
      if (end < 0 || (buffer[end] === '\r' && end === buffer.length - 1)) break;
      const line = buffer.slice(0, end);
      buffer = buffer.slice(end + (buffer[end] === '\r' && buffer[end + 1] === '\n' ? 2 : 1));
      if (line === '') {
        if (data.length) yield { event: event || 'message', data: data.join('\n') };
        event = '';
        data = [];
        continue;
      }
      if (line.startsWith(':')) continue;
      const colon = line.indexOf(':');
      const field = colon < 0 ? line : line.slice(0, colon);
      const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
      if (field === 'event') event = value;
      else if (field === 'data') data.push(value);
    }
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
