// The html-compatibility check on messages a team sends (fixtures/checks), and the behaviours of caniemail 2.0.2 it
// works around, asserted against the library itself: when one of these tests fails after an upgrade, the workaround
// it pins can go.
import { readFileSync } from 'node:fs';
import { caniemail } from 'caniemail';
import { describe, expect, it } from 'vitest';
import { DATA_VERSION, htmlCompatibility } from './html-compatibility.js';
import { parseMarkup } from './markup.js';

const fixture = (name: string) => readFileSync(new URL(`../../../fixtures/checks/${name}`, import.meta.url), 'utf8');
const check = (html: string) => htmlCompatibility(parseMarkup(html));

describe('html-compatibility', () => {
  it('flags a flexbox newsletter for Outlook on Windows, at the line and column of the rule', () => {
    const r = check(fixture('newsletter.html'));
    const flex = r.findings.find((f) => f.rule === 'css-display-flex')!;
    expect(flex).toMatchObject({
      severity: 'warning',
      title: 'display:flex',
      // `.header { display: flex; …` in the <style> block: line 10, where `display` starts.
      line: 10,
      column: 13,
      // In the <style> block twice, and once in the <nav>'s style attribute.
      occurrences: 3,
      docs_url: 'https://www.caniemail.com/features/css-display-flex/',
    });
    expect(flex.clients).toContain('outlook.windows');
    expect(flex.detail).toMatch(/^Not supported by .*Outlook \([^)]*Windows[^)]*\)/);
    // The HTML5 elements (which caniemail 2.0.2 does not find) are found, at the first one: <header> on line 28.
    expect(r.findings.find((f) => f.rule === 'html-semantics')).toMatchObject({ line: 28, column: 3, occurrences: 8 });
    // WebP images, in Outlook.
    expect(r.findings.find((f) => f.rule === 'image-webp')).toMatchObject({ severity: 'warning', line: 40 });
    // Outlook on Windows supports far from all of it; Apple Mail on iOS nearly all.
    const support = (c: string) => r.clients.find((x) => x.client === c)!;
    expect(support('outlook.windows').support).toBeLessThan(0.7);
    expect(support('outlook.windows').market_share).toBeGreaterThan(0);
    expect(support('apple-mail.ios').support).toBeGreaterThan(0.9);
    expect(r.clients[0]!.support).toBeLessThanOrEqual(r.clients.at(-1)!.support);
  });

  it('scores a table-based receipt well: nothing likely to break, only notices', () => {
    const receipt = check(fixture('receipt.html'));
    const newsletter = check(fixture('newsletter.html'));
    expect(receipt.findings.filter((f) => f.severity !== 'notice')).toEqual([]);
    expect(receipt.score).toBeGreaterThanOrEqual(90);
    expect(receipt.score).toBeGreaterThan(newsletter.score);
    // Every HTML document's <body> and doctype are dropped by some clients: worth knowing, nothing to change.
    expect(receipt.findings.find((f) => f.rule === 'html-body')?.severity).toBe('notice');
  });

  it('scores HTML that uses nothing a client lacks 100, with no findings', () => {
    const r = check('<p>Your code is <strong>482913</strong>.</p>');
    expect(r.findings).toEqual([]);
    expect(r.score).toBe(100);
  });

  it('names the data it judges by', () => {
    expect(DATA_VERSION).toMatch(/^caniemail 2\.0\.2 \(support data of \d{4}-\d\d-\d\d\); market share: .*2021/);
  });

  describe('caniemail 2.0.2 itself', () => {
    it('throws when a feature used has no data for a client asked about', () => {
      // Why the check asks about one client only (its probe) and reads the clients' support from the data.
      expect(() => caniemail({ clients: ['free-fr.desktop-webmail'], html: '<p style="margin: 0">x</p>' })).toThrow(
        /not found on "free-fr.desktop-webmail"/,
      );
    });

    it('matches element names as substrings, where the check matches them whole', () => {
      const html = '<table><tr><td><article>x</article></td></tr></table>';
      const { issues } = caniemail({ clients: ['outlook.windows', 'hey.desktop-webmail'], html });
      const titles = [...issues.errors.values(), ...issues.warnings.values()].flat().map((i) => i.title);
      // <article> reported as <rt>.
      expect(titles).toContain('<rt> element');
      const ours = check(html).findings.map((f) => f.rule);
      expect(ours).not.toContain('html-rt');
      expect(ours).toContain('html-semantics');
    });

    it("places the features of a <style> block from the block's first line, where the check places them in the HTML", () => {
      const html = '<html>\n<head>\n<style>\n.a { display: flex; }\n</style>\n</head>\n<body></body>\n</html>';
      const { issues } = caniemail({ clients: ['outlook.windows'], html });
      const flex = issues.errors.get('outlook.windows')!.find((i) => i.title === 'display:flex')!;
      expect(flex.position!.start).toEqual({ line: 2, column: 6 });
      expect(check(html).findings.find((f) => f.rule === 'css-display-flex')).toMatchObject({ line: 4, column: 6 });
    });
  });
});
