// GET /sandbox/messages/{id}/checks on the real server: a /v1 newsletter and receipt from the seeded domain, mail
// another program drops into the sink, links against a real website on loopback; who may read a report, that it is
// kept, and that it goes when its message goes, whichever way.
import { readFileSync } from 'node:fs';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import nodemailer, { type SendMailOptions } from 'nodemailer';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { MessageCheck, MessageChecks } from '../../src/contract/checks.js';
import { DB_FILE } from '../../src/server/store/db.js';
import { expectProblem } from '../helpers/problems.js';
import { inboxSession } from '../helpers/inbox-session.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { startSite, type Site } from '../helpers/site.js';

const fixture = (name: string) => readFileSync(new URL(`../../fixtures/checks/${name}`, import.meta.url), 'utf8');
const checkOf = (r: MessageChecks, id: MessageCheck['id']) => r.checks.find((c) => c.id === id)!;

/** Sends through /v1 with the seeded test key and returns the caught message's id. */
async function sendV1(s: TestServer, body: Record<string, unknown>): Promise<string> {
  const r = await s.call('POST', '/v1/emails', {
    token: s.ready.seed!.api_key_test!,
    body: { from: 'The Shop <news@example.test>', to: 'ada@example.org', subject: 'Hello', ...body },
  });
  expect(r.status, r.text).toBe(202);
  await s.settle();
  const caught = await s.admin('GET', '/sandbox/messages?limit=1');
  return caught.body.data[0].id;
}

/** Hands a message to the sink as another program would, and returns its id. */
async function drop(s: TestServer, mail: SendMailOptions): Promise<string> {
  const t = nodemailer.createTransport({ host: '127.0.0.1', port: s.smtpPort, secure: false, ignoreTLS: true });
  await t.sendMail(mail);
  t.close();
  return (await s.admin('GET', '/sandbox/messages?limit=1')).body.data[0].id;
}

const checks = async (s: TestServer, id: string, query = '') => {
  const r = await s.admin('GET', `/sandbox/messages/${id}/checks${query}`);
  expect(r.status, r.text).toBe(200);
  return r.body as MessageChecks;
};

