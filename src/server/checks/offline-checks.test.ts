// The checks that need no network (content, accessibility, and the URLs handed to the links check) on messages a team
// sends: fixtures/checks, and messages built here.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { GMAIL_CLIP_BYTES } from './content.js';
import { runOffline, type StaticInput } from './offline-checks.js';
import { withValidation } from './offline-runner.js';
import { validation } from './validator.js';

const fixture = (name: string) => readFileSync(new URL(`../../../fixtures/checks/${name}`, import.meta.url), 'utf8');

function run(o: Partial<StaticInput>) {
  const input: StaticInput = {
    html: null,
    sentHtmlBytes: o.html ? Buffer.byteLength(o.html) : null,
    text: null,
    subject: 'Your order',
    from: 'The Shop <orders@example.test>',
    headers: [],
    ...o,
  };
  const r = withValidation(runOffline(input), validation(input.html));
  const ok = <T>(x: { ok: T } | { failed: string } | null): T => {
    if (!x || 'failed' in x) throw new Error(`check failed: ${JSON.stringify(x)}`);
    return x.ok;
  };
  return { r, content: ok(r.content), accessibility: r.accessibility && ok(r.accessibility) };
}
const rules = (fs: { rule: string }[]) => fs.map((f) => f.rule);

describe('content', () => {
  it('flags images without alt text where they are, and an HTML-only message', () => {
    const { content } = run({ html: fixture('promo-no-alt.html'), subject: 'Weekend sale' });
    const noAlt = content.filter((f) => f.rule === 'img-alt-missing');
    expect(noAlt.map((f) => [f.line, f.column])).toEqual([
      [11, 48],
      [16, 7],
    ]);
    expect(noAlt[0]).toMatchObject({ severity: 'warning', title: 'An image without alt text' });
    expect(noAlt[0]!.detail).toContain('https://cdn.example.test/banner-sale.jpg');
    expect(content.find((f) => f.rule === 'text-part-missing')?.severity).toBe('warning');
    // It offers to unsubscribe, so it is bulk mail, without List-Unsubscribe.
    expect(content.find((f) => f.rule === 'list-unsubscribe-missing')?.severity).toBe('warning');
  });

  it('finds nothing to say of a plain-text code mail, and leaves the HTML checks out', () => {
    const { r, content } = run({ text: fixture('code.txt'), subject: 'Your sign-in code' });
    expect(content).toEqual([]);
    expect(r.compatibility).toBeNull();
    expect(r.accessibility).toBeNull();
  });

  it('passes a receipt with a text part that says what its HTML says', () => {
    const { content, accessibility } = run({ html: fixture('receipt.html'), text: fixture('receipt.txt') });
    expect(content).toEqual([]);
    expect(accessibility).toEqual([]);
  });

  it('tells text and HTML that disagree: a code or a link in one part only', () => {
    const { content } = run({
      html: '<p>Your code is <b>482913</b>. <a href="https://app.example.test/verify?t=1">Verify</a></p>',
      text: 'Your code is 519920. Verify at https://app.example.test/verify?t=1',
    });
    expect(content.filter((f) => f.rule.startsWith('code-only')).map((f) => [f.rule, f.title])).toEqual([
      ['code-only-in-text', 'The code 519920 is in the text part only'],
      ['code-only-in-html', 'The code 482913 is in the HTML only'],
    ]);
    expect(rules(content)).not.toContain('link-only-in-html');
    const links = run({
      html: '<p><a href="https://app.example.test/a">A</a></p>',
      text: 'See https://app.example.test/b.',
    }).content;
    expect(links.filter((f) => f.rule.startsWith('link-only')).map((f) => [f.rule, f.url])).toEqual([
      ['link-only-in-html', 'https://app.example.test/a'],
      ['link-only-in-text', 'https://app.example.test/b'],
    ]);
  });

  it('warns of HTML that Gmail clips, measured as sent', () => {
    const html = `<p>${'x'.repeat(1000)}</p>`;
    expect(rules(run({ html, text: 'x', sentHtmlBytes: GMAIL_CLIP_BYTES }).content)).not.toContain('html-clipped');
    const clipped = run({ html, text: 'x', sentHtmlBytes: GMAIL_CLIP_BYTES + 1 }).content;
    expect(clipped.find((f) => f.rule === 'html-clipped')?.detail).toMatch(/^Its HTML is 102 KB as sent; Gmail/);
  });

  it('wants one-click unsubscribe on bulk mail: List-Unsubscribe with an https URL and List-Unsubscribe-Post', () => {
    const base = { text: 'News. Unsubscribe: https://shop.example.test/u' };
    const mailto = [{ name: 'List-Unsubscribe', value: '<mailto:u@shop.example.test>' }];
    const https = [
      { name: 'List-Unsubscribe', value: '<https://shop.example.test/u?x=1>, <mailto:u@shop.example.test>' },
    ];
    const post = { name: 'List-Unsubscribe-Post', value: 'List-Unsubscribe=One-Click' };
    expect(rules(run({ ...base, headers: mailto }).content)).toEqual(['list-unsubscribe-no-https']);
    expect(rules(run({ ...base, headers: https }).content)).toEqual(['list-unsubscribe-post-missing']);
    expect(rules(run({ ...base, headers: [...https, post] }).content)).toEqual([]);
    // A list's header makes it bulk mail without a word of unsubscribing.
    expect(
      rules(run({ text: 'Hi', headers: [{ name: 'List-Id', value: '<news.shop.example.test>' }] }).content),
    ).toEqual(['list-unsubscribe-missing']);
  });

  it('notes a no-reply sender, a long or missing subject, and a preheader too short or too long', () => {
    const text = 'Hello';
    expect(rules(run({ text, from: 'Shop <no-reply@example.test>' }).content)).toEqual(['from-no-reply']);
    expect(rules(run({ text, from: 'noreply@example.test' }).content)).toEqual(['from-no-reply']);
    expect(rules(run({ text, subject: '' }).content)).toEqual(['subject-missing']);
    expect(run({ text, subject: 'a'.repeat(71) }).content[0]).toMatchObject({
      rule: 'subject-long',
      title: 'The subject is 71 characters long',
    });
    const withPreheader = (p: string) =>
      `<html lang="en"><body><div style="display:none;max-height:0">${p}</div><p>Body text here.</p></body></html>`;
    expect(rules(run({ text, html: withPreheader('Short') }).content)).toContain('preheader-short');
    expect(
      rules(run({ text, html: withPreheader('A preheader of a sensible length, which says what is inside.') }).content),
    ).not.toContain('preheader-short');
    expect(rules(run({ text, html: withPreheader('x'.repeat(141)) }).content)).toContain('preheader-long');
  });

  it("reports invalid HTML with html-validate's rule, line and column", () => {
    const html =
      '<!DOCTYPE html>\n<html lang="en">\n<body>\n<p>One<div>two</div></p>\n<table><tr><td id="a"></td><td id="a"></td></tr></table>\n</body>\n</html>';
    const { content } = run({ html, text: 'One two' });
    const invalid = content.filter((f) => f.rule.startsWith('html-validate/'));
    expect(invalid.find((f) => f.rule === 'html-validate/no-dup-id')).toMatchObject({ line: 5, severity: 'warning' });
    expect(invalid.find((f) => f.rule === 'html-validate/close-order')).toMatchObject({ line: 4 });
    expect(invalid[0]!.docs_url).toMatch(/^https:\/\/html-validate\.org\/rules\//);
    // The attributes email is written with are not invalid here.
    expect(rules(run({ html: fixture('receipt.html'), text: fixture('receipt.txt') }).content)).toEqual([]);
  });
});

describe('HTML nested deeper than browsers nest it', () => {
  it('is read as far as 512 levels, its own finding where it goes deeper, and no check overflows its stack', () => {
    // 100,000 <span>s never closed, with a link and an image without alt text inside the last: every check walks
    // this tree, and html-validate and caniemail would walk it by recursion.
    const html = `<html lang="en"><body>\n${'<span>'.repeat(100_000)}<a href="https://shop.example.test/a"><img src="x.png"></a></body></html>`;
    const { r, content } = run({ html, text: 'x' });
    expect(r.compatibility && 'ok' in r.compatibility).toBe(true);
    expect(content.find((f) => f.rule === 'html-nesting-deep')).toMatchObject({
      severity: 'error',
      line: 2,
      column: 6 * 510 + 1,
    });
    // What lies deeper was not read.
    expect(rules(content)).not.toContain('img-alt-missing');
    expect(r.urls).toEqual([]);
    // html-validate read the same: the 510 <span>s it saw are unclosed.
    expect(content.find((f) => f.title === "Unclosed element '<span>'")).toMatchObject({
      rule: 'html-validate/close-order',
      occurrences: 510,
    });
  });

  it('is read whole up to 512 levels', () => {
    // The image is the 512th level: <html>, <body> and 509 <span>s around it.
    const html = `<html lang="en"><body>${'<span>'.repeat(509)}<img src="x.png"></body></html>`;
    const { content } = run({ html, text: 'x' });
    expect(rules(content)).not.toContain('html-nesting-deep');
    expect(rules(content)).toContain('img-alt-missing');
  });
});

describe('accessibility', () => {
  it('wants the language, link text that says where a link goes, and text for image links', () => {
    const html =
      '<html>\n<body>\n<p><a href="https://shop.example.test/sale">Click here</a></p>\n' +
      '<p><a href="https://shop.example.test/"><img src="https://cdn.example.test/logo.png"></a></p>\n</body>\n</html>';
    const { accessibility } = run({ html, text: 'x' });
    expect(accessibility!.map((f) => [f.rule, f.line])).toEqual([
      ['html-lang-missing', 1],
      ['link-text-vague', 3],
      ['html-validate/wcag/h30', 4],
    ]);
  });
});

describe('the URLs for the links check', () => {
  it("lists the HTML's links and images where they are, then the text part's links", () => {
    const html =
      '<p><a href="https://shop.example.test/a">A</a></p>\n' +
      '<img src="https://cdn.example.test/b.png" srcset="https://cdn.example.test/b@2x.png 2x" alt="">\n' +
      '<td background="https://cdn.example.test/bg.jpg" style="background-image: url(\'https://cdn.example.test/c.jpg\')"></td>';
    const { r } = run({ html, text: 'Go to https://shop.example.test/a, or https://shop.example.test/t.' });
    expect(r.urls).toEqual([
      { url: 'https://shop.example.test/a', kind: 'link', line: 1, column: 4 },
      { url: 'https://cdn.example.test/b.png', kind: 'image', line: 2, column: 1 },
      { url: 'https://cdn.example.test/b@2x.png', kind: 'image', line: 2, column: 1 },
      { url: 'https://cdn.example.test/bg.jpg', kind: 'image', line: 3, column: 1 },
      { url: 'https://cdn.example.test/c.jpg', kind: 'image', line: 3, column: 1 },
      { url: 'https://shop.example.test/a', kind: 'link', line: null, column: null },
      { url: 'https://shop.example.test/t', kind: 'link', line: null, column: null },
    ]);
  });
});
