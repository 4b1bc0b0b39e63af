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
