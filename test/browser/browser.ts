// The browser the inbox tests drive: Debian's Chromium through playwright-core (flags from the project's stack notes),
// signed in through the inbox URL the server prints. Screenshots go to test-artifacts/inbox/ (ignored by git).
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { crc32, deflateSync, inflateSync } from 'node:zlib';
import { chromium, type Browser, type BrowserContext, type Download, type Locator, type Page } from 'playwright-core';
import type { TestServer } from '../helpers/server.js';

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
export const SHOTS = join('test-artifacts', 'inbox');

export function launch(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) {
    throw new Error(
      `The browser tests need Chromium at ${CHROMIUM}: install Debian's (apt-get install chromium), or point ` +
        'CHROMIUM_PATH at another Chromium, such as the one `npx playwright-core install chromium` downloads (under ~/.cache/ms-playwright).',
    );
  }
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}

export interface Session {
  context: BrowserContext;
  page: Page;
  /** Uncaught errors of the page's own script (a message's blocked script is reported on the console, not here). */
  errors: string[];
}

/** A new browser profile signed in through the printed inbox URL, showing the inbox. */
export async function signIn(
  browser: Browser,
  s: TestServer,
  viewport = { width: 1400, height: 900 },
  options: { colorScheme?: 'light' | 'dark' } = {},
): Promise<Session> {
  const context = await browser.newContext({ viewport, acceptDownloads: true, ...options });
  context.setDefaultTimeout(10_000);
  const page = await context.newPage();
  const errors: string[] = [];
  page.on('pageerror', (err) => errors.push(err.message));
  await page.goto(s.inbox);
  await page.locator('#live', { hasText: 'Live' }).waitFor();
  return { context, page, errors };
}

/** A screenshot of the page (or of one part of it) as test-artifacts/inbox/{name}.png. */
export async function shot(target: Page | Locator, name: string): Promise<string> {
  mkdirSync(SHOTS, { recursive: true });
  const path = join(SHOTS, `${name}.png`);
  await target.screenshot({ path });
  return path;
}

/**
 * The focused element as `tag text`, read in one step inside the page. A locator's evaluate resolves its element
 * first and runs later: a panel drawn again between the two (the live stream redraws it at any time) leaves the
 * locator holding the old, detached element while the focus has moved to its replacement.
 */
export const focused = (page: Page): Promise<string | null> =>
  page.evaluate(() => {
    const a = document.activeElement;
    return a && a !== document.body ? `${a.tagName.toLowerCase()} ${a.textContent?.trim() ?? ''}` : null;
  });

/** Clicks what starts a download and returns the downloaded bytes. */
export async function download(page: Page, click: () => Promise<void>): Promise<{ bytes: Buffer; name: string }> {
  const [d] = (await Promise.all([page.waitForEvent('download'), click()])) as [Download, void];
  return { bytes: readFileSync((await d.path())!), name: d.suggestedFilename() };
}

/** The row of the list whose subject is `subject`. */
export const row = (page: Page, subject: string) =>
  page.locator('a.row', { has: page.locator('.subject', { hasText: subject }) });

/**
 * Text whose contrast with the background behind it is under 4.5:1 (WCAG AA for normal text), as `tag "text" ratio`.
 * The background is the nearest opaque one among the element and its ancestors.
 */
export function lowContrast(page: Page): Promise<string[]> {
  return page.evaluate(() => {
    type Rgba = { r: number; g: number; b: number; a: number };
    const parse = (c: string): Rgba | null => {
      const m = /rgba?\(([^)]+)\)/.exec(c);
      if (!m) return null;
      const [r = 0, g = 0, b = 0, a = 1] = m[1]!
        .split(/[\s,/]+/)
        .filter(Boolean)
        .map(Number);
      return { r, g, b, a };
    };
    const luminance = ({ r, g, b }: Rgba) => {
      const f = (v: number) => ((v /= 255) <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4);
      return 0.2126 * f(r) + 0.7152 * f(g) + 0.0722 * f(b);
    };
    const background = (el: Element | null): Rgba => {
      for (let e = el; e; e = e.parentElement) {
        const c = parse(getComputedStyle(e).backgroundColor);
        if (c && c.a > 0.5) return c;
      }
      return { r: 255, g: 255, b: 255, a: 1 };
    };
    const low: string[] = [];
    const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
    for (let n = walker.nextNode(); n; n = walker.nextNode()) {
      const el = n.parentElement!;
      const text = n.textContent!.trim();
      if (!text || el.closest('.vh, [hidden], template, dialog:not([open])')) continue;
      const box = el.getBoundingClientRect();
      if (!box.width || !box.height) continue;
      const fg = luminance(parse(getComputedStyle(el).color)!);
      const bg = luminance(background(el));
      const ratio = (Math.max(fg, bg) + 0.05) / (Math.min(fg, bg) + 0.05);
      if (ratio < 4.5) low.push(`${el.tagName.toLowerCase()} "${text.slice(0, 30)}" ${ratio.toFixed(2)}`);
    }
    return low;
  });
}

/** Whether the page scrolls sideways (its content is wider than the window). */
export const scrollsSideways = (page: Page) =>
  page.evaluate(() => document.documentElement.scrollWidth > window.innerWidth);

/** A PNG `w`×`h` of one colour. */
export function solidPng(w: number, h: number, [r, g, b]: [number, number, number]): Buffer {
  const chunk = (type: string, data: Buffer) => {
    const body = Buffer.concat([Buffer.from(type, 'ascii'), data]);
    const out = Buffer.alloc(12 + data.length);
    out.writeUInt32BE(data.length, 0);
    body.copy(out, 4);
    out.writeUInt32BE(crc32(body), 8 + data.length);
    return out;
  };
  const header = Buffer.alloc(13);
  header.writeUInt32BE(w, 0);
  header.writeUInt32BE(h, 4);
  header[8] = 8; // bits a channel
  header[9] = 2; // RGB
  const row = Buffer.from([0, ...Array.from({ length: w }, () => [r, g, b]).flat()]);
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', header),
    chunk('IDAT', deflateSync(Buffer.concat(Array.from({ length: h }, () => row)))),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

/** The colour shown at (x, y) of the window, as [r, g, b]: a screenshot of that one pixel, decoded. */
export async function pixel(page: Page, x: number, y: number): Promise<[number, number, number]> {
  const png = await page.screenshot({ clip: { x: Math.round(x), y: Math.round(y), width: 1, height: 1 } });
  const data: Buffer[] = [];
  for (let i = 8; i < png.length; ) {
    const length = png.readUInt32BE(i);
    if (png.toString('ascii', i + 4, i + 8) === 'IDAT') data.push(png.subarray(i + 8, i + 8 + length));
    i += 12 + length;
  }
  // One pixel of 8-bit RGB(A): whatever the row's filter, it predicts from zeros, so the bytes after it are the colour.
  const raw = inflateSync(Buffer.concat(data));
  return [raw[1]!, raw[2]!, raw[3]!];
}

/** The colour at the middle of an element (scrolled into sight first), as [r, g, b]. */
export async function colourOf(page: Page, target: Locator): Promise<[number, number, number]> {
  await target.scrollIntoViewIfNeeded();
  const box = (await target.boundingBox())!;
  return pixel(page, box.x + box.width / 2, box.y + box.height / 2);
}
