// Where an attachment's `url` may lead (docs/api.md#attachment-urls): this server's own listeners and addresses that
// are not public are refused when the message is sent, in any spelling the URL parser reads; a name is checked again
// where the delivery connects (a DNS responder on loopback points it at this server, or at a private address, only
// then); and what the message's `email.failed` says of a url is refused or failed, never what answered.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { networkInterfaces } from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDnsServer, type DnsServer } from '../helpers/dns-server.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { addDomain, serveRecords, verify } from './domains-helpers.js';
import {
  caughtDetail,
  caughtTo,
  expectProblem,
  getMessage,
  mail,
  rcpt,
  send,
  sendOk,
  serviceNow,
} from './emails-helpers.js';

const REFUSED = (filename: string) =>
  `The message could not be built: attachment ${filename} was refused (its url leads to this server or to an address that is not public).`;
const FAILED = (filename: string) =>
  `The message could not be built: attachment ${filename} failed (its url could not be fetched).`;

/** This server's listeners: the API, the SMTP sink, SMTP submission with STARTTLS and with implicit TLS. */
const ownPorts = (s: TestServer) => [s.port, s.smtpPort, s.submissionPort!, s.submissionsPort!];

/** Every address of this machine, as a URL writes it. */
const machineHosts = () =>
  Object.values(networkInterfaces())
    .flatMap((list) => list ?? [])
    .map((i) => (i.family === 'IPv6' ? `[${i.address}]` : i.address));

/**
 * Sends one message with one url attachment; expects 422 naming the url's field, and answers that error's message.
 * The server's scheduler is stopped: one accepted by mistake is cancelled before anything could fetch it, so no run of
 * this test ever connects to such an address.
 */
async function refusedAtSend(s: TestServer, url: string, field: 'url' | 'path' = 'url'): Promise<string> {
  const r = await send(s, mail({ attachments: [{ filename: 'a.txt', [field]: url }] }));
  if (r.status === 202) await s.call('POST', `/v1/emails/${r.body.id}/cancel`, { token: s.seed!.api_key_test });
  expectProblem(r, 422, 'validation_failed');
  const e = (r.body.errors as { path: string; message: string }[]).find((x) => x.path === `attachments.0.${field}`);
  expect(e, `${url}: ${r.text}`).toBeDefined();
  return e!.message;
}

