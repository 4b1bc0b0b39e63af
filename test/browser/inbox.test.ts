// The inbox page in a real browser (Debian's Chromium through playwright-core) against the real server: sign-in,
// live mail and status changes, search, a message and its tabs, downloads, the clock panel, deleting, the keyboard,
// another origin's attempts, and the page from 360 px wide. Screenshots are written to test-artifacts/inbox/.
import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import nodemailer from 'nodemailer';
import type Mail from 'nodemailer/lib/mailer/index.js';
import type { Browser, Locator, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { download, launch, lowContrast, row, scrollsSideways, shot, signIn, type Session } from './browser.js';

const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==',
  'base64',
);

/** An image's width once it has loaded or failed (0). */
/**
 * The natural width of an image once it has loaded (0 when it failed or was blocked). Asked again every 50 ms, the
 * locator resolved anew each time, for up to 10 s: an evaluate that waited on the image's load event would have no
 * timeout of its own, and would wait forever on an image of a frame the page has since drawn again.
 */
async function loadedWidth(img: Locator): Promise<number> {
  let width: number | null = null;
  await vi.waitFor(
    async () => {
      width = await img.evaluate((i: HTMLImageElement) => (i.complete ? i.naturalWidth : null));
      if (width === null) throw new Error('the image is still loading');
    },
    { timeout: 10_000, interval: 50 },
  );
  return width!;
}

/** What a server on another port of this host was sent: the path and the headers of each request. */
interface Hit {
  url: string;
  headers: Record<string, string | string[] | undefined>;
}

