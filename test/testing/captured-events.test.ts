// svc-mail/testing's captured webhook events carry `data` typed by their `type` (the contract's event payloads): a test reads
// `e.data.bounce.class` without a cast, and what arrives has the fields its type names.
import { afterAll, beforeAll, describe, expect, expectTypeOf, it } from 'vitest';
import { startSandbox, type CapturedEvent, type Sandbox } from '../../src/testing/index.js';

describe('captured events, typed by their type', () => {
  let sb: Sandbox;
  beforeAll(async () => {
    sb = await startSandbox();
  });
  afterAll(() => sb?.close());

  it('narrows data by the type waited for, and by a check of e.type', async () => {
    const hook = await sb.webhooks.capture();
    const sent = await sb.client.call('sendEmail', {
      body: { from: 'Shop <orders@example.test>', to: 'bounce@simulator.test', subject: 'Typed', text: 'hi' },
    });
    const id = sent.body.id;

    const bounced = await hook.waitFor('email.bounced', (e) => e.data.message_id === id);
    expectTypeOf(bounced.data.bounce.class).toEqualTypeOf<'hard' | 'soft' | 'block' | 'technical'>();
    expectTypeOf(bounced.data.to).toEqualTypeOf<string>();
    expect(bounced.data).toEqual({
      message_id: id,
      from: 'Shop <orders@example.test>',
      subject: 'Typed',
      tags: [],
      to: 'bounce@simulator.test',
      bounce: { class: 'hard', subtype: 'general', smtp_code: '550' },
    });

    const queued = await hook.waitFor('email.queued', (e) => e.data.message_id === id);
    expectTypeOf(queued.data.to).toEqualTypeOf<string[]>();
    expect(queued.data.to).toEqual(['bounce@simulator.test']);

    // Every event received, told apart by `type` as a union is.
    const described = hook.events().map((e: CapturedEvent) => {
      switch (e.type) {
        case 'email.bounced':
          return `${e.type} ${e.data.to} ${e.data.bounce.smtp_code}`;
        case 'email.queued':
        case 'email.sent':
          return `${e.type} ${e.data.to.join(',')}`;
        default:
          return e.type;
      }
    });
    expect(described).toEqual(
      expect.arrayContaining(['email.queued bounce@simulator.test', 'email.bounced bounce@simulator.test 550']),
    );
    await hook.close();
  });
});
