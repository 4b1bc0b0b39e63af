// The warm-up `svc serve` and svc-mail/testing start once the ready line is out (RunningServer.warmUp): what the first
// delivery would load on its way is loaded ahead of it, and nothing else happens: no message is sent, caught or listed.
import { afterAll, describe, expect, it, vi } from 'vitest';
import type { LogFields, Logger } from '../../src/lib/log.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

function keptLog() {
  const lines: { level: string; msg: string; fields: LogFields }[] = [];
  const keep =
    (level: string) =>
    (msg: string, fields: LogFields = {}) =>
      void lines.push({ level, msg, fields });
  const log: Logger = { debug: keep('debug'), info: keep('info'), warn: keep('warn'), error: keep('error') };
  return { log, lines };
}

describe('warmUp', () => {
  const started: TestServer[] = [];
  afterAll(async () => {
    for (const s of started) await s.close();
  });

  it('builds a message on the compose thread before any is sent, and leaves no trace in the inbox or the outbox', async () => {
    const kept = keptLog();
    const s = await startTestServer({ log: kept.log });
    started.push(s);
    s.warmUp();
    // The compose thread says which path nodemailer's seam takes when it builds its first message.
    await vi.waitFor(
      () =>
        expect(kept.lines.map((l) => l.msg)).toContainEqual(
          expect.stringMatching(/^library seam: nodemailer MIME takes its (fast|stock) path$/),
        ),
      {
        timeout: 20_000,
      },
    );
    expect((await s.admin('GET', '/sandbox/messages')).body.data).toEqual([]);
    expect((await s.admin('GET', '/sandbox/outbox')).body.data).toEqual([]);
    expect(kept.lines.filter((l) => l.level === 'warn' || l.level === 'error')).toEqual([]);

    const r = await s.call('POST', '/v1/emails', {
      token: s.seed!.api_key_test,
      body: { from: 'orders@example.test', to: 'ada@example.org', subject: 'First', text: 'Hello' },
    });
    expect(r.status, r.text).toBe(202);
    await s.settle();
    expect((await s.admin('GET', '/sandbox/messages')).body.data.map((m: any) => m.message_id)).toEqual([r.body.id]);
  });

  it('stops with the server: a close right after it resolves, with nothing left running', async () => {
    const s = await startTestServer();
    s.warmUp();
    await s.close();
  });
});
