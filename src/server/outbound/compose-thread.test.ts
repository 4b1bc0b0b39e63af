// The compose thread itself (the binary composes every message on it): the messages it returns, and what happens
// when it stops under a message.
import { afterEach, describe, expect, it } from 'vitest';
import { silentLogger, type LogFields, type Logger } from '../../lib/log.js';
import { BIG_MESSAGE_BYTES } from '../core/rules/big-message.js';
import { ComposeThreadDied, composeSigned, createComposer, type Composer, type ComposeRequest } from './compose.js';
import { stockForced } from '../seams/choose.js';

const request = (mail: ComposeRequest['mail']): ComposeRequest => ({
  mail: {
    from: 'Shop <orders@example.test>',
    to: 'someone@example.net',
    subject: 'Your order',
    messageId: '<msg_threadtest@example.test>',
    date: new Date('2026-11-23T10:00:00Z'),
    baseBoundary: 'fixedboundary',
    ...mail,
  },
  key: undefined,
  signTime: 0,
});

describe('compose thread', () => {
  const composers: Composer[] = [];
  afterEach(async () => {
    for (const c of composers.splice(0)) await c.close();
  });
  const composer = (opts: Partial<Parameters<typeof createComposer>[0]> = {}) => {
    const c = createComposer({ thread: true, log: silentLogger, ...opts });
    composers.push(c);
    return c;
  };

  it('returns every message whole, small ones included (their bytes live in a shared pool the thread cannot give away)', async () => {
    const c = composer();
    const reqs = [
      request({ text: 'Hi' }),
      request({ text: 'x'.repeat(100) }),
      request({ html: '<p>order</p>'.repeat(2000), text: 'order' }),
      request({ text: 'Receipt', attachments: [{ filename: 'r.pdf', content: Buffer.alloc(200_000, 7) }] }),
    ];
    // Sent at once, as the delivery worker does: each answer goes to its own request.
    const got = await Promise.all(reqs.map((r) => c.compose(r)));
    for (const [i, r] of reqs.entries()) expect(got[i]!.equals(await composeSigned(r)), `message ${i}`).toBe(true);
    expect(c.threads).toBe(1);
  });

  it('a thread that dies under a message fails that one with ComposeThreadDied, logs it, and the messages waiting behind it are built on a new thread', async () => {
    const logged: string[] = [];
    const log: Logger = {
      debug: () => {},
      info: () => {},
      warn: (m) => void logged.push(m),
      error: (m) => void logged.push(m),
    };
    // A heap far too small for 24 MB of header fields (but enough to start): the thread runs out of memory on them. (An
    // attachment's bytes would not do: they are written outside the heap.) The fields come in 96 pieces so the heap
    // reaches its limit a piece at a time and Node ends the thread; one 24 MB allocation past the limit would be more
    // than the room Node gives a thread there, and V8 would end the whole process.
    // The young generation as svc serve gives the thread (8 MB): with 4, a new thread's start on Node 26 once ran out of
    // it while V8 deserialized its heap, which ends the whole process.
    const c = composer({ log, resourceLimits: { maxOldGenerationSizeMb: 16, maxYoungGenerationSizeMb: 8 } });
    const fillers = Object.fromEntries(Array.from({ length: 96 }, (_, i) => [`X-Filler-${i}`, 'v'.repeat(256 * 1024)]));
    const big = c.compose(request({ text: 'big', headers: fillers }));
    const small = c.compose(request({ text: 'small, queued behind the big one' }));
    // Its attachment's memory went to the thread with it: it goes back to the queue too (its delivery reads it again).
    // 256 KiB: larger than Node's buffer pool (8 KiB on Node 20, 64 KiB on Node 24), so the memory is its own to hand over.
    const handedOver = c.compose({
      ...request({ text: 'x', attachments: [{ filename: 'a.bin' }] }),
      pieces: [[Buffer.alloc(256 * 1024, 1)]],
    });
    await expect(big).rejects.toBeInstanceOf(ComposeThreadDied);
    await expect(handedOver).rejects.toBeInstanceOf(ComposeThreadDied);
    expect((await small).toString()).toContain('small, queued behind the big one');
    expect(logged).toContain(
      'compose thread exited while building a message; its delivery will be tried again on a new thread',
    );
    expect(c.threads).toBe(2);
    expect((await c.compose(request({ text: 'and after' }))).toString()).toContain('and after');
    expect(c.threads).toBe(2);
  });

  it("says, through the thread that started it, which path the thread's nodemailer seam took: once, at debug level", async () => {
    const lines: [string, string, LogFields | undefined][] = [];
    const at = (level: string) => (msg: string, fields?: LogFields) => void lines.push([level, msg, fields]);
    const c = composer({ log: { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') } });
    await c.compose(request({ text: 'one' }));
    await c.compose(request({ text: 'two' }));
    const path = stockForced(process.env, ['nodemailer']) ? 'stock' : 'fast';
    expect(lines).toEqual([
      ['debug', `library seam: nodemailer MIME takes its ${path} path`, expect.objectContaining({ path })],
    ]);
  });

  it('builds attachments given in pieces (handed to the thread) into the message built from them whole', async () => {
    const c = composer();
    const bytes = Buffer.from(Array.from({ length: 3 * 1024 * 1024 + 5 }, (_, i) => (i * 7 + (i >> 11)) % 256));
    const attachment = { filename: 'export.bin', contentType: 'application/octet-stream' };
    // Pieces in memory of their own (handed over) and a small one (copied).
    const pieces = [
      [
        Buffer.from(bytes.subarray(0, 2_000_001)),
        Buffer.from(bytes.subarray(2_000_001, bytes.length - 100)),
        Buffer.from(bytes.subarray(-100)),
      ],
    ];
    const expected = await composeSigned(request({ text: 'Export', attachments: [{ ...attachment, content: bytes }] }));
    const got = await c.compose({ ...request({ text: 'Export', attachments: [attachment] }), pieces });
    expect(got.equals(expected)).toBe(true);
  });

  it('builds a long text given as its bytes (handed to the thread, not copied) into the message built from the string', async () => {
    const c = composer();
    const text = 'A line of the nightly export, café €12.50\n'.repeat(40_000);
    const bytes = Buffer.from(text);
    const expected = await composeSigned(request({ text }));
    const got = await c.compose(request({ text: bytes }));
    expect(got.equals(expected)).toBe(true);
    // Its memory went to the thread.
    expect(bytes.buffer.byteLength).toBe(0);
  });

  it('gives a big message to the thread alone: a thread that dies under it takes no other message with it', async () => {
    // Too small a heap for 26 MB of HTML, but room enough to start and build small messages with either path of the
    // nodemailer seam on a loaded machine: the thread dies of the big message alone.
    const c = composer({ resourceLimits: { maxOldGenerationSizeMb: 24, maxYoungGenerationSizeMb: 8 } });
    const html = `<p>${'Hello there, '.repeat(2_000_000)}</p>`;
    const before = c.compose(request({ text: 'asked for before it' }));
    const big = c.compose(request({ text: 'big', html }));
    const after = c.compose(request({ text: 'asked for after it' }));
    await expect(big).rejects.toBeInstanceOf(ComposeThreadDied);
    expect((await before).toString()).toContain('asked for before it');
    expect((await after).toString()).toContain('asked for after it');
    expect(c.threads).toBe(2);
  });

  it('ends a thread once it has built a big message and has nothing more to build; the next message starts a new one', async () => {
    const c = composer();
    const big = () => request({ text: Buffer.from('A line of the nightly export, café €12.50\n'.repeat(220_000)) });
    // A big message with another behind it: the thread carries on with that one, and then has built a small one.
    const [first, behind] = await Promise.all([c.compose(big()), c.compose(request({ text: 'behind it' }))]);
    expect(first.length).toBeGreaterThan(BIG_MESSAGE_BYTES);
    expect(behind.toString()).toContain('behind it');
    expect((await c.compose(request({ text: 'small' }))).toString()).toContain('small');
    expect(c.threads).toBe(1);
    // Alone, the thread that built it is ended, and the next message is built on a new one.
    expect((await c.compose(big())).length).toBeGreaterThan(BIG_MESSAGE_BYTES);
    expect((await c.compose(request({ text: 'after' }))).toString()).toContain('after');
    expect(c.threads).toBe(2);
  });

  it('an error building a message is that message’s own error, and the thread carries on', async () => {
    const c = composer();
    await expect(
      c.compose(request({ text: 'x', attachments: [{ filename: 'a', path: '/nonexistent/file' }] })),
    ).rejects.toThrow(/ENOENT|no such file/);
    expect((await c.compose(request({ text: 'fine' }))).toString()).toContain('fine');
    expect(c.threads).toBe(1);
  });

  it('builds a small message that comes alone on the calling thread when nothing else is being built; the rest on the thread', async () => {
    const c = composer();
    const one = request({ text: 'Your code is 482913' });
    expect((await c.compose(one, true)).equals(await composeSigned(one))).toBe(true);
    expect(c.threads).toBe(0);
    // Asked for at once: the first is built here, the others while it is go to the thread.
    const three = ['a', 'b', 'c'].map((text) => request({ text }));
    const got = await Promise.all(three.map((r) => c.compose(r, true)));
    for (const [i, r] of three.entries()) expect(got[i]!.equals(await composeSigned(r))).toBe(true);
    expect(c.threads).toBe(1);
    // Not alone (the caller has others on their way), or past 64 KiB of parts or of its own header fields: to the
    // thread, even when it is idle.
    for (const [alone, r] of [
      [false, request({ text: 'one of many' })],
      [true, request({ html: `<p>${'x'.repeat(70 * 1024)}</p>` })],
      [true, request({ text: 'x', headers: { 'X-Long': 'v'.repeat(70 * 1024) } })],
    ] as const) {
      const fresh = composer();
      expect((await fresh.compose(r, alone)).equals(await composeSigned(r))).toBe(true);
      expect(fresh.threads).toBe(1);
    }
  });
});
