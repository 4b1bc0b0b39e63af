// Core's one entry of a send (emails.submit), which the API and SMTP submission both call: the ticket's rate refusal
// in each source's words, the Idempotency-Key's length, and an attachment handed over as bytes (as SMTP submission
// hands it) stored as they are, never encoded to base64 or decoded from it.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { memoryCore, type MemoryCore } from '../../../test/helpers/core.js';

let c: MemoryCore;
beforeEach(async () => {
  c = await memoryCore({ sendRate: 1 });
});
afterEach(() => {
  vi.restoreAllMocks();
  c.close();
});

/** Every byte value, then 3 MiB more: the bytes span several stored pieces. */
const BYTES = Buffer.concat([Buffer.from(Array.from({ length: 256 }, (_, i) => i)), Buffer.alloc(3 << 20, 0xa5)]);

const email = (content: string | Buffer) => ({
  from: 'orders@example.test',
  to: 'ada@example.org',
  text: 'Your receipt',
  attachments: [{ filename: 'receipt.bin', content }],
});

function submit(send: { email: unknown }, idempotencyKey?: string, source: 'http' | 'smtp' = 'smtp') {
  const ticket = c.core.emails.take(c.seed.workspaceId, source);
  return c.core.emails.submit({ ticket, key: c.seed.key, idempotencyKey, send });
}

/** The attachment's stored pieces, and how often base64 was encoded or decoded while it was sent. */
async function sentWith(content: string | Buffer): Promise<{ pieces: Buffer[]; base64: number }> {
  let base64 = 0;
  const from = Buffer.from;
  vi.spyOn(Buffer, 'from').mockImplementation(((value: unknown, encoding?: unknown) => {
    if (encoding === 'base64') base64++;
    return (from as (v: unknown, e?: unknown) => Buffer)(value, encoding);
  }) as typeof Buffer.from);
  const encode = Buffer.prototype.toString;
  vi.spyOn(Buffer.prototype, 'toString').mockImplementation(function (this: Buffer, ...args) {
    if (args[0] === 'base64') base64++;
    return encode.apply(this, args);
  });
  const sent = await submit({ email: email(content) });
  vi.restoreAllMocks();
  const [pieces = []] = c.core.delivery.attachmentChunks(sent.body.id).values();
  return { pieces, base64 };
}

describe('an attachment given as bytes', () => {
  it('is stored as the bytes it is, with no base64 encoded or decoded on the way', async () => {
    const { pieces, base64 } = await sentWith(BYTES);
    expect(Buffer.concat(pieces).equals(BYTES)).toBe(true);
    expect(base64).toBe(0);
  });

  it('is stored as the same bytes, in the same pieces, as given in base64 (which is decoded, once)', async () => {
    const asBytes = await sentWith(BYTES);
    c.clock.advance(10_000);
    const asText = await sentWith(BYTES.toString('base64'));
    expect(asText.pieces.map((p) => p.length)).toEqual(asBytes.pieces.map((p) => p.length));
    expect(Buffer.concat(asText.pieces).equals(Buffer.concat(asBytes.pieces))).toBe(true);
    // The count can fail: decoding base64 counts here, as any base64 on the bytes' way would.
    expect(asText.base64).toBeGreaterThan(0);
  });

  it('is, under an Idempotency-Key, the same request as the attachment in base64', async () => {
    const first = await submit({ email: email(BYTES) }, 'receipt-1');
    c.clock.advance(10_000);
    const again = await submit({ email: email(BYTES.toString('base64')) }, 'receipt-1');
    expect(again).toEqual({ ...first, replayed: true });
    c.clock.advance(10_000);
    await expect(submit({ email: email(Buffer.from('other')) }, 'receipt-1')).rejects.toMatchObject({
      code: 'idempotency_conflict',
    });
  });

  it('is checked against the schema as the rest of the message is (400 for a wrong type)', async () => {
    await expect(submit({ email: { ...email(BYTES), attachments: [{ content: BYTES }] } })).rejects.toMatchObject({
      code: 'invalid_request',
      extra: { errors: [expect.objectContaining({ path: 'attachments.0.filename', code: 'required' })] },
    });
  });
});

describe('the ticket and the Idempotency-Key', () => {
  it('refuses a send past the bucket (2 at once at 1 a second) in the words of its source', async () => {
    await submit({ email: email('') });
    await submit({ email: email('') });
    await expect(submit({ email: email('') }, undefined, 'http')).rejects.toMatchObject({
      code: 'rate_limited',
      message: 'This workspace may send 1 requests a second, 2 at once; retry in 1 s.',
      extra: { retryAfterSeconds: 1 },
    });
    await expect(submit({ email: email('') })).rejects.toMatchObject({
      code: 'rate_limited',
      message: 'This workspace may send 1 messages a second; retry in 1 s.',
    });
  });

  it('refuses an Idempotency-Key that is empty or over 255 characters', async () => {
    for (const key of ['', 'k'.repeat(256)]) {
      c.clock.advance(10_000);
      await expect(submit({ email: email('') }, key)).rejects.toMatchObject({
        code: 'invalid_request',
        message: 'The Idempotency-Key header must be 1–255 characters.',
      });
    }
  });
});
