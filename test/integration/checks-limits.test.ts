// The checks of one message cannot hold up the checks of the next (docs/checks.md#how-long-it-takes): HTML nested tens
// of thousands deep, HTML that takes the offline checks longer than their deadline or more memory than their thread
// has, and links to servers that accept a connection and never answer — on the real server, through its checks route.
import { createServer, type Socket } from 'node:net';
import { readFileSync } from 'node:fs';
import nodemailer from 'nodemailer';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findingsAtOrAbove, type MessageCheck, type MessageChecks } from '../../src/contract/checks.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { startSite, type Site } from '../helpers/site.js';

const fixture = (name: string) => readFileSync(new URL(`../../fixtures/checks/${name}`, import.meta.url), 'utf8');
const checkOf = (r: MessageChecks, id: MessageCheck['id']) => r.checks.find((c) => c.id === id)!;
const rules = (c: MessageCheck) => c.findings.map((f) => f.rule);

/** Hands an HTML message to the sink as another program would, and returns its id. */
async function drop(s: TestServer, html: string, subject = 'Hello'): Promise<string> {
  const t = nodemailer.createTransport({ host: '127.0.0.1', port: s.smtpPort, secure: false, ignoreTLS: true });
  await t.sendMail({ from: 'The Shop <news@example.test>', to: 'ada@example.org', subject, html, text: 'Hello' });
  t.close();
  return (await s.admin('GET', '/sandbox/messages?limit=1')).body.data[0].id;
}

/** A server on loopback that accepts connections and never answers; `connections(n)` resolves once it has had n. */
async function startTarpit() {
  const sockets = new Set<Socket>();
  let waits: { n: number; resolve: () => void }[] = [];
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => {});
    socket.on('close', () => sockets.delete(socket));
    accepted++;
    for (const w of waits.filter((w) => accepted >= w.n)) w.resolve();
    waits = waits.filter((w) => accepted < w.n);
  });
  let accepted = 0;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    origin: `http://127.0.0.1:${(server.address() as { port: number }).port}`,
    connections: (n: number) =>
      new Promise<void>((resolve) => (accepted >= n ? resolve() : waits.push({ n, resolve }))),
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

const linksHtml = (urls: string[]) =>
  `<html lang="en"><body>${urls.map((u, i) => `<p><a href="${u}">Offer ${i + 1}</a></p>`).join('\n')}</body></html>`;

const checks = async (s: TestServer, id: string) => {
  const r = await s.admin('GET', `/sandbox/messages/${id}/checks`);
  expect(r.status, r.text).toBe(200);
  return r.body as MessageChecks;
};

/** 20,000 <div> and 60,000 <i>, none closed (about 280 KB): elements nested 80,000 deep. */
const nestedDeep = () => `<html lang="en"><body>\n${'<div>'.repeat(20_000)}${'<i>'.repeat(60_000)}Hello</body></html>`;

/** HTML that takes html-validate seconds and a couple of hundred MB: `kb` KB of <div>s a hundred deep, over and over. */
const intricate = (kb: number) =>
  `<!doctype html><html lang="en"><head><title>Offers</title></head><body>${`${'<div>'.repeat(100)}x${'</div>'.repeat(100)}`.repeat(kb)}</body></html>`;

describe('HTML nested too deep', { timeout: 60_000 }, () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer();
  });
  afterAll(() => s.close());

  it('is a finding where it gets too deep, every check runs on the HTML up to there, and the next message is checked as usual', async () => {
    const deep = await checks(s, await drop(s, nestedDeep()));
    expect(JSON.stringify(deep)).not.toContain('Maximum call stack size exceeded');
    for (const id of ['html-compatibility', 'content', 'accessibility'] as const) {
      expect(checkOf(deep, id).status).not.toBe('skipped');
      expect(rules(checkOf(deep, id))).not.toContain('check-failed');
      expect(rules(checkOf(deep, id))).not.toContain('check-timeout');
    }
    // Line 2 holds the 20,000 <div>s; the 511th element opened there is the 513th deep (<html> and <body> before).
    expect(checkOf(deep, 'content').findings.find((f) => f.rule === 'html-nesting-deep')).toMatchObject({
      severity: 'error',
      title: 'Elements nested more than 512 deep',
      line: 2,
      column: 5 * 510 + 1,
    });
    // html-validate's findings, on the HTML up to there: the <div>s it saw are unclosed.
    expect(rules(checkOf(deep, 'content'))).toContain('html-validate/close-order');
    // So `svc inbox check` fails it by default.
    expect(findingsAtOrAbove(deep, 'error').map((f) => f.rule)).toContain('html-nesting-deep');

    const next = await checks(s, await drop(s, fixture('promo-no-alt.html'), 'Weekend sale'));
    expect(rules(checkOf(next, 'content'))).toContain('img-alt-missing');
    expect(rules(checkOf(next, 'accessibility'))).toContain('html-validate/wcag/h30');
  });
});