/** A server on another port of this host: it counts what is asked of it and serves `page` at /. */
async function elsewhere(page = ''): Promise<{ origin: string; hits: string[]; seen: Hit[]; server: Server }> {
  const hits: string[] = [];
  const seen: Hit[] = [];
  const server = createServer((req, res) => {
    hits.push(req.url!);
    seen.push({ url: req.url!, headers: req.headers });
    if (new URL(req.url!, 'http://x').pathname === '/')
      return res.writeHead(200, { 'Content-Type': 'text/html' }).end(page);
    if (req.url!.endsWith('.png')) return res.writeHead(200, { 'Content-Type': 'image/png' }).end(PNG);
    res.writeHead(204).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, hits, seen, server };
}

describe('the inbox page', { timeout: 60_000 }, () => {
  let s: TestServer;
  let browser: Browser;
  let session: Session;
  let page: Page;

  const v1 = async (body: Record<string, unknown>) => {
    const r = await s.call('POST', '/v1/emails', {
      token: s.seed!.api_key_test,
      body: { from: 'Shop <orders@example.test>', ...body },
    });
    expect(r.status, r.text).toBe(202);
    await s.settle();
    return r.body.id as string;
  };
  const smtp = async (mail: Mail.Options) => {
    const t = nodemailer.createTransport({ host: '127.0.0.1', port: s.smtpPort, secure: false, ignoreTLS: true });
    try {
      await t.sendMail({ from: 'Alice <alice@example.test>', to: 'bob@example.test', ...mail });
    } finally {
      t.close();
    }
  };
  const caught = async (q = '') => (await s.admin('GET', `/sandbox/messages?limit=100${q}`)).body.data as any[];

  beforeAll(async () => {
    [s, browser] = await Promise.all([startTestServer(), launch()]);
  });
  afterAll(async () => {
    await browser?.close();
    await s?.close();
  });
  beforeEach(async () => {
    expect((await s.admin('DELETE', '/sandbox/messages')).status).toBe(204);
    session = await signIn(browser, s);
    page = session.page;
  });
  afterEach(async () => {
    expect(session.errors).toEqual([]);
    await session.context.close();
  });

  it('signs in through the printed URL: the token leaves the address bar, and the page keeps a session of its own, no cookie', async () => {
    expect(page.url()).toBe(`${s.origin}/`);
    expect(await page.content()).not.toContain(s.adminToken);
    expect(await session.context.cookies()).toEqual([]);
    const kept = await page.evaluate(() => Object.entries(localStorage));
    expect(kept).toEqual([['svc.inbox.session', expect.stringMatching(/^ses_[\w-]+\.[\w-]+$/)]]);
    expect(kept[0]![1]).not.toContain(s.adminToken);
    // The page's session opens the sandbox routes as the admin token does.
    const bearer = kept[0]![1] as string;
    expect((await s.call('GET', '/sandbox/messages', { token: bearer })).status).toBe(200);

    // The token URL was answered with a redirect, the session's fragment taken out: neither is in the history.
    await page.goBack();
    expect(page.url()).toBe('about:blank');
    await page.goForward();
    expect(page.url()).toBe(`${s.origin}/`);
    // A reload, or another tab, keeps the reader signed in, without the token.
    await page.reload();
    await page.locator('#live', { hasText: 'Live' }).waitFor();
    const tab = await session.context.newPage();
    await tab.goto(`${s.origin}/`);
    await tab.locator('#live', { hasText: 'Live' }).waitFor();
    await tab.close();

    const stranger = await browser.newContext();
    try {
      const p = await stranger.newPage();
      await p.goto(s.origin);
      await p.waitForURL(`${s.origin}/sign-in?next=%2F`);
      await p.getByRole('textbox', { name: 'Admin token' }).waitFor();
      const last = s.adminToken.at(-1) === 'x' ? 'y' : 'x';
      const wrong = await p.goto(`${s.origin}/?token=${s.adminToken.slice(0, -1)}${last}`);
      expect(wrong!.status()).toBe(401);
      expect(await stranger.cookies()).toEqual([]);
      expect(await p.evaluate(() => localStorage.length)).toBe(0);
    } finally {
      await stranger.close();
    }
  });

  it('shows mail sent through /v1 without a reload, unread, with its status badge and workspace', async () => {
    await page.evaluate(() => ((window as any).loadedOnce = true));
    await page.getByText('No mail caught yet').waitFor();
    await v1({
      to: 'delivered@simulator.test',
      subject: 'Your receipt #1042',
      html: '<p>Thanks for your order.</p>',
      text: 'Thanks for your order.',
    });
    const r = row(page, 'Your receipt #1042');
    await r.locator('.badge', { hasText: 'delivered' }).waitFor();
    expect(await r.locator('.ws').textContent()).toBe('Sandbox');
    expect(await r.locator('.preview').textContent()).toContain('Thanks for your order.');
    expect(await r.getAttribute('class')).toContain('unread');
    await smtp({ subject: 'From another program', text: 'hello from a script' });
    await row(page, 'From another program').waitFor();
    expect(await row(page, 'From another program').locator('.badge').count()).toBe(0);
    expect(await page.locator('a.row .subject').allTextContents()).toEqual([
      expect.stringContaining('From another program'),
      expect.stringContaining('Your receipt #1042'),
    ]);
    expect(await page.evaluate(() => (window as any).loadedOnce)).toBe(true);
  });

  it('searches with to:, from:, subject: and words, and filters by workspace', async () => {
    await smtp({
      from: 'Alice <alice@example.test>',
      to: 'carol@example.test',
      subject: 'Lunch on Friday',
      text: 'Shall we try the ramen place?',
    });
    await smtp({
      from: 'Dave <dave@example.test>',
      to: 'alice@example.test',
      subject: 'Invoice 77',
      text: 'Payment is due in thirty days.',
    });
    await v1({ to: 'delivered@simulator.test', subject: 'Welcome aboard', text: 'Your account is ready, Alice.' });
    await page.locator('a.row').nth(2).waitFor();

    const shown = () =>
      page.evaluate(() =>
        [...document.querySelectorAll('a.row .subject')].map((e) => e.textContent!.replace('. Subject: ', '')),
      );
    /** Searches from the page; once it shows what the API finds for the same query, what it shows. */
    const search = async (q: string) => {
      await page.getByRole('searchbox', { name: 'Search mail' }).fill(q);
      await page.keyboard.press('Enter');
      await page.waitForURL((url) => url.searchParams.get('q') === q);
      const api = (await caught(`&q=${encodeURIComponent(q)}`)).map((m) => m.subject);
      await page.waitForFunction(
        (want) =>
          JSON.stringify(
            [...document.querySelectorAll('a.row .subject')].map((e) => e.textContent!.replace('. Subject: ', '')),
          ) === want,
        JSON.stringify(api),
      );
      return shown();
    };

    expect(await search('to:alice')).toEqual(['Invoice 77']);
    expect(await search('from:alice')).toEqual(['Lunch on Friday']);
    expect(await search('alice')).toEqual(['Welcome aboard', 'Invoice 77', 'Lunch on Friday']);
    expect(await search('subject:invoice')).toEqual(['Invoice 77']);
    expect(await search('ramen')).toEqual(['Lunch on Friday']);
    expect(await search('"thirty days"')).toEqual(['Invoice 77']);
    expect(await search('nothing matches this')).toEqual([]);
    await page.getByText('No message matches this search.').waitFor();

    await page.getByRole('searchbox', { name: 'Search mail' }).fill('');
    await page.getByLabel('Workspace').selectOption({ label: 'Sandbox' });
    await page.waitForURL((url) => url.searchParams.get('workspace') === s.seed!.workspace_id);
    await page.waitForFunction(() => document.querySelectorAll('a.row').length === 1);
    expect(await page.locator('a.row .subject').allTextContents()).toEqual([expect.stringContaining('Welcome aboard')]);

    // The address keeps the search: reloading shows the same list.
    await page.reload();
    await page.waitForFunction(() => document.querySelectorAll('a.row').length === 1);
    expect(await page.getByLabel('Workspace').inputValue()).toBe(s.seed!.workspace_id);
  });

  it('opens a message: header block, tabs, an iframe that runs no script and loads remote images only when allowed, downloads byte for byte', async () => {
    const beacon = await elsewhere();
    const report = Buffer.from('sku,qty\nA-1,2\nB-7,1\n');
    const blob = randomBytes(4096);
    try {
      const id = await v1({
        to: 'delivered@simulator.test',
        reply_to: ['help@example.test'],
        subject: 'Your order has shipped',
        text: 'Your order is on its way.\nTrack it with the link in the HTML part.',
        html: `<html><head><title>Shipped</title></head><body>
<p id="hello">Your order is <b>on its way</b>.</p>
<p><img id="logo" alt="logo" src="cid:logo@shop"></p>
<p><img id="remote" alt="banner" src="${beacon.origin}/banner.png"></p>
<script>document.body.setAttribute('data-ran', 'yes'); fetch('${beacon.origin}/script-ran');</script>
<img alt="" src="nope" onerror="fetch('${beacon.origin}/handler-ran')">
<p><a id="track" href="https://example.com/track">Track it</a></p></body></html>`,
        attachments: [
          { filename: 'order.csv', content: report.toString('base64'), content_type: 'text/csv' },
          { filename: 'blob.bin', content: blob.toString('base64') },
          { filename: 'logo.png', content: PNG.toString('base64'), content_id: 'logo@shop' },
        ],
      });
      const [m] = await caught();
      await row(page, 'Your order has shipped').click();
      await page.waitForURL(`${s.origin}/messages/${m.id}`);
      const view = page.locator('#view');
      await view.getByRole('heading', { name: 'Your order has shipped' }).waitFor();

      const meta = Object.fromEntries(
        await view
          .locator('dl.meta dt')
          .evaluateAll((dts) => dts.map((dt) => [dt.textContent, dt.nextElementSibling!.textContent])),
      );
      expect(meta).toMatchObject({
        From: '"Shop" <orders@example.test>',
        To: 'delivered@simulator.test',
        'Reply-To': 'help@example.test',
        'Message-ID': expect.stringContaining(id),
        DKIM: 'pass · signed by example.test',
      });
      expect(meta.Date).toMatch(/^\w{3}, \d+ \w{3} \d{4} /);
      expect(meta.Size).toMatch(/KB$/);

      // HTML: sandboxed without scripts; the message's script and handlers never ran.
      const frame = view.locator('iframe');
      expect(await frame.getAttribute('sandbox')).toBe('allow-same-origin allow-popups allow-popups-to-escape-sandbox');
      const doc = page.frameLocator('#view iframe');
      await doc.locator('#hello', { hasText: 'on its way' }).waitFor();
      expect(await doc.locator('body').getAttribute('data-ran')).toBeNull();
      expect(await loadedWidth(doc.locator('#logo'))).toBe(1); // the inline cid: image
      expect(await loadedWidth(doc.locator('#remote'))).toBe(0);
      expect(await doc.locator('base').getAttribute('target')).toBe('_blank'); // links open outside the inbox
      expect(beacon.hits).toEqual([]);
      await shot(page, 'message');

      await view.getByRole('button', { name: 'Load remote images' }).click();
      await page.getByText('Remote images are blocked.').waitFor({ state: 'detached' });
      expect(await loadedWidth(page.frameLocator('#view iframe').locator('#remote'))).toBe(1);
      expect(beacon.hits).toEqual(['/banner.png']);

      // Text, headers (a DKIM signature wraps instead of running off the edge), raw source.
      await view.getByRole('tab', { name: 'Text' }).click();
      expect(await view.getByRole('tabpanel').locator('pre').textContent()).toContain(
        'Your order is on its way.\nTrack it',
      );
      await view.getByRole('tab', { name: 'Text' }).press('ArrowRight');
      expect(await view.getByRole('tab', { name: 'Headers' }).getAttribute('aria-selected')).toBe('true');
      const dkim = view
        .getByRole('row')
        .filter({ has: page.getByRole('rowheader', { name: 'DKIM-Signature' }) })
        .getByRole('cell');
      expect(await dkim.textContent()).toMatch(/d=example\.test/);
      expect(await dkim.evaluate((td) => td.scrollWidth <= td.clientWidth)).toBe(true);
      expect(await scrollsSideways(page)).toBe(false);
      await view.getByRole('tab', { name: 'Raw' }).click();
      await view.locator('pre.raw', { hasText: 'Subject: Your order has shipped' }).waitFor();
      const raw = Buffer.from(
        await (
          await fetch(`${s.origin}/sandbox/messages/${m.id}/raw`, {
            headers: { authorization: `Bearer ${s.adminToken}` },
          })
        ).arrayBuffer(),
      );
      const eml = await download(page, () =>
        view.getByRole('tabpanel').getByRole('link', { name: 'Download .eml' }).click(),
      );
      expect(eml.name).toBe(`${m.id}.eml`);
      expect(eml.bytes.equals(raw)).toBe(true);

      // Attachments, each downloaded byte for byte.
      const attachments = view.getByRole('region', { name: 'Attachments (3)' });
      for (const [name, bytes] of [
        ['order.csv', report],
        ['blob.bin', blob],
        ['logo.png', PNG],
      ] as const) {
        const got = await download(page, () => attachments.getByRole('link', { name }).click());
        expect(got.name).toBe(name);
        expect(got.bytes.equals(bytes), name).toBe(true);
      }

      const elsewhereLinks = view.getByRole('region', { name: 'Elsewhere' });
      expect(await elsewhereLinks.getByRole('link', { name: `GET /v1/emails/${id}` }).getAttribute('href')).toBe(
        `/v1/emails/${id}`,
      );
      await elsewhereLinks.getByText(`svc inbox show ${m.id}`).waitFor();
      expect(beacon.hits.filter((h) => h.includes('ran'))).toEqual([]);
    } finally {
      beacon.server.close();
    }
  });

  it('a message past what the view shows (a 3 MB text) says what is left out and offers the whole source', async () => {
    await smtp({ subject: 'Nightly log', text: `${'a log line of the nightly export\n'.repeat(100_000)}the end\n` });
    await page.getByRole('link', { name: /Nightly log/ }).click();
    const note = page.getByRole('note').filter({ hasText: 'The text is longer than the view shows' });
    await note.waitFor();
    expect(await note.textContent()).toContain('its first 1 MiB is shown. The raw source has all of it.');
    await page.getByRole('tab', { name: 'Text' }).click();
    const text = (await page.getByRole('tabpanel').locator('pre').textContent())!;
    expect(text.startsWith('a log line of the nightly export\n')).toBe(true);
    expect(text).not.toContain('the end');
    await shot(page, 'truncated');
    const eml = await download(page, () => note.getByRole('link', { name: 'Download the raw source (.eml)' }).click());
    expect(eml.bytes.toString()).toContain('the end');
  });

  it("shows a bounce's status badge and timeline, and a status that changes while the message is open", async () => {
    await v1({ to: 'bounce+hard@simulator.test', subject: 'Hard bounce', text: 'x' });
    const r = row(page, 'Hard bounce');
    await r.locator('.badge', { hasText: 'bounced' }).waitFor();
    await r.click();
    const timeline = page.getByRole('region', { name: 'Events' });
    await timeline.locator('li').nth(2).waitFor();
    expect(await timeline.locator('li strong').allTextContents()).toEqual([
      'email.queued',
      'email.sent',
      'email.bounced',
    ]);
    const bounced = await timeline.locator('li[data-type="email.bounced"] .detail').textContent();
    expect(bounced).toContain('to: bounce+hard@simulator.test');
    expect(bounced).toContain('smtp_code: 550');
    expect(bounced).not.toMatch(/[[\]{}"]/); // words, not JSON
    expect(await page.locator('#meta .badge').textContent()).toBe('bounced');

    // A soft bounce is deferred first and bounces when the clock has moved on: the page follows without a reload.
    await v1({ to: 'softbounce@simulator.test', subject: 'Soft bounce', text: 'x' });
    await row(page, 'Soft bounce').click();
    await page.getByRole('heading', { name: 'Soft bounce' }).waitFor();
    await timeline.locator('li[data-type="email.deferred"]').waitFor();
    await page.getByRole('button', { name: '+1 h' }).click();
    await timeline.locator('li[data-type="email.bounced"]').waitFor();
    await page.locator('#meta .badge', { hasText: 'bounced' }).waitFor();
    await row(page, 'Soft bounce').locator('.badge', { hasText: 'bounced' }).waitFor();
  });

  it('moves the manual clock from the page, and a scheduled message arrives', async () => {
    const before = Date.parse((await s.admin('GET', '/sandbox/clock')).body.now);
    const clock = page.getByRole('complementary', { name: 'Sandbox' });
    await clock.getByText('manual').waitFor();
    await v1({
      to: 'delivered@simulator.test',
      subject: 'Reminder for tomorrow',
      text: 'x',
      scheduled_at: new Date(before + 20 * 3600_000).toISOString(),
    });
    expect(await caught()).toEqual([]);
    await clock.getByRole('button', { name: '+1 day' }).click();
    await row(page, 'Reminder for tomorrow').waitFor();
    await page.getByText(/Clock moved to .*; \d+ jobs? ran\./).waitFor();
    const shown = await clock.locator('time').getAttribute('datetime');
    expect(Date.parse(shown!)).toBe(before + 86_400_000);
    for (const [name, seconds] of [
      ['+30 s', 30],
      ['+1 h', 3600],
    ] as const) {
      await clock.getByRole('button', { name }).click();
      await page.waitForFunction(
        (t) => document.querySelector<HTMLTimeElement>('#clock-now')!.dateTime === t,
        new Date(Date.parse(shown!) + seconds * 1000 + (name === '+1 h' ? 30_000 : 0)).toISOString(),
      );
    }
    expect(Date.parse((await s.admin('GET', '/sandbox/clock')).body.now)).toBe(before + 86_400_000 + 3_630_000);
    await shot(page.locator('.panels'), 'panels');
  });

  it('pages 50 at a time by cursor, older and newer, and keeps the page in the address', async () => {
    const t = nodemailer.createTransport({
      host: '127.0.0.1',
      port: s.smtpPort,
      secure: false,
      ignoreTLS: true,
      pool: true,
    });
    try {
      for (let n = 1; n <= 55; n++)
        await t.sendMail({ from: 'a@example.test', to: 'b@example.test', subject: `Page test ${n}`, text: `n${n}` });
    } finally {
      t.close();
    }
    const subjects = () =>
      page.evaluate(() =>
        [...document.querySelectorAll('a.row .subject')].map((e) => e.textContent!.replace('. Subject: ', '')),
      );
    await row(page, 'Page test 55').waitFor();
    await page.waitForFunction(() => document.querySelectorAll('a.row').length === 50);
    expect((await subjects())[49]).toBe('Page test 6');
    const older = page.getByRole('button', { name: 'Older →' });
    const newer = page.getByRole('button', { name: '← Newer' });
    expect(await newer.isDisabled()).toBe(true);
    await older.click();
    await page.waitForFunction(() => document.querySelectorAll('a.row').length === 5);
    expect(await subjects()).toEqual(['Page test 5', 'Page test 4', 'Page test 3', 'Page test 2', 'Page test 1']);
    expect(new URL(page.url()).searchParams.get('after')).toBe(
      (await caught()).find((m) => m.subject === 'Page test 6')!.id,
    );
    expect(await older.isDisabled()).toBe(true);
    // New mail while on an older page is announced, not mixed in.
    await smtp({ subject: 'Arrived meanwhile' });
    await page.getByText('1 new message.').waitFor();
    expect(await subjects()).toHaveLength(5);
    await newer.click();
    await page.waitForFunction(() => document.querySelectorAll('a.row').length === 50);
    expect((await subjects())[0]).toBe('Arrived meanwhile');
    expect(new URL(page.url()).searchParams.get('after')).toBeNull();
  });

  it('keyboard: j and k move through the list, Enter opens and marks read, Delete deletes', async () => {
    for (const n of [1, 2, 3]) await smtp({ subject: `Note ${n}`, text: `note number ${n}` });
    await page.locator('a.row').nth(2).waitFor();
    const focused = () =>
      page.evaluate(() =>
        document.activeElement?.closest('a.row')?.querySelector('.subject')?.textContent?.replace('. Subject: ', ''),
      );
    await page.keyboard.press('j');
    expect(await focused()).toBe('Note 3');
    await page.keyboard.press('j');
    await page.keyboard.press('j');
    expect(await focused()).toBe('Note 1');
    await page.keyboard.press('k');
    expect(await focused()).toBe('Note 2');
    expect(await page.evaluate(() => getComputedStyle(document.activeElement!).outlineStyle)).not.toBe('none');

    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Note 2' }).waitFor();
    await page.waitForFunction(() => !document.querySelector('a.row[aria-current=true]')?.classList.contains('unread'));
    expect((await caught()).map((m) => [m.subject, m.read])).toEqual([
      ['Note 3', false],
      ['Note 2', true],
      ['Note 1', false],
    ]);
    await page.getByRole('button', { name: 'Mark unread' }).click();
    await page.waitForFunction(() => document.querySelector('a.row[aria-current=true]')?.classList.contains('unread'));
    expect((await caught()).map((m) => m.read)).toEqual([false, false, false]);

    await row(page, 'Note 3').focus();
    await page.keyboard.press('Delete');
    await page.waitForFunction(() => document.querySelectorAll('a.row').length === 2);
    expect(await focused()).toBe('Note 2'); // focus moves to the next message
    expect((await caught()).map((m) => m.subject)).toEqual(['Note 2', 'Note 1']);
  });

  it('deletes one message, then all of them after a confirmation; another tab follows', async () => {
    await smtp({ subject: 'First' });
    await smtp({ subject: 'Second' });
    await smtp({ subject: 'Third' });
    const other = await session.context.newPage();
    await other.goto(s.origin);
    await row(other, 'First').waitFor();
    await page.bringToFront(); // a tab in the background gets its frames throttled
    await row(page, 'First').waitFor();

    await row(page, 'Second').click();
    await page.getByRole('heading', { name: 'Second' }).waitFor();
    await page.locator('#view').getByRole('button', { name: 'Delete' }).click();
    await page.getByText('Select a message to read it.').waitFor();
    expect(page.url()).toBe(`${s.origin}/`);
    await row(other, 'Second').waitFor({ state: 'detached' });
    expect((await caught()).map((m) => m.subject)).toEqual(['Third', 'First']);

    const dialog = page.getByRole('dialog', { name: 'Delete all messages?' });
    await page.getByRole('button', { name: 'Delete all…' }).click();
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    await dialog.waitFor({ state: 'hidden' });
    expect(await caught()).toHaveLength(2);
    await page.getByRole('button', { name: 'Delete all…' }).click();
    await dialog.getByRole('button', { name: 'Delete all' }).click();
    await page.getByText('No mail caught yet').waitFor();
    await other.getByText('No mail caught yet').waitFor();
    expect(await caught()).toEqual([]);
  });

  it('a link or a remote image of a caught message takes nothing of svc to another port, and what it took opens nothing', async () => {
    const listener = await elsewhere('<!doctype html><title>Elsewhere</title><p>landed</p>');
    try {
      await v1({
        to: 'ada@example.org',
        subject: 'Click me',
        html: `<p><img id="remote" alt="banner" src="${listener.origin}/banner.png"></p><p><a id="go" href="${listener.origin}/?from=mail">Open</a></p>`,
        tracking: { clicks: false },
      });
      await row(page, 'Click me').click();
      const view = page.getByRole('region', { name: 'Message' });
      await view.getByRole('button', { name: 'Load remote images' }).click();
      const frame = page.frameLocator('#view iframe');
      expect(await loadedWidth(frame.locator('#remote'))).toBe(1);
      const [opened] = await Promise.all([session.context.waitForEvent('page'), frame.locator('#go').click()]);
      await opened.getByText('landed').waitFor();
      await opened.close();

      expect(listener.seen.map((h) => h.url)).toEqual(expect.arrayContaining(['/banner.png', '/?from=mail']));
      for (const hit of listener.seen) {
        expect(hit.headers.cookie, `${hit.url} came with a cookie`).toBeUndefined();
        expect(hit.headers.authorization).toBeUndefined();
        // What the message asked for says nothing of where it was read (the landed page's own requests name it).
        if (!String(hit.headers.referer ?? '').startsWith(listener.origin))
          expect(hit.headers.referer, `${hit.url} came with a referrer`).toBeUndefined();
      }
      // Replayed from elsewhere, with every header it was sent and those of a page of svc's own origin, it opens
      // nothing: the page itself shows no key, no workspace and no mail, and no sandbox route answers.
      const [hit] = listener.seen;
      const replay = { ...(hit!.headers as Record<string, string>), host: new URL(s.origin).host };
      const asPage = { ...replay, 'sec-fetch-site': 'same-origin', origin: s.origin };
      const shell = await fetch(`${s.origin}/`, { headers: replay });
      const text = await shell.text();
      expect(text).not.toContain(s.seed!.api_key_test);
      expect(text).not.toContain(s.seed!.workspace_id);
      expect(text).not.toContain('Click me');
      for (const path of ['/sandbox/messages', '/sandbox/clock', '/sandbox/stream', '/inbox/session']) {
        expect((await fetch(`${s.origin}${path}`, { headers: asPage })).status, path).toBe(401);
      }
      const moved = await fetch(`${s.origin}/sandbox/clock`, {
        method: 'POST',
        headers: { ...asPage, 'content-type': 'application/json' },
        body: '{"advance_seconds":3600}',
      });
      expect(moved.status).toBe(401);
    } finally {
      listener.server.close();
    }
  });

  it("another site on this host can neither read nor change anything, nor find the page's session", async () => {
    await smtp({ subject: 'Private' });
    const before = (await s.admin('GET', '/sandbox/clock')).body.now;
    const attacker = await elsewhere(`<!doctype html><script>
      const target = ${JSON.stringify(s.origin)};
      window.stored = localStorage.length + sessionStorage.length;
      window.results = Promise.all([
        fetch(target + '/sandbox/messages', { method: 'DELETE', credentials: 'include' }).catch(() => null),
        fetch(target + '/sandbox/clock', { method: 'POST', credentials: 'include', mode: 'no-cors', headers: { 'Content-Type': 'text/plain' },
          body: '{"advance_seconds":3600}' }).catch(() => null),
        fetch(target + '/sandbox/messages', { credentials: 'include' }).then((r) => r.text(), (e) => 'blocked: ' + e.message),
      ]).then((r) => r.map(String));
    </script><form id="f" method="POST" action="${s.origin}/sandbox/clock" enctype="text/plain"><input name='{"advance_seconds":60,"x":"' value='"}'></form>`);
    try {
      const p = await session.context.newPage();
      await p.goto(attacker.origin);
      const results = await p.evaluate(() => (window as any).results as Promise<string[]>);
      expect(results[2]).toMatch(/^blocked/); // no CORS: the response is not readable
      expect(await p.evaluate(() => (window as any).stored)).toBe(0);
      await Promise.all([
        p.waitForURL(`${s.origin}/sandbox/clock`),
        p.evaluate(() => (document.getElementById('f') as HTMLFormElement).submit()),
      ]);
      expect(await p.content()).toContain('missing_credentials');
      expect((await caught()).map((m) => m.subject)).toEqual(['Private']);
      expect((await s.admin('GET', '/sandbox/clock')).body.now).toBe(before);
    } finally {
      attacker.server.close();
    }
  });

  it('with a real clock the panel shows the time and offers no moves', async () => {
    const real = await startTestServer({ clock: 'real' });
    const other = await signIn(browser, real);
    try {
      const panel = other.page.getByRole('complementary', { name: 'Sandbox' });
      await panel.getByText('real time').waitFor();
      const shown = Date.parse((await panel.locator('time').getAttribute('datetime'))!);
      expect(Math.abs(shown - Date.now())).toBeLessThan(60_000);
      expect(await panel.getByRole('button').count()).toBe(0);
      expect(other.errors).toEqual([]);
    } finally {
      await other.context.close();
      await real.close();
    }
  });

  it('reads from 360 px wide to a wide screen, with labels, landmarks, focus order and contrast', async () => {
    await v1({
      to: 'delivered@simulator.test',
      subject: 'A subject long enough to need more than one line on a narrow phone screen',
      text: 'x'.repeat(300),
      html: '<p>Narrow</p>',
    });
    await v1({ to: 'bounce+narrow@simulator.test', subject: 'Bounced one', text: 'y' });
    await smtp({ subject: 'Plain', text: 'z', attachments: [{ filename: 'a.txt', content: 'a' }] });
    await page.locator('a.row').nth(2).waitFor();

    // Landmarks and labels.
    for (const [role, name] of [
      ['banner', undefined],
      ['search', undefined],
      ['main', undefined],
      ['complementary', 'Sandbox'],
      ['navigation', 'Pages'],
    ] as const) {
      expect(await page.getByRole(role, name ? { name } : {}).count(), role).toBe(1);
    }
    await page.getByRole('searchbox', { name: 'Search mail' }).waitFor();
    await page.getByRole('combobox', { name: 'Workspace' }).waitFor();
    await page.getByRole('list', { name: 'Messages' }).waitFor();

    // Focus order: skip link, search, its operators, workspace, search button, theme, the clock's buttons, delete
    // all, the messages.
    const stops: string[] = [];
    for (let i = 0; i < 11; i++) {
      await page.keyboard.press('Tab');
      stops.push(
        await page
          .evaluate(() => {
            const a = document.activeElement as HTMLElement;
            return a.matches('a.row') ? 'row' : (a.getAttribute('aria-label') ?? a.id ?? '');
          })
          .then(
            async (id) =>
              id || (await page.evaluate(() => (document.activeElement as HTMLElement).textContent!.trim())),
          ),
      );
    }
    expect(stops).toEqual([
      'Skip to the messages',
      'q',
      'Search operators',
      'workspace',
      'Search',
      'theme',
      '+30 s',
      '+1 h',
      '+1 day',
      'delete-all',
      'row',
    ]);
    expect(await lowContrast(page)).toEqual([]);
    await shot(page, 'list');

    await page.setViewportSize({ width: 360, height: 780 });
    expect(await scrollsSideways(page)).toBe(false);
    await shot(page, 'list-360');
    await row(page, 'Bounced one').click();
    await page.getByRole('heading', { name: 'Bounced one' }).waitFor();
    await page.getByRole('tab', { name: 'Headers' }).click();
    expect(await page.getByRole('list', { name: 'Messages' }).isVisible()).toBe(false); // one column: the message alone
    expect(await scrollsSideways(page)).toBe(false);
    expect(await lowContrast(page)).toEqual([]);
    await shot(page, 'message-360');
    await page.getByRole('button', { name: '← Messages' }).click();
    await page.getByRole('list', { name: 'Messages' }).waitFor();
    expect(page.url()).toBe(`${s.origin}/`);

    await page.setViewportSize({ width: 1920, height: 1000 });
    expect(await scrollsSideways(page)).toBe(false);
    await row(page, 'Bounced one').click();
    await page.getByRole('heading', { name: 'Bounced one' }).waitFor();
    expect(await lowContrast(page)).toEqual([]);
  });
});
