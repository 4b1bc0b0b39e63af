// The inbox page as a person first opens it, in a real browser (Debian's Chromium through playwright-core) against the
// real server: what the list says before it is read and while nothing is caught, the way it gives to a first message
// (run here exactly as printed), the empty webhook panel, and the layout of a phone.
import { execa } from 'execa';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { launch, row, scrollsSideways, shot, signIn } from './browser.js';

describe("the inbox page's first paint", { timeout: 60_000 }, () => {
  let s: TestServer;
  let browser: Browser;

  beforeAll(async () => {
    [s, browser] = await Promise.all([startTestServer(), launch()]);
  });
  afterAll(async () => {
    await browser?.close();
    await s?.close();
  });

  it('says Loading… until the list is read, then, with nothing caught, how to send a first message: a curl line that works', async () => {
    expect((await s.admin('DELETE', '/sandbox/messages')).status).toBe(204);
    const context = await browser.newContext({ viewport: { width: 1400, height: 900 } });
    const page = await context.newPage();
    const errors: string[] = [];
    page.on('pageerror', (err) => errors.push(err.message));
    try {
      // The list's answers are held back until the page has been seen waiting for them.
      let release!: () => void;
      const held = new Promise<void>((r) => (release = r));
      await page.route(/\/sandbox\/messages\?/, async (route) => {
        await held;
        await route.continue();
      });
      await page.goto(s.inbox);
      const list = page.getByRole('list', { name: 'Messages' });
      await list.getByText('Loading…').waitFor();
      expect(await list.getAttribute('aria-busy')).toBe('true');
      release();

      await list.getByText('No mail caught yet.').waitFor();
      expect(await list.getAttribute('aria-busy')).toBeNull();
      expect(await list.textContent()).not.toContain('Loading…');
      const command = (await page.locator('#first-send-command').textContent())!;
      expect(command).toBe(
        `curl -s ${s.origin}/v1/emails -H 'Authorization: Bearer ${s.seed!.api_key_test}' -H 'Content-Type: application/json' ` +
          `-d '{"from":"hello@example.test","to":"you@example.org","subject":"Hello","text":"Your code is 482913"}'`,
      );
      expect(await list.textContent()).toContain(`svc emails send --from hello@example.test`);
      expect(await list.textContent()).toContain(s.smtp);
      await shot(page, 'first-paint-empty');

      // Copied into a shell as it stands, it sends a message, which the page shows without a reload.
      const sent = await execa('bash', ['-c', command], { reject: false });
      expect(sent.exitCode, sent.stderr).toBe(0);
      expect(JSON.parse(sent.stdout)).toMatchObject({ id: expect.stringMatching(/^msg_/), status: 'queued' });
      await row(page, 'Hello').waitFor();
      expect(await list.textContent()).not.toContain('No mail caught yet');
      expect(errors).toEqual([]);
    } finally {
      await context.close();
    }
  });

  it('names the commands that make a webhook endpoint, not a route, while there is none', async () => {
    const { context, page, errors } = await signIn(browser, s);
    try {
      const panel = page.locator('#webhooks-panel');
      await panel.getByText('No webhook endpoints').waitFor();
      const text = (await panel.textContent())!;
      expect(text).toContain('svc sandbox webhooks add --workspace ID --url URL');
      expect(text).toContain('svc webhooks listen');
      expect(text).not.toContain('/sandbox/webhooks');
      expect(errors).toEqual([]);
    } finally {
      await context.close();
    }
  });

  it('folds the clock and webhook panels below the list on a phone 390 px wide', async () => {
    const sent = await s.call('POST', '/v1/emails', {
      token: s.seed!.api_key_test,
      body: { from: 'hello@example.test', to: 'phone@example.org', subject: 'On a phone', text: 'x' },
    });
    expect(sent.status).toBe(202);
    await s.settle();
    const { context, page, errors } = await signIn(browser, s, { width: 390, height: 844 });
    try {
      await row(page, 'On a phone').waitFor();
      await page.locator('#webhooks-panel').getByText('No webhook endpoints').waitFor();
      const below = async (upper: string, lower: string) => {
        const a = (await page.locator(upper).boundingBox())!;
        const b = (await page.locator(lower).boundingBox())!;
        return b.y >= a.y + a.height;
      };
      expect(await below('.list', '.panels')).toBe(true);
      expect(await below('.list', '#clock-h')).toBe(true);
      // The first message is in the first screenful, above the panels.
      const first = (await row(page, 'On a phone').boundingBox())!;
      expect(first.y + first.height).toBeLessThanOrEqual(844);
      expect(await scrollsSideways(page)).toBe(false);
      await shot(page as Page, 'first-paint-390');
      expect(errors).toEqual([]);
    } finally {
      await context.close();
    }
  });
});
