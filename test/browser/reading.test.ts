// Reading a message on the inbox page, in a real browser (Debian's Chromium through playwright-core) against the real
// server, 1280 and 390 px wide: the HTML at a phone's, a tablet's and the panel's width, as tall as the message; its
// own dark styles and the inversion some clients force; its source coloured with line numbers; links in the text;
// header fields that wrap; image attachments as thumbnails; event recipients as addresses.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { colourOf, download, launch, row, scrollsSideways, shot, signIn, solidPng, type Session } from './browser.js';

const RED = solidPng(40, 40, [220, 20, 20]);

/** Close to a colour: screenshots are exact, but filters may round a unit or two. */
const near = (got: number[], want: number[], by = 12) => got.every((v, i) => Math.abs(v - want[i]!) <= by);

/** A server that counts what is asked of it (what a message's script or image would fetch). */
async function beacon(): Promise<{ origin: string; hits: string[]; server: Server }> {
  const hits: string[] = [];
  const server = createServer((req, res) => {
    hits.push(req.url!);
    res.writeHead(204).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, hits, server };
}

/** The open message's frame: its width, its height and the height of the document in it. */
const frameState = (page: Page) =>
  page.evaluate(() => {
    const frame = document.querySelector<HTMLIFrameElement>('#view iframe')!;
    const root = frame.contentDocument!.documentElement;
    return {
      width: Math.round(frame.getBoundingClientRect().width),
      height: frame.clientHeight,
      content: root.scrollHeight,
      viewport: root.clientHeight,
      stage: frame.parentElement!.clientWidth,
    };
  });

/** Waits until the open message's frame has loaded and is as tall as its document (more than `min` px). */
const fitted = (page: Page, min: number) =>
  page.waitForFunction((least) => {
    const frame = document.querySelector<HTMLIFrameElement>('#view iframe');
    const doc = frame?.contentDocument;
    if (!frame || !doc || doc.readyState !== 'complete' || doc.URL === 'about:blank') return false;
    return frame.clientHeight === doc.documentElement.scrollHeight && frame.clientHeight > least;
  }, min);

describe('reading a message on the inbox page', { timeout: 60_000 }, () => {
  let s: TestServer;
  let browser: Browser;
  let session: Session;
  let page: Page;

  const v1 = async (body: Record<string, unknown>) => {
    const r = await s.call('POST', '/v1/emails', {
      token: s.seed!.api_key_test,
      body: { from: 'Shop <orders@example.test>', to: 'delivered@simulator.test', ...body },
    });
    expect(r.status, r.text).toBe(202);
    await s.settle();
    return r.body.id as string;
  };
  const caughtId = async (subject: string) =>
    ((await s.admin('GET', '/sandbox/messages?limit=100')).body.data as any[]).find((m) => m.subject === subject)!
      .id as string;
  const open = async (subject: string) => {
    await row(page, subject).click();
    await page.locator('#view').getByRole('heading', { name: subject }).waitFor();
  };

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
    session = undefined as unknown as Session; // a test that fails before signing in leaves none to close
    if (!was) return;
    await was.context.close();
    expect(was.errors).toEqual([]);
  });

  for (const [width, height] of [
    [1280, 900],
    [390, 844],
  ] as const) {
    it(`${width} px: shows the HTML 375 px, 768 px or the panel wide, as tall as the message, without a scrollbar of its own`, async () => {
      await v1({
        subject: 'A tall newsletter',
        html: `<!doctype html><html><head><style>body{margin:0;font:16px/20px sans-serif}#top{height:700px;background:#eee}</style></head>
<body><div id="top"></div><p id="words">${'words that wrap '.repeat(150)}</p>
<script>document.body.dataset.ran = 'yes'</script></body></html>`,
      });
      session = await signIn(browser, s, { width, height });
      page = session.page;
      await open('A tall newsletter');
      const view = page.locator('#view');
      // Sandboxed with no scripts: the message's own did not run.
      expect(await view.locator('iframe').getAttribute('sandbox')).not.toContain('allow-scripts');

      await fitted(page, 700);
      const full = await frameState(page);
      expect(full.width).toBe(full.stage); // the panel's width
      expect(full.height).toBe(full.content); // the whole message, no scrollbar inside
      expect(full.content).toBeLessThanOrEqual(full.viewport);
      expect(await page.frameLocator('#view iframe').locator('body').getAttribute('data-ran')).toBeNull();

      const widths = view.getByRole('group', { name: 'Preview width' });
      const heights: Record<string, number> = {};
      for (const [name, px] of [
        ['Phone', 375],
        ['Tablet', 768],
      ] as const) {
        await widths.getByRole('button', { name }).click();
        expect(await widths.getByRole('button', { name }).getAttribute('aria-pressed')).toBe('true');
        await page.waitForFunction(
          (want) => Math.round(document.querySelector('#view iframe')!.getBoundingClientRect().width) === want,
          px,
        );
        await fitted(page, 700);
        const f = await frameState(page);
        expect(f.height).toBe(f.content);
        heights[name] = f.height;
        // Wider than the panel: the preview scrolls sideways inside itself, the page does not.
        expect(await scrollsSideways(page)).toBe(false);
      }
      // Narrower, the words wrap onto more lines: the frame grew with them.
      expect(heights.Phone).toBeGreaterThan(heights.Tablet!);
      await widths.getByRole('button', { name: 'Full' }).click();
      await page.waitForFunction(
        (want) => document.querySelector<HTMLIFrameElement>('#view iframe')!.clientHeight === want,
        full.height,
      );
      await shot(page, `preview-${width}`);
    });
  }

  it('keeps the frame shut: a link of the message cannot bring the inbox page (and its script) into it', async () => {
    await v1({
      subject: 'Come home',
      html: '<p><a id="home" href="/" target="_self">the inbox, inside the message</a></p>',
    });
    session = await signIn(browser, s, { width: 1280, height: 900 });
    page = session.page;
    await open('Come home');
    const link = page.frameLocator('#view iframe').locator('#home');
    await link.waitFor();
    // The frame keeps its origin only to be measured; the inbox page refuses to be framed at all.
    await Promise.all([
      page.waitForEvent('framenavigated', (f) => f !== page.mainFrame() && f.url().startsWith('chrome-error:')),
      link.click(),
    ]);
    expect(await page.evaluate(() => document.querySelector<HTMLIFrameElement>('#view iframe')!.contentDocument)).toBe(
      null,
    );
    expect(page.frames()).toHaveLength(2);
  });

  it("dark mode shows the message's own dark styles, and the inversion some clients force with its images kept", async () => {
    await v1({
      subject: 'Dark ready',
      html: `<!doctype html><html><head><meta name="color-scheme" content="light dark"><style>
body { margin: 0; background: #ffffff; color: #111111 }
#panel { height: 80px; background: #ffffff }
@media (prefers-color-scheme: dark) { body, #panel { background: #102030; color: #eeeeee } }
</style></head><body><div id="panel"></div><p><img id="red" src="cid:red@test" width="40" height="40" alt="red"></p></body></html>`,
      attachments: [{ filename: 'red.png', content: RED.toString('base64'), content_id: 'red@test' }],
    });
    await v1({ subject: 'Light only', html: '<p style="color:#222">No dark styles here.</p>' });
    // The system prefers dark: the preview still starts in light mode, whatever the browser prefers.
    session = await signIn(browser, s, { width: 1280, height: 900 }, { colorScheme: 'dark' });
    page = session.page;
    await open('Dark ready');
    const doc = page.frameLocator('#view iframe');
    const mode = page.getByRole('group', { name: 'Preview mode' });
    const frameFor = async (appearance: string) => {
      await mode.getByRole('button', { name: appearance, exact: true }).click();
      await page.waitForFunction(
        (a) =>
          document
            .querySelector<HTMLIFrameElement>('#view iframe')
            ?.contentDocument?.URL.includes(`appearance=${a.toLowerCase()}`) &&
          document.querySelector<HTMLIFrameElement>('#view iframe')!.contentDocument!.readyState === 'complete',
        appearance,
      );
      await doc.locator('#red').evaluate((img: HTMLImageElement) => img.decode());
    };

    await fitted(page, 80);
    await doc.locator('#red').evaluate((img: HTMLImageElement) => img.decode());
    expect(near(await colourOf(page, doc.locator('#panel')), [255, 255, 255])).toBe(true);
    expect(near(await colourOf(page, doc.locator('#red')), [220, 20, 20])).toBe(true);

    await frameFor('Dark');
    expect(near(await colourOf(page, doc.locator('#panel')), [0x10, 0x20, 0x30])).toBe(true);
    expect(await page.locator('#view').getByText('has no dark styles').count()).toBe(0);
    await shot(page, 'preview-dark');

    await frameFor('Inverted');
    // White turned black; the image, inverted twice, is red as it was.
    expect(near(await colourOf(page, doc.locator('#panel')), [0, 0, 0])).toBe(true);
    expect(near(await colourOf(page, doc.locator('#red')), [220, 20, 20], 24)).toBe(true);
    await shot(page, 'preview-inverted');

    // The mode is kept for the next message; one without dark styles says what dark mode does to it.
    await frameFor('Dark');
    await open('Light only');
    await page.locator('#view').getByText('This message has no dark styles of its own').waitFor();
    expect(await mode.getByRole('button', { name: 'Dark', exact: true }).getAttribute('aria-pressed')).toBe('true');
  });

  it('colours the HTML source with line numbers; a line number marks its line, and #L<n> opens the source at line n', async () => {
    const lines = [
      '<!doctype html>',
      '<html><head><style>',
      '  .button { color: #fff; background: #1d4ed8 }',
      '  @media (max-width: 600px) { .button { display: block } }',
      '</style></head>',
      '<body>',
      '<!-- the header -->',
      '<p class="intro">Hello &amp; welcome</p>',
      ...Array.from({ length: 60 }, (_, i) => `<p>paragraph ${i + 9}</p>`),
      '<img src="https://example.com/x.png" class="button" alt="Go">',
      '</body></html>',
    ];
    await v1({ subject: 'Source to read', html: lines.join('\n') });
    const id = await caughtId('Source to read');
    session = await signIn(browser, s, { width: 1280, height: 900 });
    page = session.page;
    await open('Source to read');
    await page.getByRole('tab', { name: 'HTML source' }).click();
    const source = page.getByRole('region', { name: 'HTML source' });
    await source.waitFor();

    const shown = await source
      .locator('.ln')
      .evaluateAll((ls) => ls.map((l) => [l.querySelector('.n')!.textContent, l.querySelector('.c')!.textContent]));
    // Line for line the HTML part as caught (its last line break ends the last line, it starts none).
    const html = (await s.admin('GET', `/sandbox/messages/${id}`)).body.html as string;
    expect(html.replace(/\n$/, '').split('\n')).toEqual(lines);
    expect(shown).toEqual(lines.map((text, i) => [String(i + 1), text]));
    const kinds = (n: number, kind: string) => source.locator(`[data-line="${n}"] .t-${kind}`).allTextContents();
    expect(await kinds(1, 'comment')).toEqual(['<!doctype html>']);
    expect(await kinds(3, 'prop')).toEqual(['color', 'background']);
    expect(await kinds(4, 'at')).toEqual(['@media']);
    expect(await kinds(7, 'comment')).toEqual(['<!-- the header -->']);
    expect(await kinds(8, 'tag')).toEqual(['p', 'p']);
    expect(await kinds(8, 'attr')).toEqual(['class']);
    expect(await kinds(8, 'val')).toEqual(['"intro"']);
    expect(await kinds(8, 'entity')).toEqual(['&amp;']);
    expect(await kinds(lines.length - 1, 'val')).toEqual(['"https://example.com/x.png"', '"button"', '"Go"']);
    // Coloured: a tag name is not the colour of plain text.
    const colours = await source
      .locator('[data-line="8"]')
      .evaluate((l) => [
        getComputedStyle(l.querySelector('.t-tag')!).color,
        getComputedStyle(l.querySelector('.c')!).color,
      ]);
    expect(colours[0]).not.toBe(colours[1]);
    // Selecting the source copies the code, not the line numbers.
    expect(
      await source
        .locator('.n')
        .first()
        .evaluate((n) => getComputedStyle(n).userSelect),
    ).toBe('none');

    await source.locator('[data-line="8"] .n').click();
    expect(await source.locator('.ln.hl').getAttribute('data-line')).toBe('8');
    expect(new URL(page.url()).hash).toBe('#L8');
    await shot(page, 'source');

    // An address with #L66 opens the message at that line of its source, marked and in sight.
    const other = await session.context.newPage();
    await other.goto(`${s.origin}/messages/${id}#L66`);
    const marked = other.locator('.source .ln.hl');
    await marked.waitFor();
    expect(await marked.getAttribute('data-line')).toBe('66');
    expect(await marked.locator('.c').textContent()).toBe(lines[65]);
    expect(await other.getByRole('tab', { name: 'HTML source' }).getAttribute('aria-selected')).toBe('true');
    const box = (await marked.boundingBox())!;
    expect(box.y).toBeGreaterThanOrEqual(0);
    expect(box.y + box.height).toBeLessThanOrEqual(900);
  });

  it('makes the web addresses of the text links: http and https only, in a new tab, telling the site nothing', async () => {
    const text = [
      'Track it at https://shop.example/track/1042.',
      'Or (see http://help.example/a_(b)) now.',
      'Not these: javascript:alert(1) ftp://files.example/x mailto:help@example.test www.example.com',
      'Quoted "https://example.com/q?x=1&y=2" too.',
    ].join('\n');
    await v1({ subject: 'Links in text', text });
    session = await signIn(browser, s, { width: 390, height: 844 });
    page = session.page;
    await open('Links in text');
    await page.getByRole('tab', { name: 'Text' }).click();
    const body = page.getByRole('tabpanel').locator('pre');
    await body.getByRole('link').first().waitFor();
    expect((await body.textContent())!.trimEnd()).toBe(text); // nothing lost or added
    const links = await body
      .getByRole('link')
      .evaluateAll((as) =>
        as.map((a) => [a.textContent, a.getAttribute('href'), a.getAttribute('target'), a.getAttribute('rel')]),
      );
    expect(links).toEqual([
      ['https://shop.example/track/1042', 'https://shop.example/track/1042', '_blank', 'noopener noreferrer'],
      ['http://help.example/a_(b)', 'http://help.example/a_(b)', '_blank', 'noopener noreferrer'],
      ['https://example.com/q?x=1&y=2', 'https://example.com/q?x=1&y=2', '_blank', 'noopener noreferrer'],
    ]);
    expect(await scrollsSideways(page)).toBe(false);
  });

  for (const [width, height] of [
    [1280, 900],
    [390, 844],
  ] as const) {
    it(`${width} px: header fields wrap, a DKIM signature included, technical ones in monospace, encoded words decoded`, async () => {
      await v1({
        subject: 'Größe — 10 % off ✓',
        text: 'Spring sale.',
        headers: { 'X-Campaign': `spring-${'x'.repeat(300)}` },
      });
      session = await signIn(browser, s, { width, height });
      page = session.page;
      await open('Größe — 10 % off ✓');
      await page.getByRole('tab', { name: 'Headers' }).click();
      const table = page.getByRole('table', { name: 'Header fields, in order' });
      await table.waitFor();
      const cell = (name: string) =>
        table
          .getByRole('row')
          .filter({ has: page.getByRole('rowheader', { name, exact: true }) })
          .getByRole('cell');
      // The subject as the reader wrote it, the encoded form it travels in kept in the title.
      expect(await cell('Subject').textContent()).toBe('Größe — 10 % off ✓');
      expect(await cell('Subject').getAttribute('title')).toMatch(/^=\?UTF-8\?/i);
      for (const name of ['DKIM-Signature', 'X-Campaign']) {
        expect(await cell(name).evaluate((td) => td.scrollWidth <= td.clientWidth), name).toBe(true);
        expect(await cell(name).evaluate((td) => getComputedStyle(td).fontFamily)).toMatch(/mono/i);
      }
      expect(await cell('Subject').evaluate((td) => getComputedStyle(td).fontFamily)).not.toMatch(/mono/i);
      expect(await scrollsSideways(page)).toBe(false);
      if (width === 390) {
        // On a phone the name stands above its value, which has the whole width.
        const th = (await table.getByRole('rowheader', { name: 'DKIM-Signature' }).boundingBox())!;
        const td = (await cell('DKIM-Signature').boundingBox())!;
        expect(td.y).toBeGreaterThanOrEqual(th.y + th.height - 1);
        expect(td.width).toBeGreaterThan(300);
      }
      await shot(page, `headers-${width}`);
    });
  }

  it('shows image attachments as thumbnails, an SVG one as an image that runs nothing, the rest as downloads', async () => {
    const b = await beacon();
    try {
      const svg = `<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" width="30" height="30">
<rect width="30" height="30" fill="#1040e0"/><script>fetch('${b.origin}/svg-script')</script>
<image href="${b.origin}/svg-image.png" width="10" height="10"/></svg>`;
      await v1({
        subject: 'With pictures',
        text: 'See attached.',
        attachments: [
          { filename: 'red.png', content: RED.toString('base64'), content_type: 'image/png' },
          { filename: 'drawing.svg', content: Buffer.from(svg).toString('base64'), content_type: 'image/svg+xml' },
          {
            filename: 'terms.pdf',
            content: Buffer.from('%PDF-1.4').toString('base64'),
            content_type: 'application/pdf',
          },
        ],
      });
      const id = await caughtId('With pictures');
      session = await signIn(browser, s, { width: 390, height: 844 });
      page = session.page;
      await open('With pictures');
      const attachments = page.getByRole('region', { name: 'Attachments (3)' });
      const item = (name: string) => attachments.getByRole('listitem').filter({ hasText: name });
      const loaded = (name: string) =>
        item(name)
          .locator('img')
          .evaluate((img: HTMLImageElement) => img.decode().then(() => img.naturalWidth));
      expect(await loaded('red.png')).toBe(40);
      expect(near(await colourOf(page, item('red.png').locator('img')), [220, 20, 20])).toBe(true);
      expect(await loaded('drawing.svg')).toBe(30);
      expect(near(await colourOf(page, item('drawing.svg').locator('img')), [0x10, 0x40, 0xe0])).toBe(true);
      expect(await item('terms.pdf').locator('img').count()).toBe(0);
      expect(await scrollsSideways(page)).toBe(false);
      await shot(page, 'thumbnails');

      // The SVG ran nothing and loaded nothing; served on its own it is a download under a sandboxing policy.
      expect(b.hits).toEqual([]);
      const res = await fetch(`${s.origin}/sandbox/messages/${id}/attachments/1`, {
        headers: { authorization: `Bearer ${s.adminToken}` },
      });
      expect(res.headers.get('content-type')).toBe('image/svg+xml');
      expect(res.headers.get('x-content-type-options')).toBe('nosniff');
      expect(res.headers.get('content-security-policy')).toBe("default-src 'none'; sandbox");
      expect(res.headers.get('content-disposition')).toMatch(/^attachment;/);
      const got = await download(page, () => item('drawing.svg').getByRole('link', { name: 'drawing.svg' }).click());
      expect(got.bytes.toString()).toBe(svg);
      expect(b.hits).toEqual([]);
    } finally {
      b.server.close();
    }
  });

  it('lists the recipients of an event as addresses, not JSON', async () => {
    await v1({ to: ['delivered@simulator.test', 'ada@example.org'], subject: 'Two readers', text: 'x' });
    session = await signIn(browser, s, { width: 1280, height: 900 });
    page = session.page;
    await open('Two readers');
    const sent = page.getByRole('region', { name: 'Events' }).locator('li[data-type="email.sent"] .detail');
    expect(await sent.textContent()).toBe('to: delivered@simulator.test, ada@example.org');
  });
});