/** An HTTP server on loopback answering every request as `handle` does; its requests are recorded. */
async function receiver(handle: (req: string, res: import('node:http').ServerResponse) => void) {
  const requests: string[] = [];
  const server: Server = createServer((req, res) => {
    requests.push(req.url ?? '');
    handle(req.url ?? '', res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    requests,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

describe('when the message is sent', () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer({ sendRate: 10_000 });
    await s.scheduler.stop();
  });
  afterAll(() => s?.close());

  it('refuses this server’s own API, SMTP sink and submission ports, on every address of this machine, however written', async () => {
    for (const port of ownPorts(s)) {
      const urls = [
        `http://127.0.0.1:${port}/v1/emails`,
        `http://localhost:${port}/livez`,
        `http://app.localhost:${port}/`,
        `http://2130706433:${port}/livez`, // 127.0.0.1 as one decimal number
        `http://0x7f.1:${port}/livez`,
        `https://[::ffff:127.0.0.1]:${port}/`,
        `https://0.0.0.0:${port}/`,
        ...machineHosts().map((h) => `https://${h}:${port}/livez`),
      ];
      for (const url of urls) expect(await refusedAtSend(s, url), url).toMatch(/this server itself/);
    }
    // `path`, the other name of `url`, is named as the field given.
    expect(await refusedAtSend(s, `http://127.0.0.1:${s.port}/livez`, 'path')).toMatch(/this server itself/);
  });

  it('refuses private, link-local, metadata and other addresses that are not public, in every spelling the URL parser reads', async () => {
    const cases: [string, RegExp][] = [
      ['https://10.0.0.1/', /private address \(10\.0\.0\.1\).*--allow-private-attachment-urls/],
      ['https://172.16.5.4/a.pdf', /private address \(172\.16\.5\.4\)/],
      ['https://192.168.1.1/', /private address \(192\.168\.1\.1\)/],
      ['https://100.64.0.1/', /private address \(100\.64\.0\.1\)/],
      ['https://[fd00::1]/', /private address \(fd00::1\)/],
      ['https://169.254.169.254/latest/meta-data/', /link-local address \(169\.254\.169\.254\)/],
      ['https://[fe80::1]/', /link-local address/],
      ['https://[fd00:ec2::254]/', /cloud-metadata address/],
      ['https://100.100.100.200/', /cloud-metadata address/],
      ['https://0/', /unspecified address \(0\.0\.0\.0\)/],
      ['https://[::]/', /unspecified address/],
      ['https://224.0.0.1/', /multicast address/],
      ['https://[::ffff:10.0.0.1]/', /private address \(10\.0\.0\.1\)/],
      ['https://[::ffff:169.254.169.254]/', /link-local address \(169\.254\.169\.254\)/],
      ['https://167772161/', /private address \(10\.0\.0\.1\)/], // decimal
      ['https://0xa.0.0.1/', /private address \(10\.0\.0\.1\)/], // hexadecimal
      ['https://012.0.0.1/', /private address \(10\.0\.0\.1\)/], // octal
      ['https://0xa9fea9fe/', /link-local address \(169\.254\.169\.254\)/],
    ];
    for (const [url, why] of cases) expect(await refusedAtSend(s, url), url).toMatch(why);
  });

  it('still takes loopback: a file server on this machine is fetched at delivery and attached', async () => {
    const files = await receiver((_, res) => res.writeHead(200, { 'content-type': 'text/plain' }).end('hello file'));
    try {
      const to = rcpt();
      const a = await sendOk(
        s,
        mail({ to, attachments: [{ filename: 'hello.txt', url: `http://localhost:${files.port}/hello.txt` }] }),
      );
      await s.settle();
      expect(files.requests).toEqual(['/hello.txt']);
      expect((await getMessage(s, a.id)).status).toBe('delivered');
      expect((await caughtDetail(s, a.id)).attachments).toEqual([
        { filename: 'hello.txt', content_type: 'text/plain', size: 10, content_id: null },
      ]);
    } finally {
      await files.close();
    }
  });
});

describe('svc serve --allow-private-attachment-urls', () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer({ sendRate: 10_000, allowPrivateAttachmentUrls: true });
    await s.scheduler.stop();
  });
  afterAll(() => s?.close());

  it('takes private ranges; link-local and metadata addresses and this server’s own listeners stay refused', async () => {
    // Accepted, and scheduled a day ahead and cancelled: nothing here ever connects to those addresses.
    const later = new Date((await serviceNow(s)) + 86_400_000).toISOString();
    for (const url of ['https://10.0.0.1/a.pdf', 'https://192.168.1.1/', 'https://[fd00::1]/', 'https://100.64.0.1/']) {
      const a = await sendOk(s, mail({ scheduled_at: later, attachments: [{ filename: 'a.pdf', url }] }));
      expect((await s.call('POST', `/v1/emails/${a.id}/cancel`, { token: s.seed!.api_key_test })).status).toBe(200);
    }
    expect(await refusedAtSend(s, 'https://169.254.169.254/')).toMatch(/link-local/);
    expect(await refusedAtSend(s, 'https://[fd00:ec2::254]/')).toMatch(/cloud-metadata/);
    for (const port of ownPorts(s)) {
      for (const h of ['127.0.0.1', 'localhost', ...machineHosts()]) {
        const url = `https://${h}:${port}/`;
        expect(await refusedAtSend(s, url), url).toMatch(/this server itself/);
      }
    }
  });
});

