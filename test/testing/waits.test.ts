// inbox.waitFor as a test uses it right after the action that sends: the message is often caught before the call that
// sent it returns, and the wait still takes it — once. Under the manual clock and the real one.
import nodemailer from 'nodemailer';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../../src/testing/index.js';

describe.each(['manual', 'real'] as const)('inbox.waitFor after the send (%s clock)', (clock) => {
  let sb: Sandbox;
  beforeAll(async () => {
    sb = await startSandbox({ clock });
  });
  afterAll(() => sb?.close());

  const api = (to: string, text: string) =>
    sb.client.call('sendEmail', { body: { from: 'Shop <orders@example.test>', to, subject: 'Your code', text } });
  const smtp = async (to: string, text: string) => {
    const t = nodemailer.createTransport({ host: sb.smtp.host, port: sb.smtp.port, secure: false, ignoreTLS: true });
    try {
      await t.sendMail({ from: 'app@example.net', to, subject: 'Sign in', text });
    } finally {
      t.close();
    }
  };

  it('takes the message an app sent over SMTP, caught before sendMail resolved', async () => {
    await smtp('smtp@example.org', 'Your code is 314159');
    // The sink answered 250 once the message was stored: it is in the inbox before the wait begins.
    expect((await sb.inbox.list()).map((m) => m.to)).toContainEqual(['smtp@example.org']);
    const m = await sb.inbox.waitFor({ to: 'smtp@example.org', timeout: 5_000 });
    expect(m.codes).toEqual(['314159']);
    expect(m.claimed).toBe(true);
  });

  it('takes the message of an API send made before the wait', async () => {
    const sent = await api('api@example.org', 'Your code is 271828');
    const m = await sb.inbox.waitFor({ to: 'api@example.org', timeout: 5_000 });
    expect(m.message_id).toBe((sent.body as { id: string }).id);
    expect(m.codes).toEqual(['271828']);
  });

  it('send, wait, send, wait to one address returns the two messages in order', async () => {
    await smtp('twice@example.org', 'First code 111111');
    const first = await sb.inbox.waitFor({ to: 'twice@example.org' });
    await api('twice@example.org', 'Second code 222222');
    const second = await sb.inbox.waitFor({ to: 'twice@example.org' });
    expect([first.codes, second.codes]).toEqual([['111111'], ['222222']]);
    // Both were sent before a third wait: it takes neither again.
    await expect(sb.inbox.waitFor({ to: 'twice@example.org', timeout: 100 })).rejects.toThrow(
      /no message to twice@example\.org was caught within 100 ms .*\n.*to twice@example\.org {2}"Your code" {2}\(an earlier wait returned it\)/,
    );
  });

  it('with a match function, passes over a message deleted before it was read, and takes the next that matches', async () => {
    await smtp('gone@example.org', 'Code one: 200001');
    await smtp('gone@example.org', 'Code two: 200002');
    await smtp('gone@example.org', 'Code three: 200003');
    const [third, second] = await sb.inbox.list();
    const seen: string[] = [];
    const m = await sb.inbox.waitFor({
      to: 'gone@example.org',
      timeout: 5_000,
      match(msg) {
        seen.push(msg.codes[0]!);
        // The first is not the one: while it is looked at, the second goes (as a clear() in another test would do).
        if (msg.codes[0] === '200001') void sb.client.sandbox('deleteMessage', { params: { id: second!.id } });
        return msg.codes[0] !== '200001';
      },
    });
    // The third, whether the second went before its read (a 404, passed over) or between its read and its claim.
    expect(m.id).toBe(third!.id);
    expect(m.claimed).toBe(true);
    expect(seen[0]).toBe('200001');
  });

  it('with two sent before any wait, returns the oldest first, then the next', async () => {
    await smtp('queue@example.org', 'Code one: 100001');
    await smtp('queue@example.org', 'Code two: 100002');
    await smtp('queue@example.org', 'Code three: 100003');
    const got = [];
    for (let i = 0; i < 3; i++) got.push((await sb.inbox.waitFor({ to: 'queue@example.org' })).codes[0]);
    expect(got).toEqual(['100001', '100002', '100003']);
  });

  it('two waits at once for one address take different messages', async () => {
    const a = sb.inbox.waitFor({ to: 'race@example.org' });
    const b = sb.inbox.waitFor({ to: 'race@example.org' });
    await smtp('race@example.org', 'Code A: 900001');
    await smtp('race@example.org', 'Code B: 900002');
    const codes = [(await a).codes[0], (await b).codes[0]];
    expect(codes.sort()).toEqual(['900001', '900002']);
  });
});

describe('inbox.waitFor and clear()', () => {
  let sb: Sandbox;
  beforeAll(async () => {
    sb = await startSandbox();
  });
  afterAll(() => sb?.close());

  it('counts from the last clear(): mail caught before it is gone, mail after it is taken', async () => {
    const t = nodemailer.createTransport({ host: sb.smtp.host, port: sb.smtp.port, secure: false, ignoreTLS: true });
    try {
      await t.sendMail({ from: 'a@example.net', to: 'clear@example.org', subject: 'old', text: 'Old 123400' });
      await sb.inbox.clear();
      await t.sendMail({ from: 'a@example.net', to: 'clear@example.org', subject: 'new', text: 'New 123401' });
    } finally {
      t.close();
    }
    expect((await sb.inbox.waitFor({ to: 'clear@example.org' })).subject).toBe('new');
  });

  it('refuses a since that is no time', async () => {
    await expect(sb.inbox.waitFor({ since: 'yesterday' })).rejects.toThrow(
      /inbox\.waitFor: since takes a Date or an ISO 8601 time \(got "yesterday"\)/,
    );
  });
});