describe('offline checks that overrun their deadline', { timeout: 60_000 }, () => {
  let s: TestServer;
  beforeAll(async () => {
    // A short deadline, which the intricate message overruns many times over on any machine.
    s = await startTestServer({ checksDeadlineMs: 1000 });
  });
  afterAll(() => s.close());

  it('say so as a warning on the message, and the next message is checked on fresh threads', async () => {
    const slow = await checks(s, await drop(s, intricate(600)));
    for (const id of ['html-compatibility', 'content', 'accessibility'] as const) {
      const c = checkOf(slow, id);
      expect(c.status).toBe('warning');
      expect(c.findings.find((f) => f.rule === 'check-timeout')).toMatchObject({
        severity: 'warning',
        detail: expect.stringMatching(/^On this message it ran for longer than 1 s and was stopped/),
      });
    }
    expect(checkOf(slow, 'links').findings.find((f) => f.rule === 'check-timeout')?.title).toBe(
      "Finding the message's links did not finish in time",
    );
    // `svc inbox check --fail-on warning` does not let it through.
    expect(findingsAtOrAbove(slow, 'warning').filter((f) => f.rule === 'check-timeout')).not.toHaveLength(0);

    const next = await checks(s, await drop(s, fixture('promo-no-alt.html'), 'Weekend sale'));
    for (const id of ['html-compatibility', 'content', 'accessibility'] as const) {
      expect(rules(checkOf(next, id))).not.toContain('check-timeout');
    }
    expect(rules(checkOf(next, 'content'))).toContain('img-alt-missing');
    // html-validate's part, from its thread.
    expect(rules(checkOf(next, 'accessibility'))).toContain('html-validate/wcag/h30');
  });
});

describe('offline checks that run out of memory', { timeout: 60_000 }, () => {
  let s: TestServer;
  beforeAll(async () => {
    // Room for the checks' libraries and a small message, not for html-validate's model of the intricate one.
    s = await startTestServer({ checksMemoryMb: 64, checksDeadlineMs: 120_000 });
  });
  afterAll(() => s.close());

  it('say the check failed on the message, as a warning, and the next message is checked on a fresh thread', async () => {
    const big = await checks(s, await drop(s, intricate(600)));
    // html-validate's thread, at least, runs out of memory.
    expect(checkOf(big, 'accessibility').findings.find((f) => f.rule === 'check-failed')).toMatchObject({
      severity: 'warning',
      title: expect.stringMatching(/ failed on this message$/),
      detail: 'Its thread ran out of memory (64 MB), so what it would find is not known.',
    });
    const next = await checks(s, await drop(s, fixture('promo-no-alt.html'), 'Weekend sale'));
    expect(rules(checkOf(next, 'accessibility'))).toContain('html-validate/wcag/h30');
    expect(rules(checkOf(next, 'accessibility'))).not.toContain('check-failed');
  });
});

describe('links that never answer', { timeout: 60_000 }, () => {
  let site: Site;
  let tarpits: Awaited<ReturnType<typeof startTarpit>>[];
  beforeAll(async () => {
    site = await startSite();
    tarpits = await Promise.all(Array.from({ length: 20 }, startTarpit));
  });
  afterAll(async () => {
    await site.close();
    await Promise.all(tarpits.map((t) => t.close()));
  });

  it("hold up no other message's links, and are named as not checked in time once the message's time is up", async () => {
    const s = await startTestServer({ checkPrivateLinks: true, linksDeadlineMs: 3000 });
    try {
      const tarpitted = await drop(s, linksHtml(tarpits.map((t) => `${t.origin}/offer`)));
      let done = false;
      const slow = checks(s, tarpitted).finally(() => (done = true));
      // Its first links are connected and waiting for an answer that will not come.
      await Promise.all(tarpits.slice(0, 4).map((t) => t.connections(1)));

      const other = await checks(s, await drop(s, linksHtml([`${site.origin}/ok`])));
      expect(checkOf(other, 'links').links!.map((l) => [l.status, l.error])).toEqual([[200, null]]);
      expect(done).toBe(false);

      const links = checkOf(await slow, 'links');
      expect(links.status).toBe('warning');
      expect(links.links!.every((l) => l.status === null)).toBe(true);
      expect(links.links![0]!.error).toBe('not checked: no answer within the 3 s the check has for a message');
      expect(links.findings.find((f) => f.rule === 'links-unchecked')).toMatchObject({
        severity: 'warning',
        title: '20 links were not checked in time',
        detail: expect.stringMatching(/^The links check gives a message 3 s, and these had not answered by then: /),
      });
      // Not an error of the message.
      expect(links.findings.filter((f) => f.severity === 'error')).toEqual([]);
    } finally {
      await s.close();
    }
  });

  it("let another message's link to the same host go next, not after all of one message's", async () => {
    // Two requests at once to a host: the message with four links that never answer holds both until they time out.
    const s = await startTestServer({ checkPrivateLinks: true, linkTimeoutMs: 2000 });
    try {
      const first = site.requests.length;
      const many = await drop(s, linksHtml([1, 2, 3, 4].map((n) => `${site.origin}/slow?${n}`)));
      const slow = checks(s, many);
      while (site.requests.length < first + 2) await new Promise((resolve) => setImmediate(resolve));

      const other = await checks(s, await drop(s, linksHtml([`${site.origin}/ok?other`])));
      expect(checkOf(other, 'links').links!.map((l) => l.status)).toEqual([200]);
      // The third request the site had: the first slot the other message's many links let go of.
      expect(site.requests.slice(first, first + 3)).toEqual(['HEAD /slow?1', 'HEAD /slow?2', 'HEAD /ok?other']);
      expect(checkOf(await slow, 'links').findings.filter((f) => f.rule === 'link-timeout')).toHaveLength(4);
    } finally {
      await s.close();
    }
  });
});
