// The inbox page's Release dialog in a real browser (Debian's Chromium through playwright-core) against the real
// server and a real SMTP relay on loopback: recipients prefilled with the message's own, the allow-list shown, a
// recipient outside it refused in the dialog, a release sent and joining the timeline; in light and dark, readable
// in both. Screenshots are written to test-artifacts/inbox/.
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRelay, type TestRelay } from '../helpers/relay.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { launch, lowContrast, row, shot, signIn } from './browser.js';

describe('releasing a message from the inbox page', { timeout: 60_000 }, () => {
  let s: TestServer;
  let plain: TestServer;
  let relay: TestRelay;
  let browser: Browser;

  beforeAll(async () => {
    relay = await startRelay();
    [s, plain, browser] = await Promise.all([
      startTestServer({ relayUrl: relay.url, relayAllow: ['*@example.com', 'boss@example.org'] }),
      startTestServer(),
      launch(),
    ]);
  });
  afterAll(async () => {
    await browser?.close();
    await s?.close();
    await plain?.close();
    await relay?.close();
  });

  const send = async (server: TestServer, subject: string, to: string[]) => {
    const r = await server.call('POST', '/v1/emails', {
      token: server.seed!.api_key_test,
      body: { from: 'Shop <orders@example.test>', to, subject, text: 'Thanks for your order.' },
    });
    expect(r.status, r.text).toBe(202);
    await server.settle();
    return r.body.id as string;
  };
  const open = async (page: Page, subject: string) => {
    await row(page, subject).click();
    await page.locator('#view-h', { hasText: subject }).waitFor();
  };

  for (const scheme of ['light', 'dark'] as const) {
    it(`prefills the recipients, shows the allow-list, refuses outside it and releases (${scheme})`, async () => {
      const subject = `Release me (${scheme})`;
      const msg = await send(s, subject, ['ada@example.com', 'bo@example.com']);
      const session = await signIn(browser, s, { width: 1200, height: 800 }, { colorScheme: scheme });
      const { page } = session;
      try {
        await open(page, subject);
        await page.getByRole('button', { name: 'Release…' }).click();
        const dialog = page.getByRole('dialog', { name: 'Release this message' });
        await dialog.waitFor();
        const to = dialog.getByLabel('To');
        expect(await to.inputValue()).toBe('ada@example.com, bo@example.com');
        await expect.poll(() => to.evaluate((e) => e === document.activeElement)).toBe(true);
        expect(await dialog.locator('#release-allow').textContent()).toBe(
          'Allowed recipients: *@example.com, boss@example.org',
        );
        expect(await dialog.textContent()).toContain(`smtp://relay-user:***@127.0.0.1:${relay.port}`);
        expect(await lowContrast(page)).toEqual([]);
        await shot(page, `release-dialog-${scheme}`);
        await page.screenshot({ path: `/tmp/release-dialog-${scheme}.png` });

        // Outside the allow-list: said in the dialog, which stays open; nothing sent.
        const before = relay.received.length;
        await to.fill('ada@example.com, someone@elsewhere.net');
        await dialog.getByRole('button', { name: 'Release' }).click();
        const error = dialog.getByRole('alert');
        await expect.poll(() => error.textContent()).toContain('someone@elsewhere.net is outside the relay');
        expect(await to.getAttribute('aria-invalid')).toBe('true');
        expect(relay.received.length).toBe(before);
        expect(await lowContrast(page)).toEqual([]);
        await page.screenshot({ path: `/tmp/release-refused-${scheme}.png` });

        const arrived = relay.next();
        await to.fill('qa@example.com');
        await dialog.getByRole('button', { name: 'Release' }).click();
        expect((await arrived).rcptTo).toEqual(['qa@example.com']);
        await dialog.waitFor({ state: 'detached' });
        await expect.poll(() => page.locator('#note').textContent()).toMatch(/^Released to qa@example\.com through /);
        const entry = page.locator('#timeline li[data-type="relay.released"]');
        await entry.waitFor();
        expect(await entry.textContent()).toContain('to: qa@example.com');
        // The relay's own record takes no Redeliver button (it is no webhook event).
        expect(await entry.locator('[data-redeliver]').count()).toBe(0);
        await expect
          .poll(() => page.getByRole('button', { name: 'Release…' }).evaluate((e) => e === document.activeElement))
          .toBe(true);
        await entry.scrollIntoViewIfNeeded();
        await page.screenshot({ path: `/tmp/release-done-${scheme}.png` });
        const events = (await s.admin('GET', `/sandbox/messages/${msg}`)).body.events;
        expect(events.at(-1)).toMatchObject({ type: 'relay.released', detail: { to: ['qa@example.com'] } });
        expect(session.errors).toEqual([]);
      } finally {
        await session.context.close();
      }
    });
  }

  it('without a relay, says which flag gives one and cannot release', async () => {
    await send(plain, 'No relay here', ['ada@example.com']);
    const session = await signIn(browser, plain, { width: 1200, height: 800 }, { colorScheme: 'dark' });
    const { page } = session;
    try {
      await open(page, 'No relay here');
      await page.getByRole('button', { name: 'Release…' }).click();
      const dialog = page.getByRole('dialog', { name: 'Release this message' });
      await dialog.waitFor();
      expect(await dialog.textContent()).toContain('svc serve --relay-url');
      expect(await dialog.getByRole('button', { name: 'Release' }).isDisabled()).toBe(true);
      await page.keyboard.press('Escape');
      await dialog.waitFor({ state: 'detached' });
      expect(session.errors).toEqual([]);
    } finally {
      await session.context.close();
    }
  });
});
