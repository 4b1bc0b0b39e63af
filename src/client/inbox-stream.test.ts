import { describe, expect, it } from 'vitest';
import { inboxEvents, serverSentEvents } from './inbox-stream.js';

/** The text as a stream cut into the given pieces (to split lines, CRLFs and characters across chunks). */
async function* chunks(...parts: string[]): AsyncGenerator<Uint8Array> {
  const bytes = new TextEncoder().encode(parts.join(''));
  let at = 0;
  for (const p of parts) {
    const n = new TextEncoder().encode(p).length;
    yield bytes.subarray(at, at + n);
    at += n;
  }
}

async function all<T>(it: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const x of it) out.push(x);
  return out;
}

describe('serverSentEvents', () => {
  it('reads named events, joins data lines, skips comments and fields it does not know, whatever the chunking', async () => {
    const text =
      'retry: 2000\n: connected\n\nevent: clock\ndata: {"a":1}\n\n: keep-alive\n\ndata:first\ndata: second\nid: 7\n\n';
    const expected = [
      { event: 'clock', data: '{"a":1}' },
      { event: 'message', data: 'first\nsecond' },
    ];
    expect(await all(serverSentEvents(chunks(text)))).toEqual(expected);
    expect(await all(serverSentEvents(chunks(...text.split(''))))).toEqual(expected);
  });

  it('takes CRLF, LF and CR line ends, a CRLF split across chunks included, and UTF-8 split mid-character', async () => {
    const got = await all(
      serverSentEvents(chunks('event: a\r', '\ndata: é', 'ü\r\n\r', '\nevent: b\rdata: x\r\r', 'data: tail')),
    );
    expect(got).toEqual([
      { event: 'a', data: 'éü' },
      { event: 'b', data: 'x' },
    ]);
    const split = new TextEncoder().encode('data: €\n\n');
    async function* bytes() {
      yield split.subarray(0, 7);
      yield split.subarray(7);
    }
    expect(await all(serverSentEvents(bytes()))).toEqual([{ event: 'message', data: '€' }]);
  });
  it('reads fields by the standard: one space stripped, a bare field name, empty data, names that do not carry over', async () => {
    const text = [
      'data:  two spaces\n\n', // only the first space after the colon goes
      'data\n\n', // a field name alone: an empty data line
      'data:\ndata:\n\n', // two empty data lines: one newline
      'data: a: b: c\n\n', // a colon in the value is the value's
      'event: named\n\n', // no data: nothing is sent, and the name goes with it
      'data: after\n\n',
      'event:\ndata: default\n\n', // an empty name is the default one
      'Data: wrong case\ndata : space before the colon\nunknown: field\ndata: kept\n\n',
      'retry: 10\nid: 9\n: comment\n\n', // neither a retry, an id nor a comment sends an event
    ].join('');
    expect(await all(serverSentEvents(chunks(text)))).toEqual([
      { event: 'message', data: ' two spaces' },
      { event: 'message', data: '' },
      { event: 'message', data: '\n' },
      { event: 'message', data: 'a: b: c' },
      { event: 'message', data: 'after' },
      { event: 'message', data: 'default' },
      { event: 'message', data: 'kept' },
    ]);
  });

  it('drops an event the stream ends before its blank line, and a byte order mark at the start', async () => {
    const bom = new Uint8Array([0xef, 0xbb, 0xbf]);
    async function* body() {
      yield bom;
      yield new TextEncoder().encode('event: a\ndata: 1\n\nevent: b\ndata: cut off');
    }
    expect(await all(serverSentEvents(body()))).toEqual([{ event: 'a', data: '1' }]);
  });

  it('sends each event as soon as its blank line is in, with CRLF, CR or LF line ends, however the stream is cut', async () => {
    for (const eol of ['\r\n', '\r', '\n']) {
      const text = [': hello', '', 'event: clock', 'data: {"a":1}', 'data: {"b":2}', '', 'data: last', '', ''].join(
        eol,
      );
      const expected = [
        { event: 'clock', data: '{"a":1}\n{"b":2}' },
        { event: 'message', data: 'last' },
      ];
      for (let cut = 1; cut < text.length; cut++) {
        const [head, tail] = [text.slice(0, cut), text.slice(cut)];
        const why = `${JSON.stringify(eol)} cut at ${cut}`;
        // The stream gives the first piece, then waits: what that piece completes is sent before the rest comes.
        let asked!: () => void;
        const askedForMore = new Promise<'asked'>((resolve) => (asked = () => resolve('asked')));
        let release!: () => void;
        const released = new Promise<void>((resolve) => (release = resolve));
        async function* body() {
          yield new TextEncoder().encode(head);
          asked();
          await released;
          yield new TextEncoder().encode(tail);
        }
        const events = serverSentEvents(body());
        const got: unknown[] = [];
        let next = events.next();
        while ((await Promise.race([next, askedForMore])) !== 'asked') {
          got.push((await next).value);
          next = events.next();
        }
        // An event is complete once the first character of the line end after its blank line is in.
        const complete = ['{"b":2}', 'last'].filter((end) => head.includes(end + eol + eol[0])).length;
        expect(got, why).toEqual(expected.slice(0, complete));
        release();
        for (let r = await next; !r.done; r = await events.next()) got.push(r.value);
        expect(got, why).toEqual(expected);
      }
    }
  });
});

describe('inboxEvents', () => {
  const summary = {
    id: 'eml_1',
    message_id: null,
    from: 'a@example.org',
    to: ['b@example.org'],
    cc: [],
    subject: 'Hi',
    received_at: '2026-08-01T12:00:00.000Z',
    size: 10,
    status: null,
    workspace: null,
    preview: 'hi',
    has_attachments: false,
    read: false,
    claimed: false,
    tags: [],
  };

  it('checks each event against its schema, and skips events of names it does not know', async () => {
    const text = `event: message\ndata: ${JSON.stringify(summary)}\n\nevent: future\ndata: {}\n\nevent: deleted\ndata: {"all":true}\n\n`;
    expect(await all(inboxEvents(chunks(text), 'http://127.0.0.1:4010/v1'))).toEqual([
      { event: 'message', data: summary },
      { event: 'deleted', data: { all: true } },
    ]);
  });

  it('is a ContractError when an event breaks its schema, a ConnectionError when the connection breaks', async () => {
    const bad = inboxEvents(
      chunks(`event: message\ndata: ${JSON.stringify({ ...summary, to: 'b@example.org' })}\n\n`),
      'http://x/v1',
    );
    await expect(all(bad)).rejects.toMatchObject({
      name: 'ContractError',
      message: expect.stringContaining('message.to:'),
    });
    async function* broken() {
      yield new TextEncoder().encode(': connected\n\n');
      throw Object.assign(new Error('other side closed'), { code: 'UND_ERR_SOCKET' });
    }
    await expect(all(inboxEvents(broken(), 'http://x/v1'))).rejects.toMatchObject({
      name: 'ConnectionError',
      code: 'UND_ERR_SOCKET',
    });
  });
});
