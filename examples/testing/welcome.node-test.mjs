// welcome.test.mjs under node:test (`node --test`): the runner's own hooks, node:assert for the checks.
import assert from 'node:assert/strict';
import { after as afterAll, before as beforeAll, test } from 'node:test';
import { startSandbox } from 'svc-mail/testing';

let sb;
beforeAll(async () => {
  sb = await startSandbox(); // in memory, ports 0, manual clock, seeded
});
afterAll(() => sb.close());

// The app under test would do this; here the test sends through the sandbox's own client.
async function signUp(email) {
  await sb.client.call('sendEmail', {
    body: {
      from: 'Shop <hello@example.test>',
      to: email,
      subject: 'Confirm your address',
      text: 'Your code is 482913. Or open https://shop.example/confirm?c=482913',
    },
  });
}

test('sign-up sends a code and a link, and tells a webhook it was delivered', async () => {
  const hook = await sb.webhooks.capture({ events: ['email.delivered'] });
  const arrival = sb.inbox.waitFor({ to: 'ada@example.org', timeout: 5_000 });
  await signUp('ada@example.org');
  const m = await arrival;
  assert.equal(m.subject, 'Confirm your address');
  assert.equal(m.code, '482913'); // the code a person would type
  assert.equal(m.link(), 'https://shop.example/confirm?c=482913'); // the link they would click, its real target
  const delivered = await hook.waitFor('email.delivered');
  assert.equal(delivered.data.to, 'ada@example.org');
});

test('a reminder goes out a day later, when the clock says so', async () => {
  const tomorrow = new Date(sb.clock.now().getTime() + 86_400_000).toISOString();
  await sb.client.call('sendEmail', {
    body: {
      from: 'hello@example.test',
      to: 'bo@example.org',
      subject: 'Still there?',
      text: 'Hi',
      scheduled_at: tomorrow,
    },
  });
  const arrival = sb.inbox.waitFor({ to: 'bo@example.org' });
  await sb.clock.advance('1d');
  assert.equal((await arrival).subject, 'Still there?');
});
