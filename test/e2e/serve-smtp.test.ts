// The SMTP sink's limits as `svc serve` takes them from its command line (the real binary), and the service's own
// deliveries, which come in outside the connection limit.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt, killAll, serve, stop } from '../helpers/binary.js';
import { smtpTalk } from '../helpers/smtp.js';

describe('svc serve --max-message-size --smtp-max-connections', () => {
  beforeAll(() => ensureBuilt(), 120_000);
  afterAll(() => killAll());

  it('the sink advertises the size it was given and refuses a connection beyond the count', async () => {
    const s = await serve(['--memory', '--no-seed', '--max-message-size', '1KB', '--smtp-max-connections', '1']);
    try {
      const port = Number(new URL(s.ready.smtp).port);
      const first = await smtpTalk(port);
      expect(await first.reply()).toMatch(/^220 /);
      first.write('EHLO client.example.test\r\n');
      expect(await first.reply()).toMatch(/^250[- ]SIZE 1000\r$/m);

      const second = await smtpTalk(port);
      expect(await second.reply()).toMatch(/^421 /);
      await second.closed;
      first.destroy();
    } finally {
      await stop(s);
    }
  });

  it("delivers the service's own mail into the sink while an outside client holds its one connection", async () => {
    const s = await serve(['--memory', '--clock', 'manual', '--smtp-max-connections', '1']);
    try {
      const port = Number(new URL(s.ready.smtp).port);
      const holder = await smtpTalk(port);
      expect(await holder.reply()).toMatch(/^220 /);
      const call = (method: string, path: string, token: string, body?: unknown) =>
        fetch(s.origin + path, {
          method,
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
          body: body === undefined ? undefined : JSON.stringify(body),
        }).then(async (r) => ({ status: r.status, body: (await r.json()) as any }));
      const key = s.ready.seed!.api_key_test!;
      const sent = await call('POST', '/v1/emails', key, {
        from: 'orders@example.test',
        to: 'ada@example.org',
        subject: 'Past the held connection',
        text: 'Hello',
      });
      expect(sent.status).toBe(202);
      // Runs the due work (the delivery) before it answers.
      expect((await call('POST', '/sandbox/clock', s.ready.admin_token, { advance_seconds: 0 })).status).toBe(200);
      expect((await call('GET', `/v1/emails/${sent.body.id}`, key)).body.status).toBe('delivered');
      const caught = await call('GET', '/sandbox/messages', s.ready.admin_token);
      expect(caught.body.data.map((m: { message_id: string }) => m.message_id)).toEqual([sent.body.id]);
      holder.destroy();
    } finally {
      await stop(s);
    }
  });
});
