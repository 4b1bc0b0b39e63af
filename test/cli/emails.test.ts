// emails send | batch | get | cancel against the real server with an API key; what was sent is read back from the
// sink (the caught message) and from the message's timeline.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BatchResult, Message, MessageAccepted } from '../../src/contract/emails.js';
import { emailsBatchRun } from '../../src/cli/commands/emails/batch.js';
import { emailsCancelRun } from '../../src/cli/commands/emails/cancel.js';
import { emailsGetRun } from '../../src/cli/commands/emails/get.js';
import { emailsSendRun, type EmailsSendOptions } from '../../src/cli/commands/emails/send.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { cli, tempDirs } from './helpers.js';

describe('svc emails', () => {
  let s: TestServer;
  let configDir: string;
  let files: string;
  const dirs = tempDirs();
  beforeAll(async () => {
    s = await startTestServer();
    configDir = dirs.make();
    files = dirs.make('svc-files-');
  });
  afterAll(async () => {
    await s.close();
    dirs.cleanup();
  });

  const withKey = (o: Partial<Parameters<typeof cli>[1]> = {}) =>
    cli(s, { configDir, ...o, env: { SVC_API_KEY: s.seed!.api_key_test, ...o.env } });
  const caughtFor = async (to: string) => {
    await s.settle();
    const list = await s.admin('GET', `/sandbox/messages?to=${encodeURIComponent(to)}`);
    expect(list.body.data, to).toHaveLength(1);
    return (await s.admin('GET', `/sandbox/messages/${list.body.data[0].id}`)).body;
  };

  it('sends with every kind of flag and prints the id and status; the sink caught exactly that', async () => {
    const pdf = join(files, 'receipt.pdf');
    writeFileSync(pdf, '%PDF-1.4 receipt');
    const textFile = join(files, 'body.txt');
    writeFileSync(textFile, 'Plain receipt\n');
    const to = 'full@example.org';
    const o: EmailsSendOptions = {
      from: 'Shop <orders@example.test>',
      to: [to],
      cc: ['copy@example.org'],
      replyTo: ['help@example.test'],
      subject: 'Your receipt',
      textFile,
      htmlFile: '-',
      attach: [pdf],
      tags: [{ name: 'order', value: '1042' }],
      headers: { 'X-Order': '1042' },
    };
    const c = await withKey({ stdin: '<p>Thanks for your order</p>' });
    expect(await c.run(emailsSendRun, o)).toBe(0);
    const [id, status] = c.stdout().trimEnd().split('\t');
    expect(id).toMatch(/^msg_\w{24}$/);
    expect(status).toBe('queued');

    const caught = await caughtFor(to);
    expect(caught).toMatchObject({
      subject: 'Your receipt',
      message_id: id,
      text: 'Plain receipt\n',
      cc: ['copy@example.org'],
    });
    expect(caught.html).toContain('<p>Thanks for your order</p>');
    expect(caught.attachments).toEqual([expect.objectContaining({ filename: 'receipt.pdf', size: 16 })]);
    const headers = Object.fromEntries(
      caught.headers.map((h: { name: string; value: string }) => [h.name.toLowerCase(), h.value]),
    );
    expect(headers['x-order']).toBe('1042');
    expect(headers['reply-to']).toContain('help@example.test');

    const get = await withKey({ globals: { json: true } });
    expect(await get.run(emailsGetRun, { id: id! })).toBe(0);
    const message = Message.parse(JSON.parse(get.stdout()));
    expect(message).toMatchObject({ id, status: 'delivered', tags: [{ name: 'order', value: '1042' }] });
  });

  it('prints the MessageAccepted body with --json; the same --idempotency-key sends once; another body under it is refused', async () => {
    const body = {
      from: 'orders@example.test',
      to: ['once@example.org'],
      subject: 'Once',
      text: 'hi',
      idempotencyKey: `order-${Date.now()}`,
    };
    const first = await withKey({ globals: { json: true } });
    expect(await first.run(emailsSendRun, body)).toBe(0);
    const accepted = MessageAccepted.parse(JSON.parse(first.stdout()));

    const again = await withKey();
    expect(await again.run(emailsSendRun, body)).toBe(0);
    expect(again.stdout()).toBe(`${accepted.id}\tqueued\n`);
    expect(again.stderr()).toContain('Already sent with this --idempotency-key');
    await caughtFor('once@example.org');

    const other = await withKey({ globals: { json: true } });
    expect(await other.run(emailsSendRun, { ...body, text: 'changed' }, 'svc emails send')).toBe(1);
    expect(JSON.parse(other.stdout()).error).toMatchObject({ status: 409, code: 'idempotency_conflict' });
    expect(other.stderr()).toMatch(
      /\[idempotency_conflict, req_\w+\]; hint: this Idempotency-Key was used with a different message/,
    );
  });

  it('needs an API key: a session is not enough, and no key at all is exit 4 with the ways to give one', async () => {
    const c = await cli(s, { configDir: dirs.make() });
    expect(
      await c.run(emailsSendRun, { from: 'orders@example.test', to: ['x@example.org'], text: 'x' }, 'svc emails send'),
    ).toBe(4);
    expect(c.stderr()).toMatch(
      /hint: pass --api-key, set SVC_API_KEY, or save a key with `svc keys create … --save`$/m,
    );
    const flag = await cli(s, { configDir: dirs.make(), globals: { apiKey: s.seed!.api_key_test } });
    expect(await flag.run(emailsSendRun, { from: 'orders@example.test', to: ['flag@example.org'], text: 'x' })).toBe(0);
  });

  it('says which file it cannot read', async () => {
    const c = await withKey();
    expect(
      await c.run(
        emailsSendRun,
        { from: 'orders@example.test', to: ['x@example.org'], text: 'x', attach: [join(files, 'nope.pdf')] },
        'svc emails send',
      ),
    ).toBe(2);
    expect(c.stderr()).toContain(`--attach: cannot read ${join(files, 'nope.pdf')} (ENOENT)`);
  });

  it('sends a batch and prints a result per email; one refused item makes the exit code 1', async () => {
    const good = join(files, 'good.json');
    writeFileSync(
      good,
      JSON.stringify([
        { from: 'orders@example.test', to: 'batch-1@example.org', subject: 'One', text: '1' },
        { from: 'orders@example.test', to: 'batch-2@example.org', subject: 'Two', text: '2' },
      ]),
    );
    const ok = await withKey({ globals: { json: true } });
    expect(await ok.run(emailsBatchRun, { file: good })).toBe(0);
    const result = BatchResult.parse(JSON.parse(ok.stdout()));
    expect(result.data.map((d) => d.status)).toEqual([202, 202]);

    const mixed = join(files, 'mixed.json');
    writeFileSync(
      mixed,
      JSON.stringify([
        { from: 'orders@example.test', to: 'batch-3@example.org', subject: 'Three', text: '3' },
        { from: 'orders@example.test', to: 'batch-4@example.org', subject: 'Four' },
      ]),
    );
    const c = await withKey({ tty: true, env: { NO_COLOR: '1' } });
    expect(await c.run(emailsBatchRun, { file: mixed }, 'svc emails batch')).toBe(1);
    expect(c.stdout()).toMatch(/^0 {2,}202 {2,}msg_\w+ {2,}queued$/m);
    expect(c.stdout()).toMatch(/^1 {2,}422 {2,}- {2,}validation_failed/m);
    expect(c.stderr()).toContain('error: svc emails batch: 1 of 2 emails were refused; the others were accepted');

    const fromStdin = await withKey({
      stdin: '[{"from":"orders@example.test","to":"batch-5@example.org","text":"5"}]',
    });
    expect(await fromStdin.run(emailsBatchRun, { file: '-' })).toBe(0);
    expect(fromStdin.stdout()).toMatch(/^0\t202\tmsg_\w+\tqueued\n$/);

    const notArray = await withKey({ stdin: '{"from":"x"}' });
    expect(await notArray.run(emailsBatchRun, { file: '-' }, 'svc emails batch')).toBe(2);
    expect(notArray.stderr()).toContain('must hold a JSON array of send requests');
  });

  it('shows a message and its timeline: a table on a terminal, event lines when piped', async () => {
    const send = await withKey();
    await send.run(emailsSendRun, {
      from: 'orders@example.test',
      to: ['timeline@example.org'],
      subject: 'Timeline',
      text: 'x',
    });
    const id = send.stdout().split('\t')[0]!;
    await s.settle();

    const tty = await withKey({ tty: true, env: { NO_COLOR: '1' } });
    expect(await tty.run(emailsGetRun, { id })).toBe(0);
    expect(tty.stdout()).toMatch(/^status +delivered$/m);
    expect(tty.stdout()).toMatch(/^email\.queued {2,}\d{4}-/m);
    expect(tty.stdout()).toMatch(/^email\.delivered {2,}\d{4}-/m);

    const piped = await withKey();
    expect(await piped.run(emailsGetRun, { id })).toBe(0);
    const lines = piped.stdout().trimEnd().split('\n');
    expect(lines).toContain('status\tdelivered');
    expect(lines.filter((l) => l.startsWith('event\t')).map((l) => l.split('\t')[2])).toEqual(
      expect.arrayContaining(['email.queued', 'email.sent', 'email.delivered']),
    );
  });

  it('cancels a scheduled message; a delivered one is refused with exit 1', async () => {
    const later = new Date(Date.now() + 3600_000).toISOString();
    const send = await withKey();
    await send.run(emailsSendRun, {
      from: 'orders@example.test',
      to: ['later@example.org'],
      text: 'x',
      scheduledAt: later,
    });
    const [id, status] = send.stdout().trimEnd().split('\t');
    expect(status).toBe('scheduled');
    const cancel = await withKey();
    expect(await cancel.run(emailsCancelRun, { id: id! })).toBe(0);
    expect(cancel.stdout()).toBe(`${id}\tcancelled\n`);

    const now = await withKey();
    await now.run(emailsSendRun, { from: 'orders@example.test', to: ['now@example.org'], text: 'x' });
    await s.settle();
    const late = await withKey();
    expect(await late.run(emailsCancelRun, { id: now.stdout().split('\t')[0]! }, 'svc emails cancel')).toBe(1);
    expect(late.stderr()).toMatch(/\[message_not_cancellable, req_\w+\]/);
  });
});
