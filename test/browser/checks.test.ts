// The Checks tab of the inbox page, in a real browser (Debian's Chromium through playwright-core) against the real
// server, 1280 and 390 px wide, light and dark: a flexbox newsletter Outlook breaks, a table receipt, an HTML-only
// promotion with images without alt text, links against a real website on loopback (checked with checkPrivateLinks),
// checked again on request; progress while a report is made, the page going on meanwhile, and a late answer left
// unshown.
import { readFileSync } from 'node:fs';
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import nodemailer, { type SendMailOptions } from 'nodemailer';
import type { Browser, Page, Request } from 'playwright-core';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { MessageChecks } from '../../src/contract/checks.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { launch, lowContrast, row, scrollsSideways, shot, signIn, type Session } from './browser.js';

const fixture = (name: string) => readFileSync(new URL(`../../fixtures/checks/${name}`, import.meta.url), 'utf8');
const WIDTHS = [
  [1280, 900],
  [390, 844],
] as const;

/**
 * A website on loopback whose answers the test decides: `/ok`, `/old` (301 → `/ok`), `/fixable` (404 until `fixed`;
 * held while `holdFixable`), `/held` (no answer until `release()`, then 200), anything else 404.
 */
async function website() {
  const held: ServerResponse[] = [];
  const site = {
    origin: '',
    fixed: false,
    holdFixable: false,
    held,
    release() {
      for (const res of held.splice(0)) res.writeHead(200, { 'content-type': 'text/html' }).end('<p>late</p>');
    },
    server: null as unknown as Server,
  };
  site.server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (path === '/ok') res.writeHead(200, { 'content-type': 'text/html' }).end('<p>ok</p>');
    else if (path === '/old') res.writeHead(301, { location: '/ok' }).end();
    else if (path === '/fixable' && site.holdFixable) held.push(res);
    else if (path === '/fixable' && site.fixed) res.writeHead(200, { 'content-type': 'text/html' }).end('<p>fixed</p>');
    else if (path === '/held') held.push(res);
    else res.writeHead(404, { 'content-type': 'text/html' }).end('<p>not found</p>');
  });
  await new Promise<void>((resolve) => site.server.listen(0, '127.0.0.1', resolve));
  site.origin = `http://127.0.0.1:${(site.server.address() as AddressInfo).port}`;
  return site;
}

