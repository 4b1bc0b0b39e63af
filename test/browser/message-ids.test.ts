// The inbox page opened at a `/v1` message's address, /messages/msg_… (a link from a log line, a test report, the
// output of `svc emails send`), in a real browser against the real server: it shows the caught message, with its
// views, under the caught message's own address; one not caught yet says why, and opens once it is caught.
import type { Browser } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { launch, signIn, solidPng, type Session } from './browser.js';

describe('the inbox page at /messages/msg_…', { timeout: 60_000 }, () => {
  let s: TestServer;
  let browser: Browser;
  let session: Session | undefined;

  beforeAll(async () => {
    [s, browser] = await Promise.all([startTestServer(), launch()]);
  });
  afterAll(async () => {
    await browser?.close();
    await s?.close();
  });
  afterEach(async () => {
    const was = session;
    session = undefined;
    if (!was) return;
    await was.context.close();
    expect(was.errors).toEqual([]);
  });

  const send = async (subject: string) => {
    const r = await s.call('POST', '/v1/emails', {
      token: s.seed!.api_key_test,
      body: {
        from: 'Shop <orders@example.test>',
        to: 'ada@example.org',
        subject,
        html: '<p id="greeting">Hello Ada</p>',
        attachments: [
          { filename: 'red.png', content: solidPng(8, 8, [220, 20, 20]).toString('base64'), content_type: 'image/png' },
        ],
      },
    });
    expect(r.status, r.text).toBe(202);
    return r.body.id as string;
  };
  const caughtId = async (msg: string) =>
    ((await s.admin('GET', '/sandbox/messages?limit=100')).body.data as any[]).find((m) => m.message_id === msg)!
      .id as string;

  it('shows the caught message, its HTML and attachment, under its eml_ address', async () => {
    const msg = await send('Opened by its msg id');
    await s.settle();
    const eml = await caughtId(msg);
    session = await signIn(browser, s);
    const { page } = session;
    await page.goto(`${s.origin}/messages/${msg}`);
    await page.locator('#view').getByRole('heading', { name: 'Opened by its msg id' }).waitFor();
    await page.waitForURL(`${s.origin}/messages/${eml}`);
    await page.frameLocator('#view iframe').locator('#greeting', { hasText: 'Hello Ada' }).waitFor();
    const thumb = page.locator('#view .atts img');
    await expect.poll(() => thumb.evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth)).toBe(8);
    expect(await thumb.getAttribute('src')).toMatch(new RegExp(`^/sandbox/messages/${eml}/attachments/0\\?view=`));
  });

  it('says why a message not caught yet is not there, and opens it once it is caught', async () => {
    expect(
      (await s.admin('PUT', '/sandbox/chaos', { rules: [{ match: { smtp: 'rcpt' }, action: { code: 451 } }] })).status,
    ).toBe(200);
    const msg = await send('Deferred at first');
    await s.settle();
    await s.admin('DELETE', '/sandbox/chaos');
    session = await signIn(browser, s);
    const { page } = session;
    await page.goto(`${s.origin}/messages/${msg}`);
    await page.locator('#view', { hasText: `${msg} is queued` }).waitFor();

    await s.advance(3600);
    await page.locator('#view').getByRole('heading', { name: 'Deferred at first' }).waitFor();
    await page.waitForURL(`${s.origin}/messages/${await caughtId(msg)}`);
    await page.frameLocator('#view iframe').locator('#greeting').waitFor();
  });
});