describe('when the message is delivered: the address connected to', () => {
  let dns: DnsServer;
  let s: TestServer;
  let from: string;
  beforeAll(async () => {
    dns = await startDnsServer();
    s = await startTestServer({ sendRate: 10_000, dns: 'system', dnsServer: [dns.address] });
    const key = s.seed!.api_key_test;
    const d = await addDomain(s, key, `rebind-${Date.now()}.test`);
    serveRecords(dns, d);
    const verified = await verify(s, key, d.id);
    expect(verified.verified, JSON.stringify(verified.findings)).toBe(true);
    from = `sender@${d.name}`;
  });
  afterAll(async () => {
    await s?.close();
    await dns?.close();
  });

  it('a name that points at this server when the message is delivered is refused there; one to loopback is fetched', async () => {
    // Addresses of this machine only: were the check to let one through, nothing would leave it.
    const files = await receiver((_, res) => res.writeHead(200).end('file'));
    dns.set('files.rebind.test', 'A', ['127.0.0.1']);
    dns.set('nowhere.rebind.test', 'A', ['0.0.0.0']);
    dns.set('v6.rebind.test', 'AAAA', ['::ffff:0.0.0.0']);
    const cases = [
      [`https://files.rebind.test:${s.port}/livez`, REFUSED('report.pdf')],
      [`https://files.rebind.test:${s.smtpPort}/`, REFUSED('report.pdf')],
      [`https://nowhere.rebind.test:${files.port}/`, REFUSED('report.pdf')],
      [`https://v6.rebind.test:${files.port}/`, REFUSED('report.pdf')],
      // Allowed: connected to, and it speaks no TLS.
      [`https://files.rebind.test:${files.port}/`, FAILED('report.pdf')],
    ] as const;
    await s.scheduler.stop();
    try {
      const sent: { id: string; to: string }[] = [];
      for (const [url] of cases) {
        const to = rcpt();
        sent.push({ id: (await sendOk(s, mail({ from, to, attachments: [{ filename: 'report.pdf', url }] }))).id, to });
      }
      // The send looked nothing up: a name is judged by where it leads when the message is delivered.
      expect(dns.queries.filter((q) => q.includes('rebind.test'))).toEqual([]);
      await s.settle();
      expect(dns.queries).toContain('A files.rebind.test');
      expect(dns.queries).toContain('AAAA v6.rebind.test');
      for (const [i, { id, to }] of sent.entries()) {
        const [url, reason] = cases[i]!;
        const m = await getMessage(s, id);
        expect(m.status, url).toBe('failed');
        expect(m.events.map((e) => e.type)).toEqual(['email.queued', 'email.failed']);
        expect(m.events[1]!.detail.reason, url).toBe(reason);
        expect(await caughtTo(s, to)).toEqual([]);
      }
    } finally {
      await files.close();
    }
  });
});

describe('what the message says of a url that was not fetched', () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer({ sendRate: 10_000 });
  });
  afterAll(() => s?.close());

  it('“failed”, with the attachment’s name, whatever answered: never its status or error; a redirect is not followed', async () => {
    const answers = await receiver((path, res) => {
      if (path === '/redirect') res.writeHead(302, { location: `http://127.0.0.1:${s.port}/livez` }).end();
      else res.writeHead(Number(path.slice(1)), { 'content-type': 'text/plain' }).end('secret internal answer');
    });
    const closed = await receiver(() => {});
    await closed.close();
    try {
      const cases = [
        [`http://127.0.0.1:${answers.port}/401`, 'a.pdf'],
        [`http://127.0.0.1:${answers.port}/404`, 'b.pdf'],
        [`http://127.0.0.1:${answers.port}/500`, 'c.pdf'],
        [`http://127.0.0.1:${answers.port}/redirect`, 'd.pdf'],
        [`http://127.0.0.1:${closed.port}/nothing-listens`, 'e.pdf'],
      ] as const;
      for (const [url, filename] of cases) {
        const a = await sendOk(s, mail({ attachments: [{ filename, url }] }));
        await s.settle();
        const m = await getMessage(s, a.id);
        expect(m.status, url).toBe('failed');
        expect(m.events.at(-1)!.type).toBe('email.failed');
        expect(m.events.at(-1)!.detail.reason, url).toBe(FAILED(filename));
      }
      // Each answered once: the redirect to this server's API was not followed.
      expect(answers.requests).toEqual(['/401', '/404', '/500', '/redirect']);
    } finally {
      await answers.close();
    }
  });
});