describe('message checks', () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer();
  });
  afterAll(() => s.close());

  it("checks a /v1 newsletter as its author wrote it: tracking undone, Outlook's lack of flexbox at its line", async () => {
    const id = await sendV1(s, {
      subject: 'Spring has arrived',
      html: fixture('newsletter.html'),
      text: fixture('newsletter.txt'),
      tracking: { opens: true, clicks: true },
    });
    // The HTML as caught carries the tracked links and the pixel.
    const caught = (await s.admin('GET', `/sandbox/messages/${id}`)).body;
    expect(caught.html).toContain('/t/c/');
    expect(caught.html).toContain('/t/o/');

    const r = await checks(s, id);
    expect(r.message_id).toBe(id);
    expect(r.checks.map((c) => c.id)).toEqual([
      'html-compatibility',
      'links',
      'authentication',
      'content',
      'accessibility',
      'spam',
    ]);
    const compat = checkOf(r, 'html-compatibility');
    expect(compat.status).toBe('warning');
    expect(compat.data_version).toMatch(/^caniemail 2\.0\.2/);
    expect(compat.findings.find((f) => f.rule === 'css-display-flex')).toMatchObject({ line: 10, column: 13 });
    expect(r.summary.score).toBe(compat.score);
    expect(r.summary.warnings).toBe(
      r.checks.reduce((n, c) => n + c.findings.filter((f) => f.severity === 'warning').length, 0),
    );

    // Every link as written, marked tracked; no tracking URL and no pixel among them.
    const links = checkOf(r, 'links').links!;
    expect(links.map((l) => l.url)).toContain('https://shop.example.test/spring');
    expect(links.find((l) => l.url === 'https://shop.example.test/spring')!.tracked).toBe(true);
    expect(links.find((l) => l.url === 'https://cdn.example.test/logo.png')).toMatchObject({
      kind: 'image',
      tracked: false,
    });
    expect(links.filter((l) => /\/t\/[co]\//.test(l.url))).toEqual([]);
    // Nothing resolves on this machine: the check says why it did not run, and counts as no finding.
    expect(checkOf(r, 'links')).toMatchObject({
      status: 'skipped',
      reason: expect.stringMatching(/no host name resolves/),
    });

    // Sent through /v1 from the verified seeded domain: SPF (the provider's record covers this machine), DKIM and
    // DMARC all pass, aligned.
    expect(checkOf(r, 'authentication')).toMatchObject({
      status: 'ok',
      results: { spf: 'pass', dkim: 'pass', dmarc: 'pass' },
      findings: [],
    });
    expect(checkOf(r, 'spam')).toMatchObject({ status: 'skipped', reason: expect.stringMatching(/--spamd HOST:PORT/) });
    expect(checkOf(r, 'content').findings.map((f) => f.rule)).toContain('list-unsubscribe-missing');
  });

  it('says why mail another program dropped into the sink would not authenticate', async () => {
    const id = await drop(s, {
      from: 'Alerts <alerts@other.test>',
      to: 'ops@example.org',
      subject: 'Disk almost full',
      text: 'db-1 is 91% full.',
    });
    const auth = checkOf(await checks(s, id), 'authentication');
    expect(auth.status).toBe('error');
    expect(auth.results).toEqual({ spf: 'none', dkim: 'none', dmarc: 'none' });
    expect(auth.findings.map((f) => [f.severity, f.rule])).toEqual([
      ['error', 'not-authenticated'],
      ['warning', 'dkim-missing'],
      ['warning', 'spf-missing'],
      ['warning', 'dmarc-missing'],
    ]);
    expect(auth.findings[0]!.detail).toMatch(/Gmail rejects such mail/);
    expect(auth.findings.find((f) => f.rule === 'spf-missing')!.detail).toBe(
      'There is no SPF record for other.test (the MAIL FROM domain) in the sandbox zone (svc serve looks records up there with --dns sandbox: publish them with `svc sandbox dns set` or PUT /sandbox/dns, or run it with --dns system).',
    );
  });

  it('checks an HTML-only promotion another program sent: its images without alt text, its missing text part', async () => {
    const id = await drop(s, {
      from: 'Deals <deals@other.test>',
      to: 'ada@example.org',
      subject: 'Weekend sale',
      html: fixture('promo-no-alt.html'),
    });
    const content = checkOf(await checks(s, id), 'content');
    expect(content.status).toBe('warning');
    expect(content.findings.map((f) => [f.rule, f.line ?? null])).toEqual([
      ['text-part-missing', null],
      ['img-alt-missing', 11],
      ['img-alt-missing', 16],
      ['list-unsubscribe-missing', null],
    ]);
  });

  it('checks a plain-text code mail: what applies to it, and the HTML checks skipped', async () => {
    const id = await sendV1(s, { subject: 'Your sign-in code', text: fixture('code.txt') });
    const r = await checks(s, id);
    expect(checkOf(r, 'html-compatibility')).toMatchObject({
      status: 'skipped',
      reason: expect.stringMatching(/no HTML part/),
    });
    expect(checkOf(r, 'accessibility').status).toBe('skipped');
    expect(checkOf(r, 'content')).toMatchObject({ status: 'ok', findings: [] });
    expect(checkOf(r, 'authentication').status).toBe('ok');
    expect(r.summary).toEqual({ errors: 0, warnings: 0, notices: 0, score: null });
  });

  it('keeps the report: a later read answers it again, refresh=links runs the links check again', async () => {
    const id = await sendV1(s, { html: fixture('receipt.html'), text: fixture('receipt.txt') });
    const first = await checks(s, id);
    await s.advance(3600);
    const again = await checks(s, id);
    expect(again).toEqual(first);
    const refreshed = await checks(s, id, '?refresh=links');
    expect(refreshed.checked_at).toBe(first.checked_at);
    expect(Date.parse(checkOf(refreshed, 'links').checked_at) - Date.parse(checkOf(first, 'links').checked_at)).toBe(
      3600_000,
    );
    expect(checkOf(refreshed, 'authentication')).toEqual(checkOf(first, 'authentication'));
    // And the refreshed report is the one kept.
    expect(await checks(s, id)).toEqual(refreshed);
    expectProblem(await s.admin('GET', `/sandbox/messages/${id}/checks?refresh=all`), 400, 'invalid_request');
  });

  it('answers 404 for an unknown message, and only to the admin token or an inbox session', async () => {
    expectProblem(await s.admin('GET', '/sandbox/messages/eml_nope/checks'), 404, 'not_found');
    const id = await drop(s, { from: 'a@other.test', to: 'b@example.org', subject: 'x', text: 'x' });
    expectProblem(await s.call('GET', `/sandbox/messages/${id}/checks`), 401, 'missing_credentials');
    expectProblem(await s.call('GET', `/sandbox/messages/${id}/checks`, { token: 'adm_wrong' }), 401, 'invalid_token');
    const r = await s.call('GET', `/sandbox/messages/${id}/checks`, {
      token: await inboxSession(s.origin, s.adminToken),
    });
    expect(r.status).toBe(200);
    expect(r.body.message_id).toBe(id);
  });
});

