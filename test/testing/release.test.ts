// svc-mail/testing's inbox.release against a real SMTP relay on loopback the test starts: a message sent through the
// sandbox is released exactly as caught; a refusal rejects with the relay's Problem. (Relay rules, and what the relay
// does with test-key mail: test/integration/relay.test.ts.)
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiError } from '../../src/client/errors.js';
import { startSandbox, type Sandbox } from '../../src/testing/index.js';
import { startRelay, type TestRelay } from '../helpers/relay.js';

describe('sb.inbox.release', () => {
  let relay: TestRelay;
  let sb: Sandbox;
  beforeAll(async () => {
    relay = await startRelay();
    sb = await startSandbox({
      relay: { url: relay.url, allow: ['*@example.com'] },
    });
  });
  afterAll(async () => {
    await sb?.close();
    await relay?.close();
  });

  it('sends the caught message, byte for byte, to the addresses given', async () => {
    const sent = await sb.client.call('sendEmail', {
      body: { from: 'Shop <orders@example.test>', to: 'ada@example.org', subject: 'Release me', text: 'Hi' },
    });
    const m = await sb.inbox.waitFor({ to: 'ada@example.org' });
    const arrived = relay.next();
    const r = await sb.inbox.release((sent.body as { id: string }).id, ['qa@example.com']);
    expect(r).toMatchObject({ id: m.id, to: ['qa@example.com'] });
    const got = await arrived;
    const raw = await sb.client.sandbox('getRawMessage', { params: { id: m.id } });
    expect(Buffer.from(raw.bytes).equals(got.raw)).toBe(true);
    expect(got.raw.toString()).toMatch(/^DKIM-Signature: /);
  });

  it('rejects with the Problem of a refusal: outside the allow-list, or refused by the relay', async () => {
    const id = (await sb.inbox.list())[0]!.id;
    const outside = await sb.inbox.release(id, 'x@elsewhere.net').catch((e: unknown) => e);
    expect(outside).toBeInstanceOf(ApiError);
    expect(outside).toMatchObject({ code: 'relay_recipient_not_allowed', status: 403 });
    relay.answer = { code: 550, text: 'Mailbox unavailable' };
    try {
      const refused = await sb.inbox.release({ id }, 'qa@example.com').catch((e: unknown) => e);
      expect(refused).toMatchObject({ code: 'relay_refused', status: 502 });
      expect((refused as Error).message).toContain('550 Mailbox unavailable');
    } finally {
      relay.answer = 'accept';
    }
  });
});
