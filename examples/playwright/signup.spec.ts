// Sign up, read the code from the mail and type it, then click the mail's link: each test with an address of its own
// (inbox.address), so the four workers never take each other's mail.
import { expect, test } from 'svc-mail/playwright';

for (const name of ['ada', 'grace', 'alan', 'edsger']) {
  test(`${name} signs up with the code from the mail, then its link`, async ({ page, inbox }) => {
    await page.goto('/');
    await page.getByLabel('Email').fill(inbox.address);
    await page.getByRole('button', { name: 'Sign up' }).click();

    const mail = await inbox.waitFor({ subject: 'Confirm your email' });
    expect(mail.to).toEqual([inbox.address]);
    expect(mail.code).toMatch(/^\d{6}$/);
    await page.getByLabel('Code').fill(mail.code!);
    await page.getByRole('button', { name: 'Verify' }).click();
    await expect(page.getByRole('heading')).toHaveText('Code accepted');

    // The mail as its reader sees it; its link opens a new page, as in a mail client.
    await inbox.open(page, mail);
    await expect(page.getByText(`Your code is ${mail.code}`)).toBeVisible();
    const [welcome] = await Promise.all([
      page.waitForEvent('popup'),
      page.getByRole('link', { name: 'Confirm your email' }).click(),
    ]);
    expect(welcome.url()).toBe(mail.link());
    await expect(welcome.getByRole('heading')).toHaveText(`Welcome, ${inbox.address}`);
  });
}

test('two sign-ups in one test: each address gets its own code', async ({ page, inbox }) => {
  const second = inbox.newAddress('second');
  for (const address of [inbox.address, second]) {
    await page.goto('/');
    await page.getByLabel('Email').fill(address);
    await page.getByRole('button', { name: 'Sign up' }).click();
    await expect(page.getByLabel('Code')).toBeVisible();
  }
  const first = await inbox.waitFor({ to: inbox.address });
  const other = await inbox.waitFor({ to: second });
  expect(other.to).toEqual([second]);
  expect(first.code).not.toBe(other.code); // (1 in a million they match)
  expect((await inbox.list()).map((m) => m.id).sort()).toEqual([first.id, other.id].sort());
});

test('a wrong code is refused, and the link alone does not confirm', async ({ page, inbox }) => {
  await page.goto('/');
  await page.getByLabel('Email').fill(inbox.address);
  await page.getByRole('button', { name: 'Sign up' }).click();
  const mail = await inbox.waitFor();
  await page.getByLabel('Code').fill(mail.code === '000000' ? '111111' : '000000');
  await page.getByRole('button', { name: 'Verify' }).click();
  await expect(page.getByRole('heading')).toHaveText('Wrong code');
  await page.goto(mail.link());
  await expect(page.getByRole('heading')).toHaveText('Unknown or unverified link');
});

test('the mail in dark mode, as a screenshot in the report', async ({ page, inbox }, testInfo) => {
  await page.goto('/');
  await page.getByLabel('Email').fill(inbox.address);
  await page.getByRole('button', { name: 'Sign up' }).click();
  const mail = await inbox.waitFor();
  await inbox.open(page, mail, { appearance: 'dark' });
  await expect(page.getByRole('link', { name: 'Confirm your email' })).toBeVisible();
  await testInfo.attach('the mail', { body: await page.screenshot(), contentType: 'image/png' });
});
