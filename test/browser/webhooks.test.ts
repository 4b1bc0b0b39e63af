// The inbox page's webhooks in a real browser (Debian's Chromium through playwright-core) against the real server and
// real receivers: the endpoints panel and a message's deliveries following attempts as they are made, redelivery, an
// endpoint disabled after seven failures and enabled again, from the page's own clock buttons. Screenshots are
// written to test-artifacts/inbox/.
import type { Browser, Locator, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { startReceiver, type Answer, type Receiver } from '../helpers/receiver.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { newTenant } from '../helpers/tenants.js';
import { focused, launch, lowContrast, row, scrollsSideways, shot, signIn, type Session } from './browser.js';

describe('webhooks on the inbox page', { timeout: 60_000 }, () => {
  let s: TestServer;
  let browser: Browser;
  let session: Session;
  let page: Page;
  let panel: Locator;
  const receivers: Receiver[] = [];

  const receiver = async (answer: Answer) => {
    const r = await startReceiver(answer);
    receivers.push(r);
    return r;
  };
  const endpoint = async (url: string, events?: string[]) => {
    const r = await s.admin('POST', '/sandbox/webhooks', {
      workspace_id: s.seed!.workspace_id,
      url,
      ...(events ? { events } : {}),
    });
    expect(r.status, r.text).toBe(201);
    return r.body as { id: string; secret: string };
  };
  const v1 = async (subject: string) => {
    const r = await s.call('POST', '/v1/emails', {
      token: s.seed!.api_key_test,
      body: {
        from: 'Shop <orders@example.test>',
        to: 'delivered@simulator.test',
        subject,
        text: 'Thanks for your order.',
      },
    });
    expect(r.status, r.text).toBe(202);
    // The message is delivered and the first attempts of its events' deliveries are made.
    await s.settle();
  };
  const serviceNow = async () => (await s.admin('GET', '/sandbox/clock')).body.now as string;
  /** The texts of the items, no-break spaces read as spaces. */
  const texts = async (items: Locator) => (await items.allTextContents()).map((t) => t.replace(/\u00a0/g, ' '));
  const hhmmss = (iso: string, plusSeconds = 0) =>
    new Date(Date.parse(iso) + plusSeconds * 1000).toISOString().slice(11, 19);

  beforeAll(async () => {
    [s, browser] = await Promise.all([startTestServer({ webhookTimeoutMs: 1_500 }), launch()]);
  });
  afterAll(async () => {
    await browser?.close();
    await s?.close();
  });
  beforeEach(async () => {
    expect((await s.admin('DELETE', '/sandbox/messages')).status).toBe(204);
    session = await signIn(browser, s);
    page = session.page;
    panel = page.getByRole('region', { name: 'Webhook endpoints' });
  });
  afterEach(async () => {
    expect(session.errors).toEqual([]);
    await session.context.close();
    for (const e of (await s.admin('GET', '/sandbox/webhooks')).body.data)
      await s.admin('DELETE', `/sandbox/webhooks/${e.id}`);
    for (const r of receivers.splice(0)) await r.close();
  });

  it("follows a failed then a successful attempt in the panel and under the message's events, without a reload; Redeliver delivers again", async () => {
    const rx = await receiver((n) => (n === 1 ? 500 : 200));
    await panel.getByText('No webhook endpoints').waitFor();
    const created = await endpoint(rx.url, ['email.delivered']);

    // The new endpoint appears under its workspace's name: its URL, status, event filter; never its secret.
    const item = panel.locator('li.endpoint', { hasText: rx.url });
    await item.waitFor();
    await panel.getByRole('heading', { name: 'Sandbox' }).waitFor();
    expect(await item.locator('.badge').textContent()).toBe('active');
    expect(await item.locator('.filter').textContent()).toBe('email.delivered');
    await item.getByText('No attempts yet.').waitFor();
    expect(await page.content()).not.toContain(created.secret);

    await v1('Hooked order');
    const t0 = await serviceNow();
    const recent = item.getByRole('list', { name: `Recent attempts to ${rx.url}, newest first` }).getByRole('listitem');
    await recent.first().waitFor();
    expect(await texts(recent)).toEqual([
      expect.stringMatching(/^failed email\.delivered #1 · just now · HTTP 500 · \d+ ms$/),
    ]);

    // The message: the delivery under email.delivered, none under the events the endpoint does not take.
    await row(page, 'Hooked order').click();
    const timeline = page.getByRole('region', { name: 'Events' });
    const delivered = timeline.locator('li[data-type="email.delivered"]');
    const deliveries = delivered.getByRole('list', { name: 'Webhook deliveries of email.delivered' });
    await deliveries.waitFor();
    expect(await deliveries.locator('code.url').textContent()).toBe(rx.url);
    const attempts = deliveries.locator('li.attempt');
    expect(await texts(attempts)).toEqual([
      expect.stringMatching(new RegExp(`^failed #1 · ${hhmmss(t0)} · HTTP 500 · \\d+ ms$`)),
    ]);
    expect(
      await timeline
        .locator('li[data-type="email.queued"] .deliveries, li[data-type="email.sent"] .deliveries')
        .count(),
    ).toBe(0);

    // The retry is due 30 s later: moved from the page's clock, it succeeds, and both places show it.
    await page.getByRole('button', { name: '+30 s' }).click();
    await attempts.nth(1).waitFor();
    expect(await texts(attempts)).toEqual([
      expect.stringMatching(new RegExp(`^failed #1 · ${hhmmss(t0)} · HTTP 500 · \\d+ ms$`)),
      expect.stringMatching(new RegExp(`^ok #2 · ${hhmmss(t0, 30)} · 200 · \\d+ ms$`)),
    ]);
    await recent.nth(1).waitFor();
    expect(await texts(recent)).toEqual([
      expect.stringMatching(/^ok email\.delivered #2 · just now · 200 · \d+ ms$/),
      expect.stringMatching(/^failed email\.delivered #1 · just now · HTTP 500 · \d+ ms$/),
    ]);
    expect(rx.received.map((r) => r.headers['service-delivery-attempt'])).toEqual(['1', '2']);
    expect(await lowContrast(page)).toEqual([]);
    await shot(page, 'message-webhooks');
    await shot(page.locator('.panels'), 'panels-webhooks');

    // Redeliver: a second delivery to the endpoint, its attempts numbered from 1; the button keeps the focus.
    const redeliver = delivered.getByRole('button', { name: 'Redeliver email.delivered' });
    await redeliver.click();
    await page.getByText('Delivering email.delivered again to 1 endpoint.').waitFor();
    await deliveries.getByText('delivery 2 of 2').waitFor();
    const second = deliveries.locator('ol.attempts').nth(1).locator('li.attempt');
    await second.first().waitFor();
    expect(await texts(second)).toEqual([
      expect.stringMatching(new RegExp(`^ok #1 · ${hhmmss(t0, 30)} · 200 · \\d+ ms$`)),
    ]);
    expect(rx.received.map((r) => r.headers['service-delivery-attempt'])).toEqual(['1', '2', '1']);
    expect(await focused(page)).toBe('button Redeliver email.delivered');

    // From 360 px wide the message with its deliveries reads without scrolling sideways.
    await page.setViewportSize({ width: 360, height: 780 });
    expect(await scrollsSideways(page)).toBe(false);
    // The live stream may redraw the panel under the scroll (a late attempt's line): scroll to the one drawn then.
    await vi.waitFor(() => deliveries.scrollIntoViewIfNeeded());
    await shot(page, 'message-webhooks-360');

    // Removed through the API, the endpoint leaves the panel at once.
    expect((await s.admin('DELETE', `/sandbox/webhooks/${created.id}`)).status).toBe(204);
    await page.getByRole('button', { name: '← Messages' }).click();
    await panel.getByText('No webhook endpoints').waitFor();
  });

  it('a clock move answered late leaves the focus where the person has since put it', async () => {
    // The retry the move makes due hangs until the delivery timeout (1.5 s here): the move is answered only then.
    const rx = await receiver((n) => (n === 1 ? 500 : 'hang'));
    await endpoint(rx.url, ['email.delivered']);
    await v1('Slow retry');
    const move = page.getByRole('button', { name: '+30 s' });
    await move.click();
    // Meanwhile the person goes on to the search box.
    const search = page.locator('#q');
    await search.focus();
    await page.getByText(/^Clock moved to /).waitFor();
    expect(await search.evaluate((e) => e === document.activeElement)).toBe(true);
    // Moved again with nothing else touched, the button keeps the focus, as a keyboard user expects.
    await move.focus();
    await move.press('Enter');
    await page.getByText(/^Clock moved to .*; 0 jobs ran\.$/).waitFor();
    expect(await move.evaluate((e) => e === document.activeElement)).toBe(true);
  });

  it("offers Redeliver only for the events an active endpoint of the message's workspace takes, following its endpoints", async () => {
    await v1('Nobody listening');
    await row(page, 'Nobody listening').click();
    const timeline = page.getByRole('region', { name: 'Events' });
    const delivered = timeline.locator('li[data-type="email.delivered"]');
    await delivered.waitFor();
    await panel.getByText('No webhook endpoints').waitFor();
    // Without an endpoint, nothing would receive a redelivery: no button says otherwise.
    expect(await timeline.getByRole('button').count()).toBe(0);

    // An endpoint of another workspace takes nothing of this one's.
    const other = await newTenant(s, 'elsewhere');
    const rx = await receiver(() => 200);
    const elsewhere = await s.admin('POST', '/sandbox/webhooks', { workspace_id: other.workspace_id, url: rx.url });
    expect(elsewhere.status, elsewhere.text).toBe(201);
    await panel.locator('li.endpoint', { hasText: rx.url }).waitFor();
    expect(await timeline.getByRole('button').count()).toBe(0);

    // One of this workspace taking email.delivered: its button appears without a reload, and only under that event.
    const { id } = await endpoint(rx.url, ['email.delivered']);
    const redeliver = delivered.getByRole('button', { name: 'Redeliver email.delivered' });
    await redeliver.waitFor();
    expect(await timeline.getByRole('button').count()).toBe(1);
    await redeliver.click();
    await page.getByText('Delivering email.delivered again to 1 endpoint.').waitFor();

    // Removed, it takes the button with it.
    expect((await s.admin('DELETE', `/sandbox/webhooks/${id}`)).status).toBe(204);
    await redeliver.waitFor({ state: 'detached' });
    expect(await timeline.getByRole('button').count()).toBe(0);
  });

  it('an endpoint failing seven times shows as disabled; Enable, reached by keyboard, makes it active and it receives again', async () => {
    const rx = await receiver(() => 500);
    const { id } = await endpoint(rx.url, ['email.delivered']);
    await v1('Never acknowledged');
    const item = panel.locator('li.endpoint', { hasText: rx.url });
    const recent = item.getByRole('list', { name: `Recent attempts to ${rx.url}, newest first` }).getByRole('listitem');
    await recent.first().waitFor();

    // One day of service time from the page's clock: the six retries run, the last disables the endpoint.
    await page.getByRole('button', { name: '+1 day' }).click();
    await item.locator('.badge', { hasText: 'disabled by failures' }).waitFor();
    expect(rx.received).toHaveLength(7);
    await item.getByText(/^Disabled just now after seven failed attempts\./).waitFor();
    // The five latest attempts, newest first, each an HTTP 500.
    await recent.nth(4).waitFor();
    expect(await recent.evaluateAll((lis) => lis.map((li) => li.getAttribute('data-attempt')))).toEqual([
      '7',
      '6',
      '5',
      '4',
      '3',
    ]);
    expect(await texts(recent)).toEqual(
      Array.from({ length: 5 }, () => expect.stringMatching(/^failed email\.delivered #\d · .* · HTTP 500 · \d+ ms$/)),
    );
    // The workspace owner's notice is caught too.
    await row(page, `Webhook endpoint disabled: ${rx.url}`).waitFor();
    expect(await lowContrast(page)).toEqual([]);
    await shot(page.locator('.panels'), 'panels-webhooks-disabled');

    // Enable comes after the clock's buttons in the focus order, before the list.
    await page.getByRole('button', { name: '+1 day' }).focus();
    await page.keyboard.press('Tab');
    const enable = item.getByRole('button', { name: `Enable ${rx.url}` });
    expect(await focused(page)).toBe(`button Enable ${rx.url}`);
    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('delete-all');
    await enable.focus();
    await page.keyboard.press('Enter');
    await item.locator('.badge', { hasText: 'active' }).waitFor();
    await page.getByText(`Webhook endpoint ${rx.url} enabled.`).waitFor();
    expect(await item.getByRole('button').count()).toBe(0);
    // The focus moves to the endpoint once the panel is drawn with it active (the note may come first).
    await expect.poll(() => item.evaluate((li) => li === document.activeElement)).toBe(true);
    expect((await s.admin('GET', '/sandbox/webhooks')).body.data.find((e: { id: string }) => e.id === id).status).toBe(
      'active',
    );

    // Active again, it receives the next event.
    rx.answer = () => 200;
    await v1('After enabling');
    await recent
      .first()
      .filter({ hasText: /^ok email\.delivered #1 / })
      .waitFor();
    expect(rx.received).toHaveLength(8);

    await page.setViewportSize({ width: 360, height: 780 });
    expect(await scrollsSideways(page)).toBe(false);
    expect(await lowContrast(page)).toEqual([]);
    await shot(page, 'panels-webhooks-360');
  });
});
