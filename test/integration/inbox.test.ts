// The sandbox routes the inbox page reads (and the CLI with them): the listing's inbox fields, search, paging,
// deleting one message, read marks, the message HTML as its own document, attachments, the live stream, and who may
// call them (the admin token, or the page's session and its view tokens).
import nodemailer from 'nodemailer';
import type Mail from 'nodemailer/lib/mailer/index.js';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { expectProblem } from '../helpers/problems.js';
import { inboxSession } from '../helpers/inbox-session.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { eventsOf } from '../helpers/sse.js';

const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==',
  'base64',
);

describe('inbox routes', () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer();
  });
  afterAll(() => s?.close());
  beforeEach(async () => {
    expect((await s.admin('DELETE', '/sandbox/messages')).status).toBe(204);
  });

  const smtp = async (mail: Mail.Options) => {
    const t = nodemailer.createTransport({ host: '127.0.0.1', port: s.smtpPort, secure: false, ignoreTLS: true });
    try {
      await t.sendMail({ from: 'alice@example.test', to: 'bob@example.test', ...mail });
    } finally {
      t.close();
    }
  };
  const v1 = async (body: Record<string, unknown>) => {
    const r = await s.call('POST', '/v1/emails', {
      token: s.seed!.api_key_test,
      body: { from: 'Shop <orders@example.test>', ...body },
    });
    expect(r.status, r.text).toBe(202);
    return r.body.id as string;
  };
  const list = async (query = '') => {
    const r = await s.admin('GET', `/sandbox/messages${query}`);
    expect(r.status, r.text).toBe(200);
    return r.body as { data: any[]; has_more: boolean };
  };
  const subjects = async (q: string) => (await list(`?q=${encodeURIComponent(q)}`)).data.map((d) => d.subject);

  it('lists status and workspace for /v1 mail, a preview, the attachment marker and the read mark', async () => {
    await smtp({
      subject: 'plain one',
      text: 'Hello Bob,\n\nthe   quarterly report is attached.',
      attachments: [{ filename: 'r.csv', content: 'a,b\n' }],
    });
    const id = await v1({
      to: 'bounce@simulator.test',
      subject: 'will bounce',
      html: '<p>Your <b>order</b> &amp; receipt</p>',
      tags: [{ name: 'category', value: 'receipt' }],
    });
    await s.settle();
    const { data } = await list();
    expect(data).toHaveLength(2);
    expect(data[0]).toMatchObject({
      message_id: id,
      subject: 'will bounce',
      status: 'bounced',
      workspace: { id: s.seed!.workspace_id, name: 'Sandbox' },
      preview: 'Your order & receipt',
      has_attachments: false,
      read: false,
      tags: [{ name: 'category', value: 'receipt' }],
    });
    expect(data[1]).toMatchObject({
      message_id: null,
      status: null,
      workspace: null,
      tags: [],
      preview: 'Hello Bob, the quarterly report is attached.',
      has_attachments: true,
      read: false,
    });

    const m = (await s.admin('GET', `/sandbox/messages/${data[0].id}`)).body;
    expect(m.dkim).toBe('pass');
    expect(m.dkim_domain).toBe('example.test');
    expect(m.events.map((e: { type: string }) => e.type)).toEqual(['email.queued', 'email.sent', 'email.bounced']);
    expect(m.events[2]).toMatchObject({
      id: expect.stringMatching(/^evt_/),
      detail: { to: 'bounce@simulator.test', bounce: { smtp_code: '550' } },
    });
    const other = (await s.admin('GET', `/sandbox/messages/${data[1].id}`)).body;
    expect(other).toMatchObject({ events: null, dkim: 'none', dkim_domain: null, status: null });

    const read = await s.admin('POST', `/sandbox/messages/${data[1].id}/read`);
    expect(read.status).toBe(200);
    expect(read.body).toMatchObject({ id: data[1].id, read: true });
    expect((await list()).data.map((d) => d.read)).toEqual([false, true]);
    expect((await s.admin('POST', `/sandbox/messages/${data[1].id}/unread`)).body.read).toBe(false);
    expectProblem(await s.admin('POST', '/sandbox/messages/eml_doesnotexist/read'), 404, 'not_found');
  });

  it('searches words in any field, to:/from:/subject: in one, phrases exactly, and is:/has: filters', async () => {
    await smtp({
      from: 'Alice Liddell <alice@wonder.test>',
      to: 'hatter@tea.test',
      subject: 'Invitation to tea',
      text: "Six o'clock, bring the dormouse.",
    });
    await smtp({
      from: 'queen@hearts.test',
      to: 'alice@wonder.test',
      subject: 'Croquet tomorrow',
      text: 'Off with their heads if late.',
    });
    await smtp({
      from: 'rabbit@hole.test',
      cc: 'Alice <alice@wonder.test>',
      subject: 'Late, late',
      text: 'For a very important date.',
      attachments: [{ filename: 'watch.png', content: PNG }],
    });

    expect(await subjects('dormouse')).toEqual(['Invitation to tea']);
    expect(await subjects('dorm')).toEqual(['Invitation to tea']); // words match as prefixes
    expect(await subjects('alice')).toEqual(['Late, late', 'Croquet tomorrow', 'Invitation to tea']);
    expect(await subjects('to:alice')).toEqual(['Late, late', 'Croquet tomorrow']); // To or Cc, not From
    expect(await subjects('to:alice@wonder.test')).toEqual(['Late, late', 'Croquet tomorrow']);
    expect(await subjects('from:alice')).toEqual(['Invitation to tea']);
    expect(await subjects('from:"Alice Liddell"')).toEqual(['Invitation to tea']);
    expect(await subjects('subject:late')).toEqual(['Late, late']);
    expect(await subjects('late')).toEqual(['Late, late', 'Croquet tomorrow']); // subject, or body text
    expect(await subjects('"important date"')).toEqual(['Late, late']);
    expect(await subjects('"date important"')).toEqual([]);
    expect(await subjects('from:queen heads')).toEqual(['Croquet tomorrow']);
    expect(await subjects('from:queen dormouse')).toEqual([]);
    expect(await subjects('has:attachment')).toEqual(['Late, late']);
    expect(await subjects('CROQUET')).toEqual(['Croquet tomorrow']);

    const [late] = (await list('?q=late')).data;
    await s.admin('POST', `/sandbox/messages/${late.id}/read`);
    expect(await subjects('is:unread')).toEqual(['Croquet tomorrow', 'Invitation to tea']);
    expect(await subjects('is:read')).toEqual(['Late, late']);
    expect(await subjects('is:unread late')).toEqual(['Croquet tomorrow']);
    // Search syntax is text: quotes, colons and operators of the index are only words.
    for (const q of ['"unclosed', 'OR AND NOT', 'subject:', '*', 'NEAR(a b)', 'to:"', '"""']) {
      const r = await s.admin('GET', `/sandbox/messages?q=${encodeURIComponent(q)}`);
      expect(r.status, q).toBe(200);
    }
    expect(await subjects('nothing-like-this')).toEqual([]);
  });

  it('finds a word that is only in the HTML part', async () => {
    await smtp({
      subject: 'both parts',
      text: 'Your order has shipped.',
      html: '<p>Your order has shipped.</p><p>Track ZX81 here</p>',
    });
    await smtp({ subject: 'text only', text: 'Your order has shipped, ZX80.' });
    expect(await subjects('zx81')).toEqual(['both parts']);
    expect(await subjects('track zx81')).toEqual(['both parts']);
    expect(await subjects('shipped')).toEqual(['text only', 'both parts']);
  });

  it('filters by tag:, status:, cc:, before:/after:, larger:/smaller:, and "-" excludes any part', async () => {
    const tagged = await v1({
      to: 'delivered@simulator.test',
      subject: 'pro welcome',
      text: 'Welcome',
      tags: [
        { name: 'plan', value: 'pro' },
        { name: 'user', value: 'Jürgen' },
      ],
    });
    // (Labelled: bounce@simulator.test itself is suppressed since it bounced in an earlier test.)
    await v1({
      to: 'bounce+tags@simulator.test',
      subject: 'free welcome',
      text: 'Welcome',
      tags: [{ name: 'plan', value: 'free' }],
    });
    await s.settle();
    await s.advance(3600);
    const later = (await s.admin('GET', '/sandbox/clock')).body.now as string;
    await smtp({
      from: 'queen@hearts.test',
      to: 'alice@wonder.test',
      cc: ['Hatter <hatter@tea.test>', 'march.hare@tea.test'],
      subject: 'big croquet',
      text: 'Off with their heads',
      attachments: [{ filename: 'flamingo.bin', content: Buffer.alloc(40_000, 1) }],
    });

    expect(await subjects('tag:plan')).toEqual(['free welcome', 'pro welcome']);
    expect(await subjects('tag:PLAN=pro')).toEqual(['pro welcome']);
    expect(await subjects('tag:user=Jürgen')).toEqual(['pro welcome']);
    expect(await subjects('tag:plan=pr')).toEqual([]); // a value matches whole
    expect(await subjects('-tag:plan')).toEqual(['big croquet']);
    expect(await subjects('welcome -tag:plan=free')).toEqual(['pro welcome']);

    expect(await subjects('status:delivered')).toEqual(['pro welcome']);
    expect(await subjects('status:bounced')).toEqual(['free welcome']);
    // Mail from other programs has no status: it is not delivered, and it is not bounced either.
    expect(await subjects('-status:delivered')).toEqual(['big croquet', 'free welcome']);

    expect(await subjects('cc:hatter')).toEqual(['big croquet']);
    expect(await subjects('cc:TEA.test')).toEqual(['big croquet']);
    expect(await subjects('cc:alice')).toEqual([]); // To, not Cc
    expect(await subjects('-cc:hatter')).toEqual(['free welcome', 'pro welcome']);

    expect(await subjects(`after:${later}`)).toEqual(['big croquet']);
    expect(await subjects(`before:${later}`)).toEqual(['free welcome', 'pro welcome']);
    expect(await subjects(`-before:${later}`)).toEqual(['big croquet']);
    const day = later.slice(0, 10);
    const next = new Date(Date.parse(day) + 86_400_000).toISOString().slice(0, 10);
    expect(await subjects(`before:${next}`)).toHaveLength(3);
    expect(await subjects(`after:${next}`)).toEqual([]);

    expect(await subjects('larger:30KB')).toEqual(['big croquet']);
    expect(await subjects('smaller:30KB')).toEqual(['free welcome', 'pro welcome']);
    expect(await subjects('larger:1MB')).toEqual([]);

    // Exclusion of words and fields, with and without words wanted.
    expect(await subjects('welcome -free')).toEqual(['pro welcome']);
    expect(await subjects('-welcome')).toEqual(['big croquet']);
    expect(await subjects('-from:queen')).toEqual(['free welcome', 'pro welcome']);
    expect(await subjects('-"off with"')).toEqual(['free welcome', 'pro welcome']);
    expect(await subjects('welcome -status:bounced -is:read')).toEqual(['pro welcome']);
    expect((await list('?q=tag:plan=pro')).data[0].message_id).toBe(tagged);
  });

  it('answers an operator it does not know, or a value an operator does not take, with a 400 naming the field', async () => {
    await smtp({ subject: 'label:work', text: 'x' });
    for (const [q, says] of [
      [
        'label:work',
        /"label:" is no search operator; the operators are from:, to:, cc:, subject:, tag:, status:, before:, after:, larger:, smaller:, is:read, is:unread, has:attachment/,
      ],
      ['-foo:bar', /"foo:" is no search operator/],
      ['before:someday', /before: takes a date \(2026-05-01\) or a date-time/],
      ['status:lost', /status: takes one of queued, scheduled, sending, sent, delivered/],
      ['larger:huge', /larger: takes a size such as 10KB/],
      ['is:starred', /is: takes read or unread/],
    ] as const) {
      const r = await s.admin('GET', `/sandbox/messages?q=${encodeURIComponent(q)}`);
      expectProblem(r, 400, 'invalid_request');
      expect(r.body.detail, q).toMatch(says);
      expect(r.body.errors, q).toEqual([{ path: 'q', code: 'invalid', message: expect.any(String) }]);
    }
    // Quoted, it is text.
    expect(await subjects('"label:work"')).toEqual(['label:work']);
  });

  it('claims a message for a wait once: of ten claims at once one takes it; the listing says so and filters', async () => {
    await smtp({ subject: 'one' });
    await smtp({ subject: 'two' });
    const [two, one] = (await list()).data;
    expect([one.claimed, two.claimed]).toEqual([false, false]);
    const claims = await Promise.all(
      Array.from({ length: 10 }, () => s.admin('POST', `/sandbox/messages/${one.id}/claim`)),
    );
    expect(claims.map((r) => r.status)).toEqual(Array(10).fill(200));
    expect(claims.filter((r) => r.body.taken)).toHaveLength(1);
    expect(claims[0]?.body.message).toMatchObject({ id: one.id, claimed: true });
    // Each answer has the message in full, as a read gives it.
    const read = await s.admin('GET', `/sandbox/messages/${one.id}`);
    for (const c of claims) expect(c.body.message).toEqual(read.body);
    expect((await list('?claimed=false')).data.map((d) => d.subject)).toEqual(['two']);
    expect((await list('?claimed=true')).data.map((d) => d.subject)).toEqual(['one']);
    expect((await list()).data.map((d) => d.claimed)).toEqual([false, true]);
    expectProblem(await s.admin('POST', '/sandbox/messages/eml_000000000000000000000000/claim'), 404, 'not_found');
    expectProblem(await s.admin('GET', '/sandbox/messages?claimed=maybe'), 400, 'invalid_request');
  });

  it('pages a search with limit and after, and combines it with the workspace filter', async () => {
    for (const n of [1, 2, 3, 4, 5]) await smtp({ subject: `report ${n}`, text: n % 2 ? 'odd report' : 'even report' });
    await v1({ to: 'delivered@simulator.test', subject: 'report 6', text: 'odd report from the api' });
    await s.settle();
    const first = await list('?q=odd&limit=2');
    expect(first.data.map((d) => d.subject)).toEqual(['report 6', 'report 5']);
    expect(first.has_more).toBe(true);
    const second = await list(`?q=odd&limit=2&after=${first.data[1].id}`);
    expect(second.data.map((d) => d.subject)).toEqual(['report 3', 'report 1']);
    expect(second.has_more).toBe(false);
    expect((await list(`?q=odd&workspace_id=${s.seed!.workspace_id}`)).data.map((d) => d.subject)).toEqual([
      'report 6',
    ]);
    expect((await list(`?q=even&workspace_id=${s.seed!.workspace_id}`)).data).toEqual([]);
  });

  it('deletes one message (then 404), leaving the others', async () => {
    await smtp({ subject: 'keep' });
    await smtp({ subject: 'drop', text: 'unique-word-zebra' });
    const drop = (await list()).data.find((d) => d.subject === 'drop');
    const del = await s.admin('DELETE', `/sandbox/messages/${drop.id}`);
    expect(del.status).toBe(204);
    expect((await list()).data.map((d) => d.subject)).toEqual(['keep']);
    expect(await subjects('zebra')).toEqual([]);
    expectProblem(await s.admin('GET', `/sandbox/messages/${drop.id}`), 404, 'not_found');
    expectProblem(await s.admin('DELETE', `/sandbox/messages/${drop.id}`), 404, 'not_found');
  });

  it('serves the HTML as its own document: inline images as data URLs, a policy that allows no script, links opening outside', async () => {
    await smtp({
      subject: 'html',
      html: '<html><head><meta http-equiv="refresh" content="0;url=https://example.com/"></head><body><p>Logo <img src="cid:logo@x"></p><img src="https://tracker.example/p.gif"><script>alert(1)</script></body></html>',
      attachments: [{ filename: 'logo.png', content: PNG, cid: 'logo@x' }],
    });
    const { id } = (await list()).data[0];
    const res = await fetch(`${s.origin}/sandbox/messages/${id}/html`, {
      headers: { authorization: `Bearer ${s.adminToken}` },
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
    const csp = res.headers.get('content-security-policy')!;
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain('img-src data:;');
    // Its origin is kept (the page reads its height); nothing in it may run, so nothing can use it.
    expect(csp).toMatch(/sandbox allow-same-origin allow-popups allow-popups-to-escape-sandbox$/);
    expect(csp).not.toMatch(/script-src|allow-scripts/);
    const html = await res.text();
    expect(html).toContain(`<img src="data:image/png;base64,${PNG.toString('base64')}">`);
    expect(html).toContain('<head><base target="_blank">');
    expect(html).not.toContain('http-equiv="refresh"');

    const remote = await fetch(`${s.origin}/sandbox/messages/${id}/html?remote_images=allow`, {
      headers: { authorization: `Bearer ${s.adminToken}` },
    });
    expect(remote.headers.get('content-security-policy')).toContain('img-src data: http: https:');
    expectProblem(await s.admin('GET', `/sandbox/messages/${id}/html?remote_images=yes`), 400, 'invalid_request');

    await smtp({ subject: 'text only', text: 'no html here' });
    const textOnly = (await list()).data[0];
    expectProblem(await s.admin('GET', `/sandbox/messages/${textOnly.id}/html`), 404, 'not_found');
  });

  it('serves the HTML as a reader in light or dark mode sees it: its colour-scheme styles answered, or its colours inverted', async () => {
    const html = `<!doctype html><html><head><meta name="color-scheme" content="light dark">
<style>:root { color-scheme: light dark } body { color: #111 }
@media (prefers-color-scheme: dark) { body { color: #eee } }
@media screen and (prefers-color-scheme: light) { .logo { display: block } }</style>
<link rel="stylesheet" href="https://cdn.example/dark.css" media="(prefers-color-scheme: dark)"></head>
<body><picture><source srcset="https://cdn.example/d.png" media="(prefers-color-scheme: dark)"><img src="cid:x"></picture>
<p>Write prefers-color-scheme: dark in your CSS.</p></body></html>`;
    await smtp({ subject: 'schemes', html });
    const { id } = (await list()).data[0];
    const get = async (query: string) => {
      const res = await fetch(`${s.origin}/sandbox/messages/${id}/html${query}`, {
        headers: { authorization: `Bearer ${s.adminToken}` },
      });
      expect(res.status).toBe(200);
      return res.text();
    };
    // Without an appearance, the browser's preference decides: the media queries are as the message wrote them.
    expect(await get('')).toContain('@media (prefers-color-scheme: dark) { body { color: #eee } }');

    const dark = await get('?appearance=dark');
    expect(dark).toContain('<meta name="color-scheme" content="dark">');
    expect(dark).toContain(':root { color-scheme: dark }');
    expect(dark).toContain('@media (min-width: 0px) { body { color: #eee } }');
    expect(dark).toContain('@media screen and (max-width: -1px) { .logo { display: block } }');
    expect(dark).toContain('href="https://cdn.example/dark.css" media="(min-width: 0px)"');
    expect(dark).toContain('<source srcset="https://cdn.example/d.png" media="(min-width: 0px)">');
    expect(dark).toContain('<p>Write prefers-color-scheme: dark in your CSS.</p>'); // text is left alone
    expect(dark).not.toContain('backdrop-filter');

    const light = await get('?appearance=light');
    expect(light).toContain('<meta name="color-scheme" content="light">');
    expect(light).toContain('@media (max-width: -1px) { body { color: #eee } }');
    expect(light).toContain('@media screen and (min-width: 0px) { .logo { display: block } }');

    const inverted = await get('?appearance=inverted');
    expect(inverted).toContain('@media (max-width: -1px) { body { color: #eee } }'); // light styles, then inverted
    expect(inverted).toMatch(
      /<head><base target="_blank"><style>[^<]*backdrop-filter:invert\(1\) hue-rotate\(180deg\)/,
    );
    expectProblem(await s.admin('GET', `/sandbox/messages/${id}/html?appearance=sepia`), 400, 'invalid_request');
  });

  it('serves each attachment byte for byte as a download, numbered from 0 in the order of the message', async () => {
    const bin = Buffer.from([0, 1, 2, 3, 250, 251, 252, 253, 254, 255]);
    await smtp({
      subject: 'files',
      text: 'two files',
      attachments: [
        { filename: 'data.bin', content: bin, contentType: 'application/octet-stream' },
        { filename: 'page "one" ü.html', content: '<script>alert(1)</script>', contentType: 'text/html' },
      ],
    });
    const { id } = (await list()).data[0];
    const m = (await s.admin('GET', `/sandbox/messages/${id}`)).body;
    expect(m.attachments.map((a: { filename: string }) => a.filename)).toEqual(['data.bin', 'page "one" ü.html']);

    const get = (n: string) =>
      fetch(`${s.origin}/sandbox/messages/${id}/attachments/${n}`, {
        headers: { authorization: `Bearer ${s.adminToken}` },
      });
    const first = await get('0');
    expect(first.status).toBe(200);
    expect(Buffer.from(await first.arrayBuffer()).equals(bin)).toBe(true);
    expect(first.headers.get('content-disposition')).toBe(`attachment; filename="data.bin"; filename*=UTF-8''data.bin`);
    const second = await get('1');
    expect(await second.text()).toBe('<script>alert(1)</script>');
    // Never rendered as a page of this origin.
    expect(second.headers.get('content-disposition')).toBe(
      `attachment; filename="page _one_ _.html"; filename*=UTF-8''page%20%22one%22%20%C3%BC.html`,
    );
    expect(second.headers.get('x-content-type-options')).toBe('nosniff');
    expect(second.headers.get('content-security-policy')).toBe("default-src 'none'; sandbox");
    for (const n of ['2', '-1', 'x'])
      expectProblem(await s.admin('GET', `/sandbox/messages/${id}/attachments/${n}`), 404, 'not_found');
  });

  describe('who may call', () => {
    const session = () => inboxSession(s.origin, s.adminToken);

    it('signs in from the printed address with a redirect that hands the page a session, and no cookie', async () => {
      const res = await fetch(`${s.origin}/messages/eml_x?q=a&token=${s.adminToken}`, { redirect: 'manual' });
      expect(res.status).toBe(303);
      expect(res.headers.get('location')).toMatch(/^\/messages\/eml_x\?q=a#session=ses_[\w-]+\.[\w-]+$/);
      expect(res.headers.get('set-cookie')).toBeNull();
      expect(res.headers.get('location')).not.toContain(s.adminToken);
      // The cookie of older versions, a bearer credential, is taken away at the next sign-in.
      const old = await fetch(`${s.origin}/?token=${s.adminToken}`, {
        redirect: 'manual',
        headers: { cookie: 'svc_admin=abc' },
      });
      expect(old.headers.get('set-cookie')).toMatch(/^svc_admin=; Max-Age=0; Path=\//);
      // The form signs in as the address does, and goes on only to a page of the inbox.
      const form = (next: string) =>
        fetch(`${s.origin}/sign-in?next=${encodeURIComponent(next)}`, {
          method: 'POST',
          redirect: 'manual',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: `token=${s.adminToken}`,
        });
      expect((await form('/messages/eml_y')).headers.get('location')).toMatch(/^\/messages\/eml_y#session=ses_/);
      for (const elsewhere of ['//evil.example/', 'https://evil.example/', '/sandbox/messages', '/\\evil.example'])
        expect((await form(elsewhere)).headers.get('location'), elsewhere).toMatch(/^\/#session=ses_/);
    });

    it('the session opens the sandbox routes as the admin token does, and nothing else does', async () => {
      const bearer = await session();
      expect((await s.call('GET', '/sandbox/messages', { token: bearer })).status).toBe(200);
      expect((await s.call('POST', '/sandbox/clock', { token: bearer, body: { advance_seconds: 60 } })).status).toBe(
        200,
      );
      expect((await s.call('GET', '/sandbox/messages', { token: s.adminToken })).status).toBe(200);
      // Sent as a cookie, from a page of this origin or not, it is nothing.
      for (const headers of [
        { cookie: `svc_admin=${bearer}` },
        { cookie: `svc_admin=${bearer}`, 'sec-fetch-site': 'same-origin' },
      ] as Record<string, string>[])
        expectProblem(await s.call('GET', '/sandbox/messages', { headers }), 401, 'missing_credentials');
      // A session changed by a character, made for another server, or a view token used as one: refused.
      const forged = bearer.slice(0, -1) + (bearer.endsWith('A') ? 'B' : 'A');
      expectProblem(await s.call('GET', '/sandbox/messages', { token: forged }), 401, 'invalid_token');
      const other = await startTestServer();
      try {
        const theirs = await inboxSession(other.origin, other.adminToken);
        expectProblem(await s.call('GET', '/sandbox/messages', { token: theirs }), 401, 'invalid_token');
      } finally {
        await other.close();
      }
    });

    it('the page starts from its session: renewed, with the stream, the workspaces and the seeded key; nothing without', async () => {
      // The workspaces offered to filter by are those of the mail caught.
      await v1({ to: 'ada@example.org', subject: 'From a workspace', text: 'x' });
      await s.settle();
      const bearer = await session();
      const start = await s.call('GET', '/inbox/session', { token: bearer });
      expect(start.status).toBe(200);
      expect(start.body).toMatchObject({
        session: expect.stringMatching(/^ses_/),
        stream: expect.stringMatching(/^view_/),
        workspaces: [{ id: s.seed!.workspace_id, name: expect.any(String) }],
        first_send: { api: `${s.origin}/v1`, seed: { key: s.seed!.api_key_test, domain: 'example.test' } },
      });
      expect(Date.parse(start.body.expires_at)).toBeGreaterThan(Date.now() + 23 * 3600_000);
      expect((await s.call('GET', '/sandbox/messages', { token: start.body.session })).status).toBe(200);
      expectProblem(await s.call('GET', '/inbox/session'), 401, 'invalid_token');
      // The admin token is no session: the page's start is the page's.
      expectProblem(await s.call('GET', '/inbox/session', { token: s.adminToken }), 401, 'invalid_token');
    });

    it("a view token opens that one message's views by address, and nothing else", async () => {
      await smtp({ subject: 'Seen', html: '<p>Seen</p>', attachments: [{ filename: 'a.txt', content: 'a' }] });
      await smtp({ subject: 'Other', html: '<p>Other</p>' });
      const [other, seen] = (await s.admin('GET', '/sandbox/messages')).body.data as { id: string }[];
      const bearer = await session();
      const view = (await s.call('GET', `/inbox/views/${seen!.id}`, { token: bearer })).body.view as string;
      expect(view).toMatch(/^view_/);
      const open = (path: string) => s.call('GET', path);
      expect((await open(`/sandbox/messages/${seen!.id}/html?view=${view}&appearance=dark`)).text).toContain('Seen');
      expect((await open(`/sandbox/messages/${seen!.id}/raw?view=${view}`)).status).toBe(200);
      expect((await open(`/sandbox/messages/${seen!.id}/attachments/0?view=${view}`)).text).toBe('a');
      expectProblem(await open(`/sandbox/messages/${other!.id}/html?view=${view}`), 401, 'invalid_token');
      expectProblem(await open(`/sandbox/messages/${seen!.id}?view=${view}`), 401, 'missing_credentials');
      expectProblem(await open(`/sandbox/stream?view=${view}`), 401, 'missing_credentials');
      expectProblem(await s.call('GET', '/sandbox/messages', { token: view }), 401, 'invalid_token');
      expectProblem(await s.call('GET', `/inbox/views/${seen!.id}`), 401, 'invalid_token');
    });

    it('the page is the same for everyone and holds nothing of the sandbox; the sign-in says where the token is', async () => {
      await smtp({ subject: 'Private subject' });
      for (const path of ['/', '/messages/eml_x']) {
        const page = await fetch(`${s.origin}${path}`);
        expect(page.status).toBe(200);
        expect(page.headers.get('set-cookie')).toBeNull();
        expect(page.headers.get('content-security-policy')).toContain("script-src 'self'");
        expect(page.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
        const text = await page.text();
        expect(text).toContain('<script src="/inbox.js" defer>');
        for (const secret of [s.seed!.api_key_test, s.seed!.workspace_id, s.adminToken, 'Private subject'])
          expect(text).not.toContain(secret);
      }
      for (const path of ['/sign-in', '/sign-in?ended', `/?token=${s.adminToken}x`]) {
        const res = await fetch(`${s.origin}${path}`, { redirect: 'manual' });
        expect(res.status, path).toBe(path.includes('token=') ? 401 : 200);
        expect(res.headers.get('set-cookie'), path).toBeNull();
        const text = await res.text();
        expect(text, path).toContain('the <code>inbox</code> address');
        expect(text, path).toContain('<code>admin-token</code> file');
        expect(text, path).toContain('<form method="post"');
        expect(text.includes('That is not this server'), path).toBe(path.includes('token='));
        expect(text.includes('Your session of this inbox ended'), path).toBe(path.endsWith('ended'));
      }
    });
  });
});

describe('GET /sandbox/stream', () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer();
  });
  afterAll(() => s?.close());

  const open = async (query = '') => {
    const res = await fetch(`${s.origin}/sandbox/stream${query}`, {
      headers: { authorization: `Bearer ${s.adminToken}` },
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    return { res, events: eventsOf(res) };
  };
  /** Sends to the complaint simulator and runs the delivery: the message is caught, delivered, then complained of. */
  const sendComplained = async (to: string, subject: string): Promise<string> => {
    const accepted = await s.call('POST', '/v1/emails', {
      token: s.seed!.api_key_test,
      body: { from: 'orders@example.test', to, subject, text: 'hi' },
    });
    expect(accepted.status).toBe(202);
    await s.settle();
    return accepted.body.id;
  };
  /** A stream's events up to the first `complained` status. */
  const untilComplained = async (events: ReturnType<typeof eventsOf>) => {
    const seen: { event: string; data: any }[] = [];
    while (!seen.some((e) => e.event === 'status' && e.data.status === 'complained')) seen.push(await events.next());
    return seen;
  };

  it('is refused without credentials, like every sandbox route', async () => {
    expectProblem(await s.call('GET', '/sandbox/stream'), 401, 'missing_credentials');
    expectProblem(await s.call('GET', '/sandbox/stream', { token: 'adm_wrong' }), 401, 'missing_credentials');
  });

  it('tells caught mail, status changes, read marks, deletions and clock moves as they happen', async () => {
    const { events } = await open();
    const messageId = await sendComplained('complaint@simulator.test', 'live one');

    // The message is caught once, then its status moves through sent to delivered and complained.
    const seen = await untilComplained(events);
    const caught = seen.filter((e) => e.event === 'message');
    expect(caught).toHaveLength(1);
    expect(caught[0]!.data).toMatchObject({
      subject: 'live one',
      message_id: messageId,
      workspace: { name: 'Sandbox' },
      read: false,
    });
    const statuses = seen.filter((e) => e.event === 'status').map((e) => e.data);
    expect(statuses.every((d) => d.message_id === messageId)).toBe(true);
    expect(statuses.at(-1)).toEqual({
      message_id: messageId,
      status: 'complained',
      event_type: 'email.complained',
    });

    const id = caught[0]!.data.id;
    await s.admin('POST', `/sandbox/messages/${id}/read`);
    expect(await events.next()).toEqual({ event: 'read', data: { id, read: true } });
    await s.admin('DELETE', `/sandbox/messages/${id}`);
    expect(await events.next()).toEqual({ event: 'deleted', data: { ids: [id] } });
    await s.admin('DELETE', '/sandbox/messages');
    expect(await events.next()).toEqual({ event: 'deleted', data: { all: true } });
    const moved = await s.admin('POST', '/sandbox/clock', { advance_seconds: 30 });
    expect(await events.next()).toEqual({ event: 'clock', data: { now: moved.body.now, mode: 'manual' } });
    await events.close();
  });

  it('sends a stream that names its events (?events=message) those alone, while another hears every change', async () => {
    const all = await open();
    const mail = await open('?events=message');
    await sendComplained('complaint+first@simulator.test', 'first');
    const seen = await untilComplained(all.events);
    const id = seen.find((e) => e.event === 'message')!.data.id;
    await s.admin('POST', `/sandbox/messages/${id}/read`);
    expect(await all.events.next()).toMatchObject({ event: 'read' });
    await s.admin('POST', '/sandbox/clock', { advance_seconds: 30 });
    expect(await all.events.next()).toMatchObject({ event: 'clock' });

    // The named stream heard the first message, then nothing of its statuses, read mark or the clock: the second next.
    const t = nodemailer.createTransport({ host: '127.0.0.1', port: s.smtpPort, secure: false, ignoreTLS: true });
    await t.sendMail({ from: 'x@example.test', to: 'y@example.test', subject: 'second', text: 'x' });
    t.close();
    expect(await mail.events.next()).toMatchObject({ event: 'message', data: { subject: 'first' } });
    expect(await mail.events.next()).toMatchObject({ event: 'message', data: { subject: 'second' } });
    await Promise.all([all.events.close(), mail.events.close()]);
  });

  it('starts a stream that asks for status changes from when it opens, though only a mail stream was open before', async () => {
    const mail = await open('?events=message');
    const first = await sendComplained('complaint+before@simulator.test', 'before');
    expect(await mail.events.next()).toMatchObject({ event: 'message', data: { message_id: first } });

    const statuses = await open('?events=status');
    const second = await sendComplained('complaint+after@simulator.test', 'after');
    const told = await untilComplained(statuses.events);
    expect(told.every((e) => e.event === 'status' && e.data.message_id === second)).toBe(true);
    await Promise.all([mail.events.close(), statuses.events.close()]);
  });

  it('refuses an event name it does not send, naming those it does', async () => {
    const res = await s.call('GET', '/sandbox/stream?events=message,caught', { token: s.adminToken });
    expectProblem(res, 422, 'validation_failed');
    expect(res.body.detail).toMatch(/"caught" is no event of the stream; name some of message, status, deleted/);
  });

  it('tells every open stream, and ends them all when the server shuts down', async () => {
    const a = await open();
    const b = await open();
    const t = nodemailer.createTransport({ host: '127.0.0.1', port: s.smtpPort, secure: false, ignoreTLS: true });
    await t.sendMail({ from: 'x@example.test', to: 'y@example.test', subject: 'to both', text: 'x' });
    t.close();
    expect((await a.events.next()).data.subject).toBe('to both');
    expect((await b.events.next()).data.subject).toBe('to both');
    await s.close();
    await Promise.all([a.events.ended(), b.events.ended()]);
  });
});
