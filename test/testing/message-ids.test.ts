// svc-mail/testing with the msg_… id a send answers: inbox.check takes it where it takes a caught message's eml_… id.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Sandbox, startSandbox } from '../../src/testing/index.js';

describe('a msg_ id in svc-mail/testing', () => {
  let sb: Sandbox;
  beforeAll(async () => {
    sb = await startSandbox();
  });
  afterAll(() => sb?.close());

  it('inbox.check(msg_…) answers the report of its caught copy', async () => {
    const waiting = sb.inbox.waitFor({ to: 'ada@example.org' });
    const sent = await sb.client.call('sendEmail', {
      body: { from: 'Shop <orders@example.test>', to: 'ada@example.org', subject: 'Welcome', html: '<p>Hello</p>' },
    });
    const id = (sent.body as { id: string }).id;
    const m = await waiting;
    expect(m.message_id).toBe(id);
    const report = await sb.inbox.check(id);
    expect(report.message_id).toBe(m.id);
    expect(await sb.inbox.check(m)).toEqual(report);
  });
});
