// The links check against a real website on loopback (test/helpers/site.ts): what each URL answers, the redirects it
// goes through, timeouts and TLS; the guard that keeps it off private addresses unless told; its limits and cache.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startDnsServer } from '../../../test/helpers/dns-server.js';
import { startSite, type Site } from '../../../test/helpers/site.js';
import { createLinkChecker, LINK_CACHE_MS, type LinkContext, limiter } from './links.js';
import type { FoundUrl } from './markup.js';

const ctx = (o: Partial<LinkContext> = {}): LinkContext => ({
  live: false,
  fromDomain: 'example.test',
  tracked: new Set(),
  refresh: false,
  ...o,
});
const link = (url: string, line: number | null = 1): FoundUrl => ({ url, kind: 'link', line, column: line && 5 });
const image = (url: string): FoundUrl => ({ url, kind: 'image', line: 2, column: 3 });

describe('links', () => {
  let site: Site;
  let now = 0;
  const checkers: ReturnType<typeof createLinkChecker>[] = [];
  const checker = (o: { privateLinks?: boolean; timeoutMs?: number } = {}) => {
    const c = createLinkChecker({ privateLinks: o.privateLinks ?? true, timeoutMs: o.timeoutMs, now: () => now });
    checkers.push(c);
    return c;
  };
  beforeAll(async () => {
    site = await startSite();
  });
  afterEach(async () => {
    for (const c of checkers.splice(0)) await c.close();
  });
  afterAll(() => site.close());

  async function findings(urls: FoundUrl[], c = checker(), o: Partial<LinkContext> = {}) {
    const out = await c.check(urls, ctx(o));
    if (out.skipped !== null) throw new Error(out.skipped);
    return out;
  }

  it('follows each link to its answer: a 200, a 301 chain, a 404, one that never answers', async () => {
    const c = checker({ timeoutMs: 300 });
    const out = await findings(
      [
        link(`${site.origin}/ok`),
        link(`${site.origin}/old`, 2),
        link(`${site.origin}/gone`, 3),
        link(`${site.origin}/slow`, 4),
      ],
      c,
    );
    const byUrl = new Map(out.links.map((l) => [l.url.slice(site.origin.length), l]));
    expect(byUrl.get('/ok')).toMatchObject({ status: 200, redirects: [], error: null, line: 1, column: 5 });
    expect(byUrl.get('/old')).toMatchObject({ status: 200, redirects: [`${site.origin}/older`, `${site.origin}/ok`] });
    expect(byUrl.get('/gone')).toMatchObject({ status: 404, error: null });
    expect(byUrl.get('/slow')).toMatchObject({ status: null, error: 'no answer in time' });
    const f = (rule: string) => out.findings.filter((x) => x.rule === rule);
    expect(f('link-broken')).toEqual([
      {
        severity: 'error',
        rule: 'link-broken',
        title: 'A link answers 404',
        status: 404,
        url: `${site.origin}/gone`,
        line: 3,
        column: 5,
      },
    ]);
    expect(f('link-redirects')[0]).toMatchObject({
      severity: 'notice',
      title: 'A link redirects 2 times',
      detail: `${site.origin}/old → ${site.origin}/older → ${site.origin}/ok. Link to where it ends.`,
      line: 2,
    });
    expect(f('link-timeout')[0]).toMatchObject({
      severity: 'warning',
      url: `${site.origin}/slow`,
      detail: 'No answer within 0.3 s.',
    });
    // HEAD first; the 404 asked again with GET.
    expect(site.requests).toEqual(expect.arrayContaining(['HEAD /ok', 'HEAD /gone', 'GET /gone']));
    expect(site.requests).not.toContain('GET /ok');
  });

  it('asks with GET when HEAD is refused, and tells an image URL that serves no image', async () => {
    const out = await findings([
      link(`${site.origin}/no-head`),
      image(`${site.origin}/logo.png`),
      image(`${site.origin}/page.png`),
    ]);
    expect(out.links.map((l) => l.status)).toEqual([200, 200, 200]);
    expect(out.findings.map((f) => [f.rule, f.url])).toEqual(
      expect.arrayContaining([['image-not-image', `${site.origin}/page.png`]]),
    );
    expect(out.findings.map((f) => f.rule)).not.toContain('link-broken');
  });

  it('says when redirects go round in circles', async () => {
    const out = await findings([link(`${site.origin}/loop`)]);
    expect(out.findings.find((f) => f.rule === 'link-redirect-loop')).toMatchObject({ severity: 'error' });
  });

  it('does not connect to a loopback or private address unless told, and names it', async () => {
    const before = site.requests.length;
    const out = await findings(
      [link(`${site.origin}/ok`), link('http://localhost:9/admin', 2)],
      checker({ privateLinks: false }),
    );
    expect(site.requests.length).toBe(before);
    expect(out.links[0]).toMatchObject({
      status: null,
      error: 'not checked: 127.0.0.1 is a loopback address (svc serve --check-private-links checks it)',
    });
    expect(out.findings.filter((f) => f.rule === 'link-private').map((f) => [f.severity, f.title])).toEqual([
      ['notice', 'A link to a loopback address, not checked'],
      ['notice', 'A link to a loopback address, not checked'],
    ]);
    // In live mail such a link is broken for every recipient, checked or not.
    const live = await findings([link(`${site.origin}/ok`)], checker({ privateLinks: true }), { live: true });
    expect(live.findings.find((f) => f.rule === 'link-private')).toMatchObject({
      severity: 'error',
      title: 'A link to a loopback address in live mail',
    });
    expect(live.links[0]!.status).toBe(200);
  });

  it('calls plain http a notice in test mail and a warning in live mail', async () => {
    const test = await findings([link(`${site.origin}/ok`)]);
    expect(test.findings.find((f) => f.rule === 'link-insecure')?.severity).toBe('notice');
    const live = await findings([link(`${site.origin}/ok`)], checker(), { live: true });
    expect(live.findings.find((f) => f.rule === 'link-insecure')?.severity).toBe('warning');
  });

  it('looks names up (here in a DNS server on loopback): a host that does not exist, links to another domain', async () => {
    const dns = await startDnsServer();
    try {
      dns.set('shop.example.test', 'A', ['127.0.0.1']);
      dns.set('elsewhere.example.org', 'A', ['127.0.0.1']);
      const port = new URL(site.origin).port;
      const c = createLinkChecker({ privateLinks: true, now: () => now, dnsServer: dns.address });
      checkers.push(c);
      const out = await findings(
        [
          link(`http://shop.example.test:${port}/ok`),
          link(`http://elsewhere.example.org:${port}/ok`, 2),
          link(`http://missing.example.test:${port}/ok`, 3),
        ],
        c,
        { fromDomain: 'mail.example.test' },
      );
      expect(out.links.map((l) => l.status)).toEqual([200, 200, null]);
      expect(out.findings.find((f) => f.rule === 'link-host-unknown')).toMatchObject({
        severity: 'error',
        url: `http://missing.example.test:${port}/ok`,
        detail: 'missing.example.test does not resolve.',
      });
      expect(out.findings.filter((f) => f.rule === 'link-other-domain').map((f) => [f.title, f.line])).toEqual([
        ['Links to example.org, not example.test', 2],
      ]);
    } finally {
      await dns.close();
    }
  });

  it('lists what goes nowhere in email, and leaves mailto:, tel: and anchors alone', async () => {
    const out = await findings([
      link(`${site.origin}/ok`),
      link('/account'),
      link('{{unsubscribe_url}}'),
      link('javascript:void(0)'),
      link('mailto:help@example.test'),
      link('tel:+15550100'),
      link('#top'),
    ]);
    expect(out.links.map((l) => l.url)).toEqual([`${site.origin}/ok`]);
    expect(out.findings.filter((f) => f.rule === 'link-not-web').map((f) => [f.url, f.title])).toEqual([
      ['/account', 'A link that goes nowhere in email'],
      ['{{unsubscribe_url}}', 'A link is an unfilled template placeholder'],
      ['javascript:void(0)', 'A link that goes nowhere in email'],
    ]);
  });

  /** Tasks that start when the limit lets them and end when told to, as `host` + number. */
  function tasks(
    limit: ReturnType<ReturnType<typeof limiter>['message']>,
    started: string[],
    finish: Map<string, () => void>,
  ) {
    return (host: string, n: number | string) =>
      limit(host, () => {
        started.push(`${host}${n}`);
        return new Promise<void>((resolve) => finish.set(`${host}${n}`, resolve));
      });
  }

  it("asks a few of a message's links at a time, and at most two of one host", async () => {
    const started: string[] = [];
    const finish = new Map<string, () => void>();
    const task = tasks(limiter().message(), started, finish);
    const all = [1, 2, 3]
      .map((n) => task('a', n))
      .concat(
        [1, 2, 3].map((n) => task('b', n)),
        [task('c', 1)],
      );
    // Two of each host; the fourth slot goes to the next host waiting.
    expect(started).toEqual(['a1', 'a2', 'b1', 'b2']);
    finish.get('a1')!();
    await all[0];
    expect(started).toEqual(['a1', 'a2', 'b1', 'b2', 'a3']);
    finish.get('b1')!();
    await all[3];
    expect(started.at(-1)).toBe('b3');
    for (const f of ['a2', 'a3', 'b2', 'b3']) finish.get(f)!();
    await Promise.all(all.slice(0, 6));
    expect(started.at(-1)).toBe('c1');
    finish.get('c1')!();
    await Promise.all(all);
  });

  it("gives a host's free slot to another message before the next of one message's many, and drops the waits of a message whose time is up", async () => {
    const requests = limiter();
    const started: string[] = [];
    const finish = new Map<string, () => void>();
    const stop = new AbortController();
    const a = tasks(requests.message(stop.signal), started, finish);
    const b = tasks(requests.message(), started, finish);
    const many = [1, 2, 3, 4].map((n) => a('h', `a${n}`));
    const other = b('h', 'b1');
    // Another host is not held back by the first message's queue for h.
    const elsewhere = b('k', 'b2');
    expect(started).toEqual(['ha1', 'ha2', 'kb2']);
    finish.get('ha1')!();
    await many[0];
    expect(started.at(-1)).toBe('hb1');
    stop.abort(new Error('time is up'));
    await expect(many[3]).rejects.toThrow('time is up');
    finish.get('hb1')!();
    finish.get('kb2')!();
    await Promise.all([other, elsewhere]);
    finish.get('ha2')!();
    await many[1];
    expect(started).toEqual(['ha1', 'ha2', 'kb2', 'hb1']);
    await expect(many[2]).rejects.toThrow('time is up');
  });

  it('keeps answers for a while (service clock), and asks again when told to refresh', async () => {
    const c = checker();
    const url = `${site.origin}/ok?kept`;
    const count = () => site.requests.filter((r) => r === 'HEAD /ok?kept').length;
    await findings([link(url)], c);
    await findings([link(url)], c);
    expect(count()).toBe(1);
    await findings([link(url)], c, { refresh: true });
    expect(count()).toBe(2);
    now += LINK_CACHE_MS;
    await findings([link(url)], c);
    expect(count()).toBe(3);
  });

  it('marks the links the service tracked', async () => {
    const url = `${site.origin}/ok?tracked`;
    const out = await findings([link(url), link(`${site.origin}/ok`)], checker(), { tracked: new Set([url]) });
    expect(out.links.map((l) => l.tracked)).toEqual([true, false]);
  });

  it('is skipped when no host name resolves: no network here', async () => {
    const c = checker();
    const out = await c.check([link('https://shop.example.test/a'), image('https://cdn.example.test/b.png')], ctx());
    expect(out.skipped).toMatch(
      /^The links were not checked: no host name resolves here \(looked up shop\.example\.test, cdn\.example\.test\)/,
    );
    expect(out.links.map((l) => l.error)).toEqual([
      'not checked: no host name resolves here',
      'not checked: no host name resolves here',
    ]);
    // With a link it can check, it checks that one and says what it could not.
    const some = await findings([link('https://shop.example.test/a'), link(`${site.origin}/ok`)], c);
    expect(some.links.map((l) => l.status)).toEqual([null, 200]);
    expect(some.findings.find((f) => f.rule === 'links-offline')).toMatchObject({
      severity: 'notice',
      title: '1 links were not checked',
    });
  });
});

describe('links over TLS', () => {
  it('reports a certificate no client trusts', async () => {
    const tls = await startSite({ tls: true });
    const c = createLinkChecker({ privateLinks: true, now: () => 0 });
    try {
      const out = await c.check([link(`${tls.origin}/ok`)], ctx());
      if (out.skipped !== null) throw new Error(out.skipped);
      expect(out.links[0]).toMatchObject({ status: null, error: expect.stringMatching(/^TLS: /) });
      expect(out.findings.find((f) => f.rule === 'link-tls')).toMatchObject({
        severity: 'error',
        title: 'A link with a TLS error',
      });
    } finally {
      await c.close();
      await tls.close();
    }
  });
});
