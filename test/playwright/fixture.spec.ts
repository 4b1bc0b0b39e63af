// What test/e2e/playwright-fixture.test.ts checks in the report of this run: every test passes but the one that fails
// on purpose, whose caught mail is attached.
import { expect, test } from '../../src/testing/playwright.js';

const FROM = 'Shop <hello@example.test>';

test('the address is the test’s own: plus-addressed, per retry; waitFor takes only its mail', async ({
  inbox,
  sandbox,
}, testInfo) => {
  expect(inbox.address).toMatch(new RegExp(`^test\\+[0-9a-f]{10}-${testInfo.retry}@example\\.org$`));
  expect(sandbox.local).not.toBeNull();
  const [local] = inbox.address.split('+') as [string];
  const send = (to: string, subject: string) =>
    sandbox.client.call('sendEmail', { body: { from: FROM, to, subject, text: `Your code is 482913 (${subject})` } });
  // Mail to the address without its tag, to another tag and to a longer one first: none is this test's.
  await send(`${local}@example.org`, 'untagged');
  await send(inbox.address.replace('+', '+x'), 'another tag');
  await send(inbox.address.replace('@', '0@'), 'longer tag');
  await send(inbox.address.toUpperCase(), 'ours');
  const m = await inbox.waitFor();
  expect(m.subject).toBe('ours');
  expect(m.code).toBe('482913');
  expect((await inbox.list()).map((s) => s.subject)).toEqual(['ours']);
  // The server's filter is the same exact match, plus sign and all.
  const listed = await sandbox.client.sandbox('listMessages', { query: { to: inbox.address } });
  expect(listed.body.data.map((s) => s.subject)).toEqual(['ours']);
  await expect(inbox.waitFor({ timeout: 300 })).rejects.toThrow(
    /no message to test\+[0-9a-f]+-\d@example\.org was caught within 300 ms\. Caught for this test: "ours" .*earlier wait returned it/,
  );
});

test('newAddress: waitFor watches every address of the test, a Bcc too', async ({ inbox, sandbox }) => {
  const second = inbox.newAddress('second');
  expect(second).toBe(inbox.address.replace('@', '-second@'));
  expect(inbox.newAddress()).toBe(inbox.address.replace('@', '-2@'));
  await sandbox.client.call('sendEmail', {
    body: { from: FROM, to: 'someone@example.org', bcc: second, subject: 'bcc', text: 'hello' },
  });
  const m = await inbox.waitFor();
  expect(m.subject).toBe('bcc');
  expect(m.to).toEqual(['someone@example.org']);
});

test('clear deletes the test’s messages and no other', async ({ inbox, sandbox }) => {
  const other = `bystander+${Date.now()}@example.org`;
  for (const to of [inbox.address, other])
    await sandbox.client.call('sendEmail', { body: { from: FROM, to, subject: 'hi', text: 'hello' } });
  await inbox.waitFor();
  const theirs = async () => (await sandbox.client.sandbox('listMessages', { query: { to: other } })).body.data;
  await expect.poll(async () => (await theirs()).length).toBe(1);
  await inbox.clear();
  expect(await inbox.list()).toEqual([]);
  expect(await theirs()).toHaveLength(1);
});

test('open shows the message’s HTML as its reader sees it: no script runs', async ({ page, inbox, sandbox }) => {
  await sandbox.client.call('sendEmail', {
    body: {
      from: FROM,
      to: inbox.address,
      subject: 'Welcome',
      html: '<h1>Welcome aboard</h1><script>document.title = "script ran"</script><a href="https://shop.example/start">Start</a>',
    },
  });
  const m = await inbox.waitFor();
  await inbox.open(page, m);
  await expect(page.getByRole('heading')).toHaveText('Welcome aboard');
  await expect(page.getByRole('link', { name: 'Start' })).toBeVisible();
  expect(await page.title()).not.toBe('script ran');
  expect(m.link()).toBe('https://shop.example/start'); // the href itself is the sandbox's click tracking
});

test('fails on purpose: the caught mail goes into the report', async ({ inbox, sandbox }) => {
  await sandbox.client.call('sendEmail', {
    body: {
      from: FROM,
      to: inbox.address,
      subject: 'Confirm your email',
      html: '<p>Your code is <b>731904</b>.</p><p><a href="https://shop.example/confirm?t=abc">Confirm your email</a></p>',
    },
  });
  await inbox.waitFor();
  expect('the page', 'fails on purpose').toBe('another page');
});