describe('the links of a message, against a website on loopback', () => {
  let site: Site;
  beforeAll(async () => {
    site = await startSite();
  });
  afterAll(() => site.close());
  const html = (origin: string) =>
    `<html lang="en"><body><p><a href="${origin}/ok">Your order</a></p>\n<p><a href="${origin}/old">Track it</a></p>\n` +
    `<p><a href="${origin}/gone">Old offer</a></p>\n<img src="${origin}/logo.png" alt="The Shop"></body></html>`;

  it('with --check-private-links: what each link answers, the broken one an error', async () => {
    const s = await startTestServer({ checkPrivateLinks: true });
    try {
      const id = await sendV1(s, { html: html(site.origin), text: 'x', tracking: { clicks: true } });
      const links = checkOf(await checks(s, id), 'links');
      expect(links.status).toBe('error');
      expect(links.links!.map((l) => [l.url.slice(site.origin.length), l.status, l.tracked, l.line])).toEqual([
        ['/ok', 200, true, 1],
        ['/old', 200, true, 2],
        ['/gone', 404, true, 3],
        ['/logo.png', 200, false, 4],
      ]);
      expect(links.findings.find((f) => f.rule === 'link-broken')).toMatchObject({
        url: `${site.origin}/gone`,
        status: 404,
        line: 3,
      });
      expect(links.findings.find((f) => f.rule === 'link-redirects')).toMatchObject({ url: `${site.origin}/old` });
    } finally {
      await s.close();
    }
  });

  it('without it: nothing reaches the website, and each link is named', async () => {
    const s = await startTestServer();
    try {
      const before = site.requests.length;
      const id = await sendV1(s, { html: html(site.origin), text: 'x' });
      const links = checkOf(await checks(s, id), 'links');
      expect(site.requests.length).toBe(before);
      expect(
        links.links!.every(
          (l) => l.status === null && l.error!.startsWith('not checked: 127.0.0.1 is a loopback address'),
        ),
      ).toBe(true);
      expect(links.findings.filter((f) => f.rule === 'link-private')).toHaveLength(4);
    } finally {
      await s.close();
    }
  });
});

describe('a report goes with its message', () => {
  let dir: string;
  let s: TestServer;
  let db: Database.Database;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'svc-checks-'));
    s = await startTestServer({ dataDir: dir, maxMessages: 3 });
    db = new Database(join(dir, DB_FILE), { readonly: true });
  });
  afterAll(async () => {
    db.close();
    await s.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const kept = () => (db.prepare('SELECT COUNT(*) AS n FROM sink_checks').get() as { n: number }).n;
  const dropChecked = async (n: number) => {
    const id = await drop(s, { from: 'a@other.test', to: 'b@example.org', subject: `m${n}`, text: 'x' });
    await checks(s, id);
    return id;
  };

  it('deleted one by one, all at once, or aged out', async () => {
    const a = await dropChecked(1);
    await dropChecked(2);
    expect(kept()).toBe(2);
    expect((await s.admin('DELETE', `/sandbox/messages/${a}`)).status).toBe(204);
    expect(kept()).toBe(1);
    expect((await s.admin('DELETE', '/sandbox/messages')).status).toBe(204);
    expect(kept()).toBe(0);

    // --max-messages 3: the fourth message pushes the first out, with its report.
    const ids = [];
    for (const n of [3, 4, 5]) ids.push(await dropChecked(n));
    expect(kept()).toBe(3);
    await dropChecked(6);
    await s.advance(60);
    expect((await s.admin('GET', `/sandbox/messages/${ids[0]}`)).status).toBe(404);
    expect(kept()).toBe(3);
  });
});
