// Delivery of an accepted message into the sink (docs/local-server.md; the status machine,
// attachments, timeline and event payloads of docs/api.md): the MIME that arrives, its DKIM
// signature (checked by the sink and again here with mailauth against the sandbox zone), Message-ID ↔ msg_ id,
// alternatives, attachments (base64, inline cid, fetched url), custom headers and tags, envelope.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { dkimVerify } from 'mailauth';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.js';
import {
  EICAR,
  FROM,
  ISO_MS_Z,
  caughtDetail,
  caughtOf,
  caughtTo,
  getMessage,
  header,
  mail,
  outbox,
  rcpt,
  sendOk,
} from './emails-helpers.js';

// A 1×1 transparent PNG.
const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==',
  'base64',
);
const CSV = 'name,count\nwidgets,3\ngadgets,5\n';

let s: TestServer;
let files: Server;
let filesOrigin: string;
const fileRequests: string[] = [];

beforeAll(async () => {
  s = await startTestServer({ sendRate: 10_000 });
  files = createServer((req, res) => {
    fileRequests.push(req.url ?? '');
    if (req.url === '/report.csv') {
      res.writeHead(200, { 'content-type': 'text/csv' });
      res.end(CSV);
    } else if (req.url === '/eicar.com') {
      res.writeHead(200, { 'content-type': 'application/octet-stream' });
      res.end(Buffer.from(EICAR, 'latin1'));
    } else {
      res.writeHead(404, { 'content-type': 'text/plain' });
      res.end('not here');
    }
  });
  await new Promise<void>((resolve) => files.listen(0, '127.0.0.1', resolve));
  filesOrigin = `http://127.0.0.1:${(files.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise<void>((resolve) => files.close(() => resolve()));
  await s.close();
});

/** A DNS resolver for mailauth that reads the sandbox zone (TXT values as one-chunk records). */
function zoneResolver(name: string, rrtype: string): Promise<unknown> {
  const row = s.core.zone.get(name, rrtype);
  if (!row) return Promise.reject(Object.assign(new Error(`queryTxt ENOTFOUND ${name}`), { code: 'ENOTFOUND' }));
  const vals = row.values;
  return Promise.resolve(rrtype === 'TXT' ? vals.map((v) => [v]) : vals);
}

async function rawOf(caughtId: string): Promise<Buffer> {
  const r = await s.admin('GET', `/sandbox/messages/${caughtId}/raw`);
  expect(r.status).toBe(200);
  expect(r.headers.get('content-type')).toMatch(/^message\/rfc822/);
  return Buffer.from(r.text, 'utf8');
}

describe('hand-over and status', () => {
  it('settle() hands a queued message to the sink: queued → sending → sent → delivered, with queued/sent/delivered events', async () => {
    const to = rcpt();
    // With the background scheduler paused, the message stays queued until the jobs run.
    await s.scheduler.stop();
    let a: Awaited<ReturnType<typeof sendOk>>;
    try {
      a = await sendOk(s, mail({ to, subject: 'Receipt #1', tags: [{ name: 'kind', value: 'receipt' }] }));
      expect(a.status).toBe('queued');
      const queued = await getMessage(s, a.id);
      expect(queued.status).toBe('queued');
      expect(queued.events.map((e) => e.type)).toEqual(['email.queued']);
      expect(await caughtTo(s, to)).toEqual([]);
    } finally {
      s.scheduler.start();
    }

    await s.settle();
    const m = await getMessage(s, a.id);
    expect(m.status).toBe('delivered');
    expect(m.plane).toBe('transactional');
    expect(m.events.map((e) => e.type)).toEqual(['email.queued', 'email.sent', 'email.delivered']);
    for (const e of m.events) expect(e.occurred_at).toMatch(ISO_MS_Z);
    expect(m.events[0]!.detail).toEqual({ to: [to] });
    expect(m.events[1]!.detail).toEqual({ to: [to] });
    expect(m.events[2]!.detail).toEqual({ to });

    // The same events in the outbox, with the decided payloads.
    const events = outbox(s, s.seed!.workspace_id, a.id);
    expect(events.map((e) => e.type)).toEqual(['email.queued', 'email.sent', 'email.delivered']);
    const base = { message_id: a.id, from: FROM, subject: 'Receipt #1', tags: [{ name: 'kind', value: 'receipt' }] };
    expect(events[0]!.data).toEqual({ ...base, to: [to] });
    expect(events[1]!.data).toEqual({ ...base, to: [to] });
    expect(events[2]!.data).toEqual({ ...base, to });
    for (const e of events) expect(e.id).toMatch(/^evt_[0-9A-Za-z]{24}$/);

    const caught = await caughtTo(s, to);
    expect(caught).toHaveLength(1);
    expect(caught[0].message_id).toBe(a.id);
    expect(caught[0].subject).toBe('Receipt #1');
  });

  it('the status is `sending` once claimed and `sent`/outcome once handed over; the job never hands it over twice', async () => {
    await s.scheduler.stop();
    try {
      const a = await sendOk(s, mail());
      const out = await s.core.delivery.claim(a.id);
      expect(out).not.toBeNull();
      expect(out!.recipients).toEqual((await getMessage(s, a.id)).to);
      expect((await getMessage(s, a.id)).status).toBe('sending');
      // Handed to a provider: no longer cancellable.
      const c = await s.call('POST', `/v1/emails/${a.id}/cancel`, { token: s.seed!.api_key_test });
      expect(c.status, c.text).toBe(422);
      expect(c.body.code).toBe('message_not_cancellable');
      await s.core.delivery.sent(out!);
      const m = await getMessage(s, a.id);
      expect(m.events.map((e) => e.type)).toEqual(['email.queued', 'email.sent', 'email.delivered']);
      expect(m.status).toBe('delivered');
      // The queued job finds nothing left to do: nothing handed over, nothing new in the timeline.
      await s.settle();
      expect((await getMessage(s, a.id)).events).toHaveLength(3);
      expect(await caughtOf(s, a.id)).toEqual([]);
    } finally {
      s.scheduler.start();
    }
  });
});

describe('the message as caught', () => {
  it('is DKIM-signed for the domain: the sink says pass, and mailauth verifies the raw source against the sandbox zone', async () => {
    const a = await sendOk(s, mail({ html: '<p>Signed</p>', text: 'Signed' }));
    await s.settle();
    const m = await caughtDetail(s, a.id);
    expect(m.dkim).toBe('pass');
    const sig = header(m, 'DKIM-Signature')!;
    expect(sig).toMatch(/\bd=example\.test\b/);
    const selector = /\bs=([^;\s]+)/.exec(sig)![1];

    const raw = await rawOf(m.id);
    const result = await dkimVerify(raw, { resolver: zoneResolver as never });
    expect(result.results).toHaveLength(1);
    const r0 = result.results[0] as any;
    expect(r0.status.result, JSON.stringify(r0.status)).toBe('pass');
    expect(r0.signingDomain).toBe('example.test');
    expect(r0.selector).toBe(selector);

    // A tampered body no longer verifies: the check above is meaningful.
    const tampered = Buffer.from(raw.toString('utf8').replace('Signed', 'Forged'), 'utf8');
    const bad = await dkimVerify(tampered, { resolver: zoneResolver as never });
    expect((bad.results[0] as any).status.result).not.toBe('pass');
  });

  it('its Message-ID maps back to the msg_ id; the envelope sender is the bounce address of the domain', async () => {
    const to = rcpt();
    const a = await sendOk(s, mail({ to }));
    await s.settle();
    const m = await caughtDetail(s, a.id);
    expect(m.message_id).toBe(a.id);
    expect(header(m, 'Message-ID')).toBe(`<${a.id}@example.test>`);
    expect(m.envelope.mail_from).toBe(`bounces+${a.id}@bounces.example.test`);
    expect(m.envelope.rcpt_to).toEqual([to]);
    expect(header(m, 'Date')).toBeTruthy();
    expect(Date.parse(header(m, 'Date')!)).toBe(Math.floor(Date.parse(a.created_at) / 1000) * 1000);
  });

  it('carries text and html as alternatives', async () => {
    const a = await sendOk(
      s,
      mail({ text: 'Plain version', html: '<p>HTML <b>version</b></p>', tracking: { clicks: false } }),
    );
    await s.settle();
    const m = await caughtDetail(s, a.id);
    expect(m.text.trim()).toBe('Plain version');
    expect(m.html).toContain('<p>HTML <b>version</b></p>');
    expect(header(m, 'Content-Type')).toMatch(/^multipart\/alternative/i);
  });

  it('html only and text only arrive as such', async () => {
    const h = await sendOk(s, { from: FROM, to: rcpt(), subject: 'h', html: '<p>only html</p>' });
    const t = await sendOk(s, { from: FROM, to: rcpt(), subject: 't', text: 'only text' });
    await s.settle();
    const hm = await caughtDetail(s, h.id);
    expect(hm.html).toContain('<p>only html</p>');
    expect(header(hm, 'Content-Type')).toMatch(/^text\/html/i);
    const tm = await caughtDetail(s, t.id);
    expect(tm.html).toBeNull();
    expect(tm.text.trim()).toBe('only text');
  });

  it('carries attachments and an inline image referenced by cid', async () => {
    const a = await sendOk(
      s,
      mail({
        html: '<p>Logo: <img src="cid:logo@acme"></p>',
        attachments: [
          { filename: 'report.csv', content: Buffer.from(CSV).toString('base64'), content_type: 'text/csv' },
          { filename: 'logo.png', content: PNG.toString('base64'), content_id: 'logo@acme' },
        ],
      }),
    );
    await s.settle();
    const m = await caughtDetail(s, a.id);
    expect(m.html).toContain('cid:logo@acme');
    const byName = Object.fromEntries(m.attachments.map((x: { filename: string }) => [x.filename, x]));
    expect(byName['report.csv']).toEqual({
      filename: 'report.csv',
      content_type: 'text/csv',
      size: Buffer.byteLength(CSV),
      content_id: null,
    });
    expect(byName['logo.png']).toEqual({
      filename: 'logo.png',
      content_type: 'image/png',
      size: PNG.length,
      content_id: 'logo@acme',
    });
  });

  it('takes cc, bcc and reply_to as one address in a string, as other clients send them, and delivers them as lists of one', async () => {
    const to = rcpt();
    const cc = rcpt('cc');
    const bcc = rcpt('bcc');
    const a = await sendOk(s, mail({ to, cc, bcc, reply_to: 'Support <support@example.test>' }));
    await s.settle();
    const m = await caughtDetail(s, a.id);
    expect(header(m, 'Reply-To')).toBe('Support <support@example.test>');
    expect(header(m, 'Cc')).toBe(cc);
    expect(m.cc).toEqual([cc]);
    expect([...m.envelope.rcpt_to].sort()).toEqual([to, cc, bcc].sort());
    const message = await s.call('GET', `/v1/emails/${a.id}`, { token: s.seed!.api_key_test });
    expect(message.body).toMatchObject({ to: [to], cc: [cc], bcc: [bcc] });
  });

  it('carries custom headers, Reply-To, Cc, and the tags in an X-Svc-Tags header; Bcc only in the envelope', async () => {
    const to = rcpt();
    const cc = rcpt('cc');
    const bcc = rcpt('bcc');
    const a = await sendOk(
      s,
      mail({
        to: [to],
        cc: [cc],
        bcc: [bcc],
        reply_to: ['support@example.test'],
        headers: { 'X-Campaign-Ref': 'spring-2026', 'X-Priority': '1' },
        tags: [
          { name: 'kind', value: 'receipt' },
          { name: 'user_id', value: 'u 42/a' },
        ],
      }),
    );
    await s.settle();
    const m = await caughtDetail(s, a.id);
    expect(header(m, 'X-Campaign-Ref')).toBe('spring-2026');
    expect(header(m, 'X-Priority')).toBe('1');
    expect(header(m, 'Reply-To')).toBe('support@example.test');
    const tags = header(m, 'X-Svc-Tags')!;
    expect(tags).toBeDefined();
    const parsed = Object.fromEntries(
      tags
        .split(/;\s*/)
        .map((p) => p.split('='))
        .map(([k, v]) => [k, decodeURIComponent(v!)]),
    );
    expect(parsed).toEqual({ kind: 'receipt', user_id: 'u 42/a' });
    expect(m.to).toEqual([to]);
    expect(m.cc).toEqual([cc]);
    expect([...m.envelope.rcpt_to].sort()).toEqual([to, cc, bcc].sort());
    expect(header(m, 'Bcc')).toBeUndefined();
    expect((await rawOf(m.id)).toString()).not.toContain(bcc);
    // Found in the sink through the Bcc recipient as well.
    expect((await caughtTo(s, bcc)).map((x) => x.message_id)).toEqual([a.id]);
    // No X-Svc-Tags header without tags.
    const plain = await sendOk(s, mail());
    await s.settle();
    expect(header(await caughtDetail(s, plain.id), 'X-Svc-Tags')).toBeUndefined();
  });

  it('a url attachment is fetched at delivery (not at acceptance) and attached', async () => {
    fileRequests.length = 0;
    const a = await sendOk(s, mail({ attachments: [{ filename: 'report.csv', url: `${filesOrigin}/report.csv` }] }));
    expect(fileRequests).toEqual([]); // not fetched yet
    await s.settle();
    expect(fileRequests).toEqual(['/report.csv']);
    expect((await getMessage(s, a.id)).status).toBe('delivered');
    const m = await caughtDetail(s, a.id);
    expect(m.attachments).toEqual([
      { filename: 'report.csv', content_type: 'text/csv', size: Buffer.byteLength(CSV), content_id: null },
    ]);
    expect((await rawOf(m.id)).toString()).toContain(Buffer.from(CSV).toString('base64').slice(0, 20));
  });

  it('a url that answers 404 fails the message: status failed, email.failed saying which attachment, nothing in the sink', async () => {
    const to = rcpt();
    const a = await sendOk(s, mail({ to, attachments: [{ filename: 'gone.pdf', url: `${filesOrigin}/gone.pdf` }] }));
    await s.settle();
    const m = await getMessage(s, a.id);
    expect(m.status).toBe('failed');
    expect(m.events.map((e) => e.type)).toEqual(['email.queued', 'email.failed']);
    // Which attachment, not what answered (docs/api.md#attachment-urls).
    const reason = 'The message could not be built: attachment gone.pdf failed (its url could not be fetched).';
    expect(m.events[1]!.detail.reason).toBe(reason);
    expect(m.events[1]!.detail.to).toEqual([to]);
    const failed = outbox(s, s.seed!.workspace_id, a.id).find((e) => e.type === 'email.failed')!;
    expect(failed.data).toEqual({
      message_id: a.id,
      from: FROM,
      subject: 'Hello',
      tags: [],
      to: [to],
      reason,
    });
    expect(await caughtTo(s, to)).toEqual([]);
    expect(await caughtOf(s, a.id)).toEqual([]);
    // Failed is final: cancel is refused.
    const c = await s.call('POST', `/v1/emails/${a.id}/cancel`, { token: s.seed!.api_key_test });
    expect(c.status).toBe(422);
  });

  it('a fetched url attachment holding the EICAR test string is not sent: the message fails (abuse filter)', async () => {
    const to = rcpt();
    const a = await sendOk(s, mail({ to, attachments: [{ filename: 'eicar.com', url: `${filesOrigin}/eicar.com` }] }));
    await s.settle();
    const m = await getMessage(s, a.id);
    expect(m.status).toBe('failed');
    expect(m.events.map((e) => e.type)).toEqual(['email.queued', 'email.failed']);
    expect(m.events[1]!.detail.reason).toMatch(/EICAR|content_blocked/);
    expect(await caughtTo(s, to)).toEqual([]);
  });

  it('a url to a port where nothing listens fails the message too', async () => {
    const probe = createServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    const port = (probe.address() as AddressInfo).port;
    await new Promise<void>((resolve) => probe.close(() => resolve()));
    const a = await sendOk(s, mail({ attachments: [{ filename: 'x.bin', url: `http://127.0.0.1:${port}/x.bin` }] }));
    await s.settle();
    const m = await getMessage(s, a.id);
    expect(m.status).toBe('failed');
    expect(m.events.at(-1)!.detail.reason).toEqual(expect.any(String));
  });
});
