// The real binary composes and signs on its worker thread: what arrives is the same message, attachments
// included, and its DKIM signature verifies.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt, killAll, serve, stop, type Served } from '../helpers/binary.js';

describe('svc serve composes on its worker thread', () => {
  let s: Served;
  let dir: string;
  beforeAll(async () => {
    ensureBuilt();
    dir = mkdtempSync(join(tmpdir(), 'svc-compose-'));
    s = await serve(['--data-dir', join(dir, 'data'), '--clock', 'manual']);
  }, 120_000);
  afterAll(async () => {
    if (s) await stop(s);
    killAll();
    rmSync(dir, { recursive: true, force: true });
  });

  const call = async (method: string, path: string, token: string, body?: unknown) => {
    const res = await fetch(s.origin + path, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
    return { status: res.status, body: (await res.json().catch(() => null)) as any };
  };

  it('catches every message sent right after start, the very first ones included', async () => {
    // Small messages: their bytes sit in Node's shared buffer pool, which the thread must copy out, not transfer.
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      const sent = await call('POST', '/v1/emails', s.ready.seed!.api_key_test!, {
        from: 'orders@example.test',
        to: `first-${i}@example.com`,
        subject: `Hello ${i}`,
        text: 'Hi',
      });
      expect(sent.status).toBe(202);
      ids.push(sent.body.id);
    }
    expect((await call('POST', '/sandbox/clock', s.ready.admin_token, { advance_seconds: 0 })).status).toBe(200);
    const caught = await call('GET', '/sandbox/messages?limit=100', s.ready.admin_token);
    expect(caught.body.data.map((m: { message_id: string }) => m.message_id).sort()).toEqual([...ids].sort());
    for (const id of ids) {
      const m = await call('GET', `/v1/emails/${id}`, s.ready.seed!.api_key_test!);
      expect(m.body.status, JSON.stringify(m.body.events)).toBe('delivered');
    }
  });

  it('delivers a message with an inline image and a PDF, DKIM pass, bytes intact', async () => {
    const png = Buffer.from('89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c489', 'hex');
    const pdf = Buffer.from('%PDF-1.4\n% a tiny test file\n');
    const sent = await call('POST', '/v1/emails', s.ready.seed!.api_key_test!, {
      from: 'Shop <orders@example.test>',
      to: 'thread@example.com',
      subject: 'Receipt ünïcode',
      html: '<p>Logo <img src="cid:logo@shop"></p>',
      text: 'Receipt',
      attachments: [
        { filename: 'logo.png', content: png.toString('base64'), content_id: 'logo@shop' },
        { filename: 'receipt.pdf', content: pdf.toString('base64') },
      ],
    });
    expect(sent.status).toBe(202);
    const moved = await call('POST', '/sandbox/clock', s.ready.admin_token, { advance_seconds: 0 });
    expect(moved.status).toBe(200);
    const list = await call('GET', '/sandbox/messages?to=thread@example.com', s.ready.admin_token);
    expect(list.body.data).toHaveLength(1);
    expect(list.body.data[0].message_id).toBe(sent.body.id);
    const m = await call('GET', `/sandbox/messages/${list.body.data[0].id}`, s.ready.admin_token);
    expect(m.body.dkim).toBe('pass');
    expect(m.body.subject).toBe('Receipt ünïcode');
    expect(m.body.attachments).toEqual([
      { filename: 'logo.png', content_type: 'image/png', size: png.length, content_id: 'logo@shop' },
      { filename: 'receipt.pdf', content_type: 'application/pdf', size: pdf.length, content_id: null },
    ]);
    const raw = await fetch(`${s.origin}/sandbox/messages/${list.body.data[0].id}/raw`, {
      headers: { authorization: `Bearer ${s.ready.admin_token}` },
    }).then((r) => r.text());
    expect(raw).toContain(pdf.toString('base64').slice(0, 20));
  });
});
