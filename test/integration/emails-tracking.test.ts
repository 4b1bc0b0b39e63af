// Open and click tracking (a send's `tracking`, a domain's `tracking_host`; the
// payloads of email.clicked / email.opened in docs/api.md#events): links rewritten to the server's click endpoint,
// the redirect, the open pixel, signed tokens, and links on the domain's tracking host.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.js';
import {
  FROM,
  caughtDetail,
  expectProblem,
  getMessage,
  mail,
  outbox,
  publishAndVerify,
  rcpt,
  send,
  sendOk,
  seedTenant,
  sessionOf,
} from './emails-helpers.js';

const UA = 'TrackingTest/1.0 (+vitest)';

const HTML = [
  '<html><body>',
  '<p><a href="https://shop.example.org/order?id=42&amp;ref=mail">Your order</a></p>',
  '<p><a class="btn" href=\'http://docs.example.org/help\'>Help</a></p>',
  '<p><a href="mailto:support@example.test">Mail us</a> or <a href="#top">top</a></p>',
  '</body></html>',
].join('\n');

/** GET without following redirects (the targets are not reachable from a test). */
function get(url: string, headers: Record<string, string> = {}) {
  return fetch(url, { redirect: 'manual', headers: { 'user-agent': UA, ...headers } });
}

function hrefs(html: string): string[] {
  return [...html.matchAll(/<a\b[^>]*?href=(["'])(.*?)\1/g)].map((m) => m[2]!);
}

describe('tracking on the server origin', () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer({ sendRate: 10_000 });
  });
  afterAll(() => s.close());

  const events = (id: string, type: string) => outbox(s, s.seed!.workspace_id, id).filter((e) => e.type === type);

  async function sendHtml(over: Record<string, unknown> = {}) {
    const to = rcpt();
    const a = await sendOk(
      s,
      mail({ to, subject: 'Tracked', html: HTML, text: 'See https://shop.example.org/order?id=42', ...over }),
    );
    await s.settle();
    return { id: a.id, to, caught: await caughtDetail(s, a.id) };
  }

  it('clicks are tracked by default: http(s) links point at /t/c/… on the server; mailto and anchors are left alone', async () => {
    const { caught } = await sendHtml();
    const links = hrefs(caught.html);
    expect(links).toHaveLength(4);
    expect(links[0]).toMatch(new RegExp(`^${s.origin}/t/c/[A-Za-z0-9_.-]+$`));
    expect(links[1]).toMatch(new RegExp(`^${s.origin}/t/c/[A-Za-z0-9_.-]+$`));
    expect(links[0]).not.toBe(links[1]);
    expect(links[2]).toBe('mailto:support@example.test');
    expect(links[3]).toBe('#top');
    expect(caught.html).not.toContain('shop.example.org');
    // The text part is not rewritten; opens are off by default (no pixel).
    expect(caught.text).toContain('https://shop.example.org/order?id=42');
    expect(caught.html).not.toContain('/t/o/');
  });

  it('a click redirects (302) to the original URL, with &amp; decoded, and records email.clicked {url, user_agent, ip}', async () => {
    const { id, to, caught } = await sendHtml({ tags: [{ name: 'campaign', value: 'orders' }] });
    const [order, help] = hrefs(caught.html);
    const before = events(id, 'email.clicked').length;
    expect(before).toBe(0);

    const r = await get(order!);
    expect(r.status).toBe(302);
    expect(r.headers.get('location')).toBe('https://shop.example.org/order?id=42&ref=mail');
    const r2 = await get(help!);
    expect(r2.status).toBe(302);
    expect(r2.headers.get('location')).toBe('http://docs.example.org/help');

    const clicks = events(id, 'email.clicked');
    expect(clicks).toHaveLength(2);
    expect(clicks[0]!.data).toEqual({
      message_id: id,
      to,
      from: FROM,
      subject: 'Tracked',
      tags: [{ name: 'campaign', value: 'orders' }],
      url: 'https://shop.example.org/order?id=42&ref=mail',
      user_agent: UA,
      ip: expect.stringContaining('127.0.0.1'),
    });
    expect(clicks[1]!.data.url).toBe('http://docs.example.org/help');
    // And in the message timeline, after the delivery.
    const m = await getMessage(s, id);
    expect(m.events.map((e) => e.type)).toEqual([
      'email.queued',
      'email.sent',
      'email.delivered',
      'email.clicked',
      'email.clicked',
    ]);
    expect(m.events[3]!.detail).toEqual({
      to,
      url: 'https://shop.example.org/order?id=42&ref=mail',
      user_agent: UA,
      ip: expect.any(String),
    });
    // Every click counts.
    expect((await get(order!)).status).toBe(302);
    expect(events(id, 'email.clicked')).toHaveLength(3);
  });

  it('tracking.clicks false leaves the links alone', async () => {
    const { id, caught } = await sendHtml({ tracking: { clicks: false } });
    expect(hrefs(caught.html)).toEqual([
      'https://shop.example.org/order?id=42&amp;ref=mail',
      'http://docs.example.org/help',
      'mailto:support@example.test',
      '#top',
    ]);
    expect(caught.html).not.toContain('/t/c/');
    expect(caught.html).not.toContain('/t/o/');
    expect(events(id, 'email.clicked')).toEqual([]);
  });

  it('tracking.opens true adds a pixel whose GET returns image/gif and records email.opened {user_agent, ip}', async () => {
    const { id, to, caught } = await sendHtml({ tracking: { opens: true, clicks: false } });
    const pixel = new RegExp(`<img src="(${s.origin}/t/o/[A-Za-z0-9_.-]+)"`).exec(caught.html)?.[1];
    expect(pixel, caught.html).toBeDefined();
    // Inside the body, links untouched.
    expect(caught.html.indexOf(pixel!)).toBeLessThan(caught.html.indexOf('</body>'));
    expect(caught.html).not.toContain('/t/c/');

    const r = await get(pixel!);
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toBe('image/gif');
    const bytes = Buffer.from(await r.arrayBuffer());
    expect(bytes.subarray(0, 6).toString('latin1')).toBe('GIF89a');
    expect(r.headers.get('cache-control')).toMatch(/no-store/);

    const opened = events(id, 'email.opened');
    expect(opened).toHaveLength(1);
    expect(opened[0]!.data).toEqual({
      message_id: id,
      to,
      from: FROM,
      subject: 'Tracked',
      tags: [],
      user_agent: UA,
      ip: expect.stringContaining('127.0.0.1'),
    });
    const m = await getMessage(s, id);
    expect(m.events.at(-1)).toMatchObject({ type: 'email.opened', detail: { to, user_agent: UA } });
  });

  it('opens and clicks together; HTML without </body> gets the pixel appended', async () => {
    const a = await sendOk(
      s,
      mail({ html: '<p><a href="https://example.org/a">a</a></p>', tracking: { opens: true } }),
    );
    await s.settle();
    const caught = await caughtDetail(s, a.id);
    expect(hrefs(caught.html)[0]).toMatch(new RegExp(`^${s.origin}/t/c/`));
    expect(caught.html).toMatch(new RegExp(`<img src="${s.origin}/t/o/[^"]+"[^>]*>\\s*$`));
  });

  it('a tampered or unknown token → 404 Problem and no event', async () => {
    const { id, caught } = await sendHtml({ tracking: { opens: true } });
    const [link] = hrefs(caught.html);
    const token = link!.slice(link!.lastIndexOf('/') + 1);
    const [payload, mac] = token.split('.');

    // Point the payload at another URL, keep the signature: refused.
    const forged = Buffer.from(JSON.stringify({ m: id, u: 'https://evil.example/phish' })).toString('base64url');
    const variants = [
      `${forged}.${mac}`,
      `${payload}.${mac!.slice(0, -1)}${mac!.endsWith('A') ? 'B' : 'A'}`,
      `${payload}`,
      'garbage',
    ];
    for (const v of variants) {
      const r = await get(`${s.origin}/t/c/${v}`);
      expect(r.status, v).toBe(404);
      expect(r.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      expect(r.headers.get('location')).toBeNull();
      const body = await r.json();
      expect(body.code).toBe('not_found');
    }
    expect(events(id, 'email.clicked')).toEqual([]);

    // A tampered pixel token records no open either.
    const pixel = /\/t\/o\/([A-Za-z0-9_.-]+)"/.exec(caught.html)![1]!;
    const badPixel = await get(`${s.origin}/t/o/${pixel.slice(0, -2)}xx`);
    expect([200, 404]).toContain(badPixel.status);
    expect(events(id, 'email.opened')).toEqual([]);
    // The genuine link still works.
    expect((await get(link!)).status).toBe(302);
    expect(events(id, 'email.clicked')).toHaveLength(1);
  });

  it('opens and clicks of a message to several recipients are attributed to its first To recipient', async () => {
    const first = rcpt('first');
    const a = await sendOk(s, mail({ to: [first, rcpt('second')], cc: [rcpt('cc')], html: HTML }));
    await s.settle();
    const caught = await caughtDetail(s, a.id);
    expect((await get(hrefs(caught.html)[0]!)).status).toBe(302);
    expect(events(a.id, 'email.clicked').map((e) => e.data.to)).toEqual([first]);
  });
});

describe('tracking on the domain’s tracking host', () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer();
  });
  afterAll(() => s.close());

  it('after PATCH tracking_host (and verifying again) links point at that host and still work', async () => {
    const token = await sessionOf(s, seedTenant(s));
    const domainId = s.seed!.domain_id;
    const p = await s.call('PATCH', `/v1/domains/${domainId}`, {
      token,
      body: { tracking_host: 'links.example.test' },
    });
    expect(p.status, p.text).toBe(200);
    expect(p.body.tracking_host).toBe('links.example.test');
    expect(p.body.status).toBe('pending');

    // Until it is verified again, the domain cannot send.
    expectProblem(await send(s, mail({ html: HTML })), 422, 'domain_not_verified');
    const v = await publishAndVerify(s, token, domainId);
    expect(
      v.records.some((r: { kind: string; host: string }) => r.kind === 'tracking' && r.host === 'links.example.test'),
    ).toBe(true);

    const to = rcpt();
    const a = await sendOk(s, mail({ to, html: HTML, tracking: { opens: true } }));
    await s.settle();
    const caught = await caughtDetail(s, a.id);
    expect(caught.dkim).toBe('pass');
    const links = hrefs(caught.html);
    const host = `http://links.example.test:${s.port}`;
    expect(links[0]).toMatch(new RegExp(`^${host}/t/c/[A-Za-z0-9_.-]+$`));
    expect(links[1]).toMatch(new RegExp(`^${host}/t/c/`));
    expect(caught.html).toMatch(new RegExp(`<img src="${host}/t/o/`));
    expect(caught.html).not.toContain(s.origin);

    // The tracking host is a CNAME to this service: the same path answers here.
    const path = new URL(links[0]!).pathname;
    const r = await get(`${s.origin}${path}`);
    expect(r.status).toBe(302);
    expect(r.headers.get('location')).toBe('https://shop.example.org/order?id=42&ref=mail');
    const clicked = outbox(s, s.seed!.workspace_id, a.id).filter((e) => e.type === 'email.clicked');
    expect(clicked).toHaveLength(1);
    expect(clicked[0]!.data).toMatchObject({
      to,
      url: 'https://shop.example.org/order?id=42&ref=mail',
      user_agent: UA,
    });
  });
});