describe('the Checks tab', { timeout: 90_000 }, () => {
  let s: TestServer;
  let browser: Browser;
  let site: Awaited<ReturnType<typeof website>>;
  let session: Session | undefined;

  const v1 = async (body: Record<string, unknown>) => {
    const r = await s.call('POST', '/v1/emails', {
      token: s.seed!.api_key_test,
      body: { from: 'The Shop <news@example.test>', to: 'ada@example.org', ...body },
    });
    expect(r.status, r.text).toBe(202);
    await s.settle();
  };
  const drop = async (mail: SendMailOptions) => {
    const t = nodemailer.createTransport({ host: '127.0.0.1', port: s.smtpPort, secure: false, ignoreTLS: true });
    try {
      await t.sendMail({ from: 'Deals <deals@other.test>', to: 'ada@example.org', ...mail });
    } finally {
      t.close();
    }
  };
  const idOf = async (subject: string) =>
    ((await s.admin('GET', '/sandbox/messages?limit=100')).body.data as any[]).find((m) => m.subject === subject)!
      .id as string;
  /** The report as the API answers it (the kept one, once the page has had it made). */
  const reportOf = async (subject: string) =>
    (await s.admin('GET', `/sandbox/messages/${await idOf(subject)}/checks`)).body as MessageChecks;
  /** The requests the page made for checks. */
  const checkRequests = (page: Page) => {
    const seen: string[] = [];
    page.on('request', (r: Request) => {
      if (/\/checks(\?|$)/.test(r.url())) seen.push(new URL(r.url()).pathname + new URL(r.url()).search);
    });
    return seen;
  };
  const open = async (page: Page, subject: string) => {
    const back = page.getByRole('button', { name: '← Messages' });
    if (await back.isVisible()) await back.click();
    await row(page, subject).click();
    await page.locator('#view').getByRole('heading', { name: subject }).waitFor();
  };
  const openChecks = async (page: Page) => {
    await page.getByRole('tab', { name: /^Checks/ }).click();
    // A first report starts the checks' threads and asks each link over the network: the server gives its checks 10 s
    // (30 s for links), so the page is given as long before this counts as a failure.
    await page.locator('#panel-checks .ck-summary').waitFor({ timeout: 30_000 });
  };
  const panel = (page: Page) => page.locator('#panel-checks');
  const finding = (page: Page, rule: string) => panel(page).locator(`li.finding[data-rule="${rule}"]`);

  beforeAll(async () => {
    [s, browser, site] = await Promise.all([startTestServer({ checkPrivateLinks: true }), launch(), website()]);
  });
  afterAll(async () => {
    await browser?.close();
    await s?.close();
    site?.release();
    await new Promise((resolve) => site?.server.close(resolve));
  });
  beforeEach(async () => {
    expect((await s.admin('DELETE', '/sandbox/messages')).status).toBe(204);
  });
  afterEach(async () => {
    const was = session;
    session = undefined;
    if (!was) return;
    await was.context.close();
    expect(was.errors).toEqual([]);
  });

  for (const [width, height] of WIDTHS) {
    it(`${width} px: a flexbox newsletter: the score and its data, the counts, each check, the clients worst first, and display:flex at its line of the source`, async () => {
      await v1({
        subject: 'Spring has arrived',
        html: fixture('newsletter.html'),
        text: fixture('newsletter.txt'),
        tracking: { opens: true, clicks: true },
      });
      session = await signIn(browser, s, { width, height }, { colorScheme: 'light' });
      const { page } = session;
      const asked = checkRequests(page);
      await open(page, 'Spring has arrived');
      // Opening a message asks for no checks; the tab does, and only it.
      expect(asked).toEqual([]);
      expect(await page.getByRole('tab', { name: /^Checks/ }).textContent()).toBe('Checks');
      await openChecks(page);
      const r = await reportOf('Spring has arrived');
      expect(asked).toEqual([`/sandbox/messages/${r.message_id}/checks`]);
      const p = panel(page);

      // The summary: the score, named by the data it is judged by; the counts as the report has them.
      expect(await p.locator('.ck-score .num').textContent()).toBe(`${r.summary.score}/100`);
      expect(await p.locator('.ck-data').textContent()).toContain('caniemail 2.0.2 (support data of');
      for (const kind of ['error', 'warning', 'notice'] as const)
        expect(await p.locator(`.count.${kind} strong`).textContent()).toBe(String(r.summary[`${kind}s`]));
      expect(r.summary.warnings).toBeGreaterThan(0);
      // The badge: no error, so the warnings.
      expect(await page.getByRole('tab', { name: /^Checks/ }).textContent()).toBe(
        `Checks${r.summary.warnings}, ${r.summary.warnings} warnings`,
      );

      // Each check in the report's order with its status; a skipped one says why.
      const rows = p.getByRole('list', { name: 'Checks' }).getByRole('listitem');
      expect(
        await rows.evaluateAll((li) => li.map((l) => [l.getAttribute('data-check'), l.getAttribute('data-status')])),
      ).toEqual(r.checks.map((c) => [c.id, c.status]));
      expect(await rows.filter({ hasText: 'Authentication' }).locator('.note').textContent()).toBe(
        'SPF pass · DKIM pass · DMARC pass',
      );
      const spam = r.checks.find((c) => c.id === 'spam')!;
      expect(await rows.filter({ hasText: 'Spam' }).textContent()).toContain(spam.reason);
      expect(await rows.filter({ hasText: 'Spam' }).locator('.sev').textContent()).toBe('–skipped');

      // The clients, least supporting first, as the report ranks them; Outlook on Windows half.
      const clients = r.checks.find((c) => c.id === 'html-compatibility')!.clients!;
      const table = p.locator('.ck-clients tbody tr:visible');
      expect(await table.count()).toBe(8);
      await p.getByRole('button', { name: `Show all ${clients.length}` }).click();
      expect(await table.count()).toBe(clients.length);
      const shown = await table.evaluateAll((trs) =>
        trs.map((tr) => [tr.querySelector('th')!.textContent, tr.querySelector('.pct')!.textContent]),
      );
      expect(shown).toEqual(clients.map((c) => [c.name, `${Math.round(c.support * 100)} %`]));
      expect(shown).toContainEqual(['Outlook (Windows)', '50 %']);
      const widths = await table.locator('.fill').evaluateAll((fs) => fs.map((f) => f.getBoundingClientRect().width));
      expect(widths).toEqual([...widths].sort((a, b) => a - b)); // the bars grow down the list

      // display:flex: a warning naming Outlook, its caniemail page in a new tab, its line of the HTML source.
      const flex = finding(page, 'css-display-flex');
      expect(await flex.locator('.sev').textContent()).toBe('!warning');
      expect(await flex.locator('.f-title strong').textContent()).toBe('display:flex');
      expect(await flex.locator('.f-clients').textContent()).toContain('Outlook (Windows)');
      const docs = flex.getByRole('link', { name: /caniemail\.com/ });
      expect(
        await docs.evaluate((a) => [a.getAttribute('href'), a.getAttribute('target'), a.getAttribute('rel')]),
      ).toEqual(['https://www.caniemail.com/features/css-display-flex/', '_blank', 'noopener noreferrer']);
      expect(await lowContrast(page)).toEqual([]);
      expect(await scrollsSideways(page)).toBe(false);
      await shot(page, `checks-newsletter-${width}`);
      await page.emulateMedia({ colorScheme: 'dark' });
      expect(await lowContrast(page)).toEqual([]);
      await shot(page, `checks-newsletter-dark-${width}`);

      await flex.getByRole('button', { name: 'Line 10:13' }).click();
      expect(await page.getByRole('tab', { name: 'HTML source' }).getAttribute('aria-selected')).toBe('true');
      const line = page.locator('#panel-source .ln.hl');
      expect(await line.getAttribute('data-line')).toBe('10');
      expect(await line.locator('.c').textContent()).toContain('display: flex');
      const box = (await line.boundingBox())!;
      expect(box.y).toBeGreaterThanOrEqual(0);
      expect(box.y + box.height).toBeLessThanOrEqual(height);
      // Back on the tab, the finding is where the reader left it, without asking the server again.
      await page.getByRole('tab', { name: /^Checks/ }).click();
      await page.waitForFunction(() => document.activeElement?.textContent === 'Line 10:13');
      expect(asked).toHaveLength(1);
    });
  }

  it('a table receipt and an HTML-only promotion: notices folded away, images without alt text at their lines, an unauthenticated sender', async () => {
    await v1({ subject: 'Your receipt #1042', html: fixture('receipt.html'), text: fixture('receipt.txt') });
    await drop({ subject: 'Weekend sale', html: fixture('promo-no-alt.html') });
    session = await signIn(browser, s, { width: 390, height: 844 }, { colorScheme: 'dark' });
    const { page } = session;

    await open(page, 'Your receipt #1042');
    await openChecks(page);
    const receipt = await reportOf('Your receipt #1042');
    const compat = receipt.checks.find((c) => c.id === 'html-compatibility')!;
    expect(compat.status).toBe('notice');
    expect(await panel(page).locator('.ck-list [data-check="html-compatibility"]').getAttribute('data-status')).toBe(
      'notice',
    );
    // Tables and inline styles: nothing worse than notices, folded under their count.
    const folded = panel(page).locator('#ck-html-compatibility details');
    expect(await folded.locator('summary').textContent()).toBe(`${compat.findings.length} notices`);
    expect(await folded.locator('li.finding').first().isVisible()).toBe(false);
    await folded.locator('summary').click();
    await folded.locator('li.finding').first().waitFor();
    expect(await page.getByRole('tab', { name: /^Checks/ }).textContent()).toBe('Checks✓, no errors or warnings');
    expect(await lowContrast(page)).toEqual([]);

    await open(page, 'Weekend sale');
    await openChecks(page);
    const promo = await reportOf('Weekend sale');
    expect(promo.summary.errors).toBe(1);
    expect(await page.getByRole('tab', { name: /^Checks/ }).textContent()).toBe('Checks1, 1 error');
    expect(await panel(page).locator('.count.error strong').textContent()).toBe('1');
    expect(await finding(page, 'not-authenticated').locator('.sev').textContent()).toBe('✕error');
    // Content: the missing text part (no line), and each image without alt text at its line.
    expect(await finding(page, 'text-part-missing').getByRole('button', { name: /^Line/ }).count()).toBe(0);
    const alts = finding(page, 'img-alt-missing');
    expect(await alts.getByRole('button', { name: /^Line/ }).allTextContents()).toEqual(['Line 11:48', 'Line 16:7']);
    expect(await alts.nth(1).locator('.f-detail').textContent()).toContain('https://cdn.example.test/icons/truck.png');
    expect(await scrollsSideways(page)).toBe(false);
    expect(await lowContrast(page)).toEqual([]);
    await shot(page, 'checks-promo-dark-390');
    await alts.nth(1).getByRole('button', { name: 'Line 16:7' }).click();
    const line = page.locator('#panel-source .ln.hl');
    expect(await line.getAttribute('data-line')).toBe('16');
    expect(await line.locator('.c').textContent()).toContain('truck.png');
  });

  it("links on a real website: a broken one with its answer, a redirect's hops, checked again on request; the message's text stays text", async () => {
    const o = site.origin;
    site.fixed = false;
    const trap = `${o}/gone?x=<img src=x onerror="window.pwned=1">`;
    await v1({
      subject: 'Where is my parcel?',
      text: 'Track it.',
      tracking: { clicks: true },
      html: [
        '<!doctype html><html lang="en"><head><title>Parcel</title></head><body>',
        `<p><a href="${o}/ok">Your order</a></p>`,
        `<p><a href="${o}/old">Track it</a></p>`,
        `<p><a href="${o}/fixable">Returns</a></p>`,
        `<p><a href='${trap}'>Old offer</a></p>`,
        '</body></html>',
      ].join('\n'),
    });
    session = await signIn(browser, s, { width: 1280, height: 900 });
    const { page } = session;
    const asked = checkRequests(page);
    await open(page, 'Where is my parcel?');
    await openChecks(page);
    const before = await reportOf('Where is my parcel?');
    const links = panel(page).locator('#ck-links');
    expect(await panel(page).locator('.ck-list [data-check="links"]').getAttribute('data-status')).toBe('error');

    const broken = links.locator('li.finding[data-rule="link-broken"]');
    expect(await broken.locator('.f-url').allTextContents()).toEqual([
      `${o}/fixableanswered 404`,
      `${trap}answered 404`,
    ]);
    expect(await broken.getByRole('button', { name: /^Line/ }).allTextContents()).toEqual(['Line 4:4', 'Line 5:4']);
    // The URL is shown as written, as text: nothing of it became an element, nothing ran.
    expect(await panel(page).locator('img').count()).toBe(0);
    expect(await page.evaluate(() => (window as { pwned?: number }).pwned)).toBeUndefined();
    await links.getByText(/^\d+ notices$/).click();
    const redirect = links.locator('li.finding[data-rule="link-redirects"]');
    expect(await redirect.locator('.hops li').allTextContents()).toEqual([`→ ${o}/ok`]);
    await links.getByText('Every link and image (4)').click();
    expect(await links.locator('.ck-links li').first().textContent()).toContain(`${o}/ok`);
    expect(await page.getByRole('tab', { name: /^Checks/ }).textContent()).toBe(
      `Checks${before.summary.errors}, ${before.summary.errors} errors`,
    );
    expect(await lowContrast(page)).toEqual([]);
    await shot(page, 'checks-links');

    // Fixed on the website: checked again (busy meanwhile, the keyboard kept), one error fewer, on the tab and its badge.
    site.holdFixable = true;
    await panel(page).getByRole('button', { name: 'Check links again' }).click();
    const busy = panel(page).getByRole('button', { name: 'Checking links…' });
    await busy.waitFor();
    expect(await busy.getAttribute('aria-disabled')).toBe('true');
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('Checking links…');
    await expect.poll(() => site.held.length, { timeout: 15_000 }).toBeGreaterThan(0);
    site.holdFixable = false;
    site.fixed = true;
    site.release();
    await panel(page)
      .locator('.count.error strong', { hasText: String(before.summary.errors - 1) })
      .waitFor();
    expect(asked.at(-1)).toBe(`/sandbox/messages/${before.message_id}/checks?refresh=links`);
    expect(await broken.locator('.f-url').allTextContents()).toEqual([`${trap}answered 404`]);
    expect(await page.getByRole('tab', { name: /^Checks/ }).textContent()).toBe('Checks1, 1 error');
    expect(await panel(page).getByRole('button', { name: 'Check links again' }).isEnabled()).toBe(true);
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('Check links again');
  });

  it('shows progress while a report is made; the page goes on meanwhile, and an answer for a message left is not shown', async () => {
    await v1({
      subject: 'Slow links',
      text: 'x',
      html: `<html lang="en"><body><p><a href="${site.origin}/held">A slow site</a></p></body></html>`,
    });
    await v1({ subject: 'Quick one', html: '<html lang="en"><body><p>Hello</p></body></html>', text: 'Hello' });
    const slow = await idOf('Slow links');
    const quick = await idOf('Quick one');
    session = await signIn(browser, s, { width: 1280, height: 900 });
    const { page } = session;
    const asked = checkRequests(page);

    await open(page, 'Slow links');
    await page.getByRole('tab', { name: /^Checks/ }).click();
    const progress = panel(page).getByRole('status');
    await progress.getByRole('progressbar', { name: 'Checking the message' }).waitFor();
    await expect.poll(() => site.held.length, { timeout: 15_000 }).toBeGreaterThan(0);
    // Away and back while it is made: the same request goes on, no second one.
    await page.getByRole('tab', { name: 'Text' }).click();
    await page.getByRole('tab', { name: /^Checks/ }).click();
    await progress.waitFor();
    expect(asked).toEqual([`/sandbox/messages/${slow}/checks`]);

    // The rest of the page answers meanwhile: another message opens, and its checks come.
    await open(page, 'Quick one');
    await openChecks(page);
    expect(await panel(page).locator('.checks').getAttribute('data-message')).toBe(quick);

    // The slow report arrives: kept for later, not shown over the message now open.
    const badge = await page.getByRole('tab', { name: /^Checks/ }).textContent();
    const late = page.waitForResponse((res) => res.url().endsWith(`/sandbox/messages/${slow}/checks`));
    site.release();
    expect((await late).status()).toBe(200);
    await page.evaluate(() => new Promise(requestAnimationFrame));
    expect(await panel(page).locator('.checks').getAttribute('data-message')).toBe(quick);
    expect(await page.getByRole('tab', { name: /^Checks/ }).textContent()).toBe(badge);
    expect(await page.locator('#view h2').textContent()).toBe('Quick one');

    // Back to it: shown at once, as answered.
    await open(page, 'Slow links');
    await openChecks(page);
    expect(await panel(page).locator('.checks').getAttribute('data-message')).toBe(slow);
    expect(asked).toEqual([`/sandbox/messages/${slow}/checks`, `/sandbox/messages/${quick}/checks`]);
  });
});
