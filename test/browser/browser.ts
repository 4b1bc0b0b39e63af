// The browser the inbox tests drive: Debian's Chromium through playwright-core (flags from the project's stack notes),
// signed in through the inbox URL the server prints. Screenshots go to test-artifacts/inbox/ (ignored by git).
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
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
): Promise<Session> {
  const context = await browser.newContext({ viewport, acceptDownloads: true });
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
