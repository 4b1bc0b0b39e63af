// The inbox page around the mail, in a real browser (Debian's Chromium through playwright-core) against the real
// server, 1280 and 390 px wide: the list's rows as a mail client shows them, the light and dark themes (the system's
// or the reader's choice, kept), signing in with the token pasted into the page, the unread count in the title, a
// search the server does not understand and the operators it does, and what a message's details say of waits and
// workspaces.
import nodemailer from 'nodemailer';
import type Mail from 'nodemailer/lib/mailer/index.js';
import type { Browser, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { launch, lowContrast, row, scrollsSideways, shot, signIn, type Session } from './browser.js';

const WIDTHS = [
  [1280, 900],
  [390, 844],
] as const;

/** The page's own background, as the browser computed it. */
const background = (page: Page) => page.evaluate(() => getComputedStyle(document.documentElement).backgroundColor);
const LIGHT_BG = 'rgb(245, 246, 248)';
const DARK_BG = 'rgb(14, 19, 26)';

describe('the inbox page around the mail', { timeout: 60_000 }, () => {
  let s: TestServer;
  let browser: Browser;
  let session: Session | undefined;

  const v1 = async (body: Record<string, unknown>) => {
    const r = await s.call('POST', '/v1/emails', {
      token: s.seed!.api_key_test,
      body: { from: 'Shop <orders@example.test>', to: 'delivered@simulator.test', ...body },
    });
    expect(r.status, r.text).toBe(202);
    await s.settle();
  };
  const smtp = async (mail: Mail.Options) => {
    const t = nodemailer.createTransport({ host: '127.0.0.1', port: s.smtpPort, secure: false, ignoreTLS: true });
    try {
      await t.sendMail({ from: 'Alice <alice@example.test>', to: 'bob@example.test', text: 'hi', ...mail });
    } finally {
      t.close();
    }
  };
  const caught = async () => (await s.admin('GET', '/sandbox/messages?limit=100')).body.data as any[];

  beforeAll(async () => {
    [s, browser] = await Promise.all([startTestServer(), launch()]);
  });
  afterAll(async () => {
    await browser?.close();
    await s?.close();
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
    it(`${width} px: a row shows the sender and recipients, the time, the whole subject, the start of the text, the tags as pills and the size`, async () => {
      const subject = 'Your receipt #1042 from Example Shop: thank you for your order';
      await v1({
        to: ['delivered@simulator.test', 'ada@example.org'],
        subject,
        text: 'Thanks for your order! Your receipt is below, and your parcel is on its way to you.',
        tags: [
          { name: 'category', value: 'receipt' },
          { name: 'plan', value: 'pro' },
        ],
        attachments: [{ filename: 'receipt.txt', content: Buffer.from('receipt').toString('base64') }],
      });
      await smtp({ subject: 'Lunch?', text: 'Ramen at noon?' });
      session = await signIn(browser, s, { width, height });
      const { page } = session;
      const r = row(page, subject);
      await r.waitFor();

      expect(await r.locator('.from').textContent()).toBe('Shop');
      expect(await r.locator('.to').textContent()).toBe(' to delivered@simulator.test, ada@example.org');
      expect(await r.locator('.when').textContent()).toBe('just now');
      expect(await r.locator('.subject').textContent()).toBe(`. Subject: ${subject}`);
      expect(await r.locator('.preview').textContent()).toContain('Thanks for your order! Your receipt is below');
      expect(await r.locator('.tag-pill').allTextContents()).toEqual(['category: receipt', 'plan: pro']);
      expect(await r.locator('.badge').textContent()).toBe('delivered');
      expect(await r.locator('.ws').textContent()).toBe('Sandbox');
      expect(await r.locator('.size').textContent()).toMatch(/^\. \d+(\.\d)? KB$/);
      expect(await r.getByTitle('Has attachments').count()).toBe(1);
      // Mail from another program: no status, workspace or tags, and its size.
      const plain = row(page, 'Lunch?');
      expect(await plain.locator('.badge, .pill').count()).toBe(0);
      expect(await plain.locator('.size').textContent()).toMatch(/B$/);

      // The subject is shown whole (on up to two lines): nothing is cut off or hidden.
      const subjectBox = await r
        .locator('.subject')
        .evaluate((e) => ({ cut: e.scrollHeight > e.clientHeight + 1 || e.scrollWidth > e.clientWidth }));
      expect(subjectBox.cut).toBe(false);
      // Sender and time on the first line, then the subject and size, then the text, then the pills.
      const box = async (sel: string) => (await r.locator(sel).first().boundingBox())!;
      const [who, when, subj, sz, preview, facts] = await Promise.all(
        ['.who', '.when', '.subject', '.size', '.preview', '.facts'].map(box),
      );
      expect(Math.abs(who!.y - when!.y)).toBeLessThan(6);
      expect(Math.abs(subj!.y - sz!.y)).toBeLessThan(6);
      expect(subj!.y).toBeGreaterThanOrEqual(who!.y + who!.height - 1);
      expect(preview!.y).toBeGreaterThanOrEqual(subj!.y + subj!.height - 1);
      expect(facts!.y).toBeGreaterThanOrEqual(preview!.y + preview!.height - 1);
      expect(await scrollsSideways(page)).toBe(false);
      await shot(page, `rows-${width}`);
    });
  }

  for (const [width, height] of WIDTHS) {
    it(`${width} px: follows the system's light or dark theme; a theme chosen with the switch is kept; both read clearly`, async () => {
      await v1({
        to: 'block@simulator.test',
        subject: 'Bounced receipt',
        text: 'x',
        tags: [{ name: 'k', value: 'v' }],
      });
      await v1({ subject: 'Themed', html: '<p>Hello</p>', text: 'Hello https://example.com/a' });
      session = await signIn(browser, s, { width, height }, { colorScheme: 'light' });
      const { page, context } = session;
      const theme = page.getByRole('combobox', { name: 'Theme' });
      await row(page, 'Themed').waitFor();
      expect(await theme.inputValue()).toBe('system');
      expect(await background(page)).toBe(LIGHT_BG);
      await page.emulateMedia({ colorScheme: 'dark' });
      expect(await background(page)).toBe(DARK_BG);

      // Dark, the list and an open message (its HTML, its headers) keep their contrast.
      expect(await lowContrast(page)).toEqual([]);
      await row(page, 'Themed').click();
      await page.getByRole('heading', { name: 'Themed' }).waitFor();
      await page.frameLocator('#view iframe').getByText('Hello').waitFor();
      expect(await lowContrast(page)).toEqual([]);
      await shot(page, `dark-message-${width}`);
      await page.getByRole('tab', { name: 'Headers' }).click();
      await page.getByRole('table', { name: 'Header fields, in order' }).waitFor();
      expect(await lowContrast(page)).toEqual([]);
      await page.getByRole('tab', { name: 'HTML source' }).click();
      await page.getByRole('region', { name: 'HTML source' }).waitFor();
      expect(await lowContrast(page)).toEqual([]);
      if (width === 390) await page.getByRole('button', { name: '← Messages' }).click();
      await row(page, 'Bounced receipt').waitFor();
      expect(await lowContrast(page)).toEqual([]);

      // Chosen dark on a light system: kept through a reload, in a cookie of its own the script may read.
      await page.emulateMedia({ colorScheme: 'light' });
      await theme.selectOption('dark');
      expect(await background(page)).toBe(DARK_BG);
      await page.reload();
      await page.locator('#live', { hasText: 'Live' }).waitFor();
      expect(await background(page)).toBe(DARK_BG);
      expect(await theme.inputValue()).toBe('dark');
      expect((await context.cookies()).find((c) => c.name === 'svc_theme')).toMatchObject({
        value: 'dark',
        httpOnly: false,
        sameSite: 'Strict',
      });
      // Chosen light on a dark system; then the system's again.
      await page.emulateMedia({ colorScheme: 'dark' });
      await theme.selectOption('light');
      expect(await background(page)).toBe(LIGHT_BG);
      expect(await lowContrast(page)).toEqual([]);
      await theme.selectOption('system');
      expect(await background(page)).toBe(DARK_BG);
      expect((await context.cookies()).find((c) => c.name === 'svc_theme')).toBeUndefined();
      expect(await scrollsSideways(page)).toBe(false);
    });
  }

  it('opened without its token, says where the token is and signs in with one pasted in, where it was going', async () => {
    await smtp({ subject: 'Waiting for you' });
    const [m] = await caught();
    const context = await browser.newContext({ viewport: { width: 390, height: 844 } });
    const page = await context.newPage();
    const errors: string[] = [];
    page.on('pageerror', (err) => errors.push(err.message));
    try {
      await page.goto(`${s.origin}/messages/${m.id}`);
      await page.waitForURL(`${s.origin}/sign-in?next=${encodeURIComponent(`/messages/${m.id}`)}`);
      const text = (await page.locator('main').textContent())!.replace(/\s+/g, ' ');
      expect(text).toContain('the inbox address of the server');
      expect(text).toContain('ready line');
      expect(text).toContain('Inbox row of its summary');
      expect(text).toContain('admin-token file');
      expect(await scrollsSideways(page)).toBe(false);
      await shot(page, 'sign-in-390');

      const field = page.getByRole('textbox', { name: 'Admin token' });
      expect(await field.getAttribute('type')).toBe('password');
      await field.fill(`${s.adminToken}x`);
      const [wrong] = await Promise.all([page.waitForNavigation(), field.press('Enter')]);
      expect(wrong!.status()).toBe(401);
      await page.getByRole('alert').getByText("That is not this server's admin token").waitFor();
      expect(await context.cookies()).toEqual([]);

      await page.getByRole('textbox', { name: 'Admin token' }).fill(` ${s.adminToken} `);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByRole('heading', { name: 'Waiting for you' }).waitFor();
      expect(page.url()).toBe(`${s.origin}/messages/${m.id}`);
      expect(await context.cookies()).toEqual([]);
      const [kept] = await page.evaluate(() => Object.values(localStorage));
      expect(kept).toMatch(/^ses_/);
      expect(kept).not.toContain(s.adminToken);
      await page.locator('#live', { hasText: 'Live' }).waitFor();
      expect(errors).toEqual([]);
    } finally {
      await context.close();
    }
    // The form takes a form, nothing else, and nothing large: no session comes of anything else.
    const json = await fetch(`${s.origin}/sign-in`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ token: s.adminToken }),
    });
    expect(json.status).toBe(400);
    expect(json.headers.get('location')).toBeNull();
    const big = await fetch(`${s.origin}/sign-in`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: `token=${s.adminToken}&pad=${'x'.repeat(5000)}`,
    });
    expect(big.status).toBe(400);
    expect(big.headers.get('location')).toBeNull();
  });

  it("counts unread mail in the window's title: mail arriving, read, marked unread and deleted", async () => {
    await smtp({ subject: 'One' });
    await smtp({ subject: 'Two' });
    session = await signIn(browser, s, { width: 1280, height: 900 });
    const { page } = session;
    const title = (t: string) => page.waitForFunction((want) => document.title === want, t);
    await title('(2) svc inbox');
    await smtp({ subject: 'Three' });
    await title('(3) svc inbox');
    await row(page, 'Two').click();
    await title('(2) svc inbox');
    await page.getByRole('button', { name: 'Mark unread' }).click();
    await title('(3) svc inbox');
    await page.locator('#view').getByRole('button', { name: 'Delete' }).click();
    await title('(2) svc inbox');
    // Read elsewhere (another program, another tab): the title follows.
    const one = (await caught()).find((m) => m.subject === 'One');
    expect((await s.admin('POST', `/sandbox/messages/${one.id}/read`)).status).toBe(200);
    await title('(1) svc inbox');
    await page.getByRole('button', { name: 'Delete all…' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Delete all' }).click();
    await title('svc inbox');
  });
  for (const [width, height] of WIDTHS) {
    it(`${width} px: a search the server does not understand is said under the box; the operators are a click away`, async () => {
      await v1({ subject: 'Pro plan receipt', text: 'x', tags: [{ name: 'plan', value: 'pro' }] });
      await smtp({ subject: 'Lunch?' });
      session = await signIn(browser, s, { width, height }, { colorScheme: 'dark' });
      const { page } = session;
      const box = page.getByRole('searchbox', { name: 'Search mail' });
      const problem = page.locator('#search-problem');
      await row(page, 'Lunch?').waitFor();

      await box.fill('label:work');
      await box.press('Enter');
      await problem.waitFor();
      const said = (await problem.textContent())!;
      expect(said).toMatch(/^This search is not understood: "label:" is no search operator; the operators are from:, /);
      expect(said).toContain('tag:');
      expect(said).toContain('put it in quotes');
      expect(await problem.getAttribute('role')).toBe('alert');
      expect(await box.getAttribute('aria-invalid')).toBe('true');
      // Nothing matches; the list is not said to have failed.
      await page.getByText('No message matches this search.').waitFor();
      expect(await page.locator('a.row').count()).toBe(0);
      expect(await page.getByText('could not be loaded').count()).toBe(0);
      expect(await page.locator('#note').textContent()).toBe('');
      expect(await scrollsSideways(page)).toBe(false);
      expect(await lowContrast(page)).toEqual([]);
      await shot(page, `search-mistake-${width}`);

      // The operators: listed under their button, inside the window; a click writes one into the box.
      await page.getByRole('button', { name: 'Search operators' }).click();
      const ops = page.locator('#search-ops');
      await ops.waitFor();
      const at = (await ops.boundingBox())!;
      expect(at.x).toBeGreaterThanOrEqual(0);
      expect(at.x + at.width).toBeLessThanOrEqual(width);
      const examples = await ops.getByRole('button').allTextContents();
      for (const op of [
        'tag:plan=pro',
        'status:bounced',
        'after:2026-05-01',
        'cc:billing',
        'larger:100KB',
        'is:unread',
        '-from:noreply',
      ])
        expect(examples).toContain(op);
      expect(await lowContrast(page)).toEqual([]);
      await shot(page, `search-operators-${width}`);
      await box.fill('');
      await ops.getByRole('button', { name: 'tag:plan=pro' }).click();
      expect(await ops.isVisible()).toBe(false);
      expect(await box.inputValue()).toBe('tag:plan=pro');
      expect(await page.evaluate(() => document.activeElement?.id)).toBe('q');
      await box.press('Enter');
      await page.waitForURL((url) => url.searchParams.get('q') === 'tag:plan=pro');
      await row(page, 'Pro plan receipt').waitFor();
      expect(await page.locator('a.row').count()).toBe(1);
      expect(await problem.isHidden()).toBe(true);
      expect(await box.getAttribute('aria-invalid')).toBeNull();
    });
  }

  it("says in a message's details that a wait returned it, and the workspace of mail caught with a key; the list says neither", async () => {
    await smtp({ subject: 'Taken by a test' });
    await smtp({ subject: 'Left alone' });
    // A program that logs in to the sink with an API key: its mail is filed under that key's workspace.
    const t = nodemailer.createTransport({
      host: '127.0.0.1',
      port: s.smtpPort,
      secure: false,
      ignoreTLS: true,
      auth: { user: 'app', pass: s.seed!.api_key_test },
    });
    try {
      await t.sendMail({ from: 'app@example.test', to: 'bob@example.test', subject: 'From the app', text: 'x' });
    } finally {
      t.close();
    }
    const waited = (await caught()).find((m) => m.subject === 'Taken by a test');
    expect((await s.admin('POST', `/sandbox/messages/${waited.id}/claim`)).body.taken).toBe(true);
    session = await signIn(browser, s, { width: 390, height: 844 });
    const { page } = session;
    const meta = async () =>
      Object.fromEntries(
        await page
          .locator('#view dl.meta dt')
          .evaluateAll((dts) => dts.map((dt) => [dt.textContent, dt.nextElementSibling!.textContent])),
      );
    const open = async (subject: string) => {
      const back = page.getByRole('button', { name: '← Messages' });
      if (await back.isVisible()) await back.click();
      await row(page, subject).click();
      await page.locator('#view').getByRole('heading', { name: subject }).waitFor();
    };

    await row(page, 'Taken by a test').waitFor();
    expect(await page.locator('#rows').textContent()).not.toMatch(/returned|claimed/i);
    await open('Taken by a test');
    expect((await meta()).Wait).toBe('returned to a wait for mail; later waits skip it');
    expect(await lowContrast(page)).toEqual([]);
    await open('Left alone');
    expect(await meta()).not.toHaveProperty('Wait');
    expect(await meta()).not.toHaveProperty('Workspace');
    await open('From the app');
    expect((await meta()).Workspace).toBe('Sandbox');
    expect(await meta()).not.toHaveProperty('Status');
  });
});
