// The static checks on their two threads (as svc serve runs them) answer what they answer on the caller's thread.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { silentLogger } from '../../lib/log.js';
import { createStaticRunner } from './static.js';

const fixture = (name: string) => readFileSync(new URL(`../../../fixtures/checks/${name}`, import.meta.url), 'utf8');

describe('the static checks on their threads', () => {
  it('answer as on the caller’s thread, html-validate’s findings merged in', async () => {
    const input = {
      html: fixture('promo-no-alt.html'),
      sentHtmlBytes: 1000,
      text: null,
      subject: 'Weekend sale',
      from: 'deals@example.test',
      headers: [],
    };
    const threads = createStaticRunner({ thread: true, log: silentLogger });
    const here = createStaticRunner({ thread: false, log: silentLogger });
    try {
      const [a, b] = await Promise.all([threads.run(input), here.run(input)]);
      expect(a).toEqual(b);
      const rules = (o: typeof a.accessibility) => (o && 'ok' in o ? o.ok.map((f) => f.rule) : []);
      // html-validate's part (an image link without text) came from the other thread.
      expect(rules(a.accessibility)).toContain('html-validate/wcag/h30');
      expect(a.urls.length).toBeGreaterThan(0);
      // Only the URLs, for the links check run again.
      expect(await threads.run({ ...input, only: 'urls' })).toMatchObject({ compatibility: null, urls: a.urls });
    } finally {
      await threads.close();
      await here.close();
    }
  });
});
