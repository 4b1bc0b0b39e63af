import { generateKeyPairSync } from 'node:crypto';
import { connect } from 'node:net';
import nodemailer from 'nodemailer';
import type Mail from 'nodemailer/lib/mailer/index.js';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/lib/log.js';
import { manualClock } from '../../src/lib/clock.js';
import { ingest, MAX_MESSAGE_BYTES } from '../../src/server/inbound/sink.js';
import { verifyDkim } from '../../src/server/checks/mailauth.js';
import { createInbox } from '../../src/server/core/inbox.js';
import { openDb } from '../../src/server/store/db.js';
import { createInboxStore } from '../../src/server/store/inbox.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

// A 1×1 transparent PNG.
const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==',
  'base64',
);

/** Builds a message exactly as nodemailer would put it on the wire (CRLF line ends). */
async function build(mail: Mail.Options): Promise<Buffer> {
  const t = nodemailer.createTransport({ streamTransport: true, buffer: true, newline: 'windows' });
  const info = (await t.sendMail(mail)) as unknown as { message: Buffer };
  return info.message;
}

describe('SMTP sink', () => {
  let s: TestServer;
  const smtp = () =>
    nodemailer.createTransport({
      host: '127.0.0.1',
      port: s.smtpPort,
      secure: false,
      ignoreTLS: true,
      connectionTimeout: 10_000,
    });
  const send = async (mail: Mail.Options) => {
    const t = smtp();
    try {
      return await t.sendMail(mail);
    } finally {
      t.close();
    }
  };
  const list = async (query = '') => {
    const r = await s.admin('GET', `/sandbox/messages${query}`);
    expect(r.status).toBe(200);
    return r.body as { data: any[]; has_more: boolean };
  };
  const only = async () => {
    const { data } = await list();
    expect(data).toHaveLength(1);
    const r = await s.admin('GET', `/sandbox/messages/${data[0].id}`);
    expect(r.status).toBe(200);
    return r.body;
  };

  beforeAll(async () => {
    s = await startTestServer();
  });
  afterAll(() => s?.close());
  beforeEach(async () => {
    expect((await s.admin('DELETE', '/sandbox/messages')).status).toBe(204);
  });

  it('catches a plain text message and shows it with envelope, headers and text', async () => {
    const info = await send({
      from: 'Alice Example <alice@example.test>',
      to: 'bob@example.test',
      subject: 'Plain hello',
      text: 'Hello Bob,\nthis is plain text.\n',
    });
    expect(info.accepted).toEqual(['bob@example.test']);
    const now = (await s.admin('GET', '/sandbox/clock')).body.now;

    const { data, has_more } = await list();
    expect(has_more).toBe(false);
    expect(data).toHaveLength(1);
    expect(data[0]).toMatchObject({
      message_id: null,
      to: ['bob@example.test'],
      cc: [],
      subject: 'Plain hello',
      received_at: now,
    });
    expect(data[0].from).toContain('alice@example.test');
    expect(data[0].id).toEqual(expect.any(String));

    const m = await only();
    expect(m.envelope).toEqual({ mail_from: 'alice@example.test', rcpt_to: ['bob@example.test'] });
    expect(m.text.trim()).toBe('Hello Bob,\nthis is plain text.');
    expect(m.html).toBeNull();
    expect(m.attachments).toEqual([]);
    expect(m.dkim).toBe('none');
    expect(m.message_id).toBeNull();
    const header = (name: string) =>
      m.headers.find((h: { name: string }) => h.name.toLowerCase() === name.toLowerCase())?.value;
    expect(header('Subject')).toBe('Plain hello');
    expect(header('Message-ID')).toBe(info.messageId);
    expect(header('From')).toBe('Alice Example <alice@example.test>');

    const raw = await s.admin('GET', `/sandbox/messages/${m.id}/raw`);
    expect(m.size).toBe(Buffer.byteLength(raw.text));
  });

  it('keeps both alternatives of an HTML + text message', async () => {
    await send({
      from: 'alice@example.test',
      to: 'bob@example.test',
      subject: 'Alternatives',
      text: 'Hi there in text',
      html: '<p>Hi <b>there</b> in HTML</p>',
    });
    const m = await only();
    expect(m.html).toContain('<p>Hi <b>there</b> in HTML</p>');
    expect(m.text.trim()).toBe('Hi there in text');
    expect(m.attachments).toEqual([]);
  });

  it('lists an attachment and an inline image with filename, type, size and content id', async () => {
    const csv = 'name,count\nwidgets,3\n';
    await send({
      from: 'alice@example.test',
      to: 'bob@example.test',
      subject: 'Report attached',
      text: 'See the report.',
      html: '<p>Logo: <img src="cid:logo@svc.test"></p>',
      attachments: [
        { filename: 'report.csv', content: csv, contentType: 'text/csv' },
        { filename: 'logo.png', content: PNG, contentType: 'image/png', cid: 'logo@svc.test' },
      ],
    });
    const m = await only();
    expect(m.html).toContain('cid:logo@svc.test');
    expect(m.attachments).toHaveLength(2);
    const byName = Object.fromEntries(m.attachments.map((a: { filename: string }) => [a.filename, a]));
    expect(byName['report.csv']).toEqual({
      filename: 'report.csv',
      content_type: 'text/csv',
      size: Buffer.byteLength(csv),
      content_id: null,
    });
    expect(byName['logo.png']).toEqual({
      filename: 'logo.png',
      content_type: 'image/png',
      size: PNG.length,
      content_id: 'logo@svc.test',
    });
  });

  it('records every To/Cc address and finds a Bcc recipient through the envelope', async () => {
    await send({
      from: 'alice@example.test',
      to: ['First To <to1@example.test>', 'to2@example.test'],
      cc: 'Copy <cc1@example.test>',
      bcc: 'hidden@example.test',
      subject: 'Many recipients',
      text: 'hi all',
    });
    const m = await only();
    expect(m.to).toEqual(['to1@example.test', 'to2@example.test']);
    expect(m.cc).toEqual(['cc1@example.test']);
    expect([...m.envelope.rcpt_to].sort()).toEqual([
      'cc1@example.test',
      'hidden@example.test',
      'to1@example.test',
      'to2@example.test',
    ]);
    // Bcc is not a header of the message as sent.
    expect(m.headers.some((h: { name: string }) => h.name.toLowerCase() === 'bcc')).toBe(false);
    const raw = await s.admin('GET', `/sandbox/messages/${m.id}/raw`);
    expect(raw.text).not.toContain('hidden@example.test');

    for (const to of ['TO2@Example.Test', 'cc1@EXAMPLE.test', 'Hidden@example.test', 'to1@example.test']) {
      const found = await list(`?to=${encodeURIComponent(to)}`);
      expect(
        found.data.map((d) => d.id),
        to,
      ).toEqual([m.id]);
    }
    expect((await list(`?to=${encodeURIComponent('nobody@example.test')}`)).data).toEqual([]);
    // A partial address is not a match.
    expect((await list(`?to=${encodeURIComponent('example.test')}`)).data).toEqual([]);
  });

  it('lists newest first and pages with limit, after and has_more', async () => {
    for (const n of [1, 2, 3, 4, 5]) {
      await send({ from: 'alice@example.test', to: `r${n}@example.test`, subject: `msg ${n}`, text: `number ${n}` });
    }
    const all = await list();
    expect(all.data.map((d) => d.subject)).toEqual(['msg 5', 'msg 4', 'msg 3', 'msg 2', 'msg 1']);
    expect(all.has_more).toBe(false);

    const page1 = await list('?limit=2');
    expect(page1.data.map((d) => d.subject)).toEqual(['msg 5', 'msg 4']);
    expect(page1.has_more).toBe(true);
    const page2 = await list(`?limit=2&after=${page1.data[1].id}`);
    expect(page2.data.map((d) => d.subject)).toEqual(['msg 3', 'msg 2']);
    expect(page2.has_more).toBe(true);
    const page3 = await list(`?limit=2&after=${page2.data[1].id}`);
    expect(page3.data.map((d) => d.subject)).toEqual(['msg 1']);
    expect(page3.has_more).toBe(false);

    // Filter and paging together.
    await send({ from: 'alice@example.test', to: 'r1@example.test', subject: 'msg 6', text: 'again' });
    const r1 = await list(`?to=r1@example.test&limit=1`);
    expect(r1.data.map((d) => d.subject)).toEqual(['msg 6']);
    expect(r1.has_more).toBe(true);
    const r1next = await list(`?to=r1@example.test&limit=1&after=${r1.data[0].id}`);
    expect(r1next.data.map((d) => d.subject)).toEqual(['msg 1']);
    expect(r1next.has_more).toBe(false);

    for (const bad of [
      '?limit=0',
      '?limit=101',
      '?limit=abc',
      '?colour=blue',
      '?after=eml_000000000000000000000000',
      '?after=',
      '?since=yesterday',
    ]) {
      const r = await s.admin('GET', `/sandbox/messages${bad}`);
      expect(r.status, bad).toBe(400);
      expect(r.headers.get('content-type')).toContain('application/problem+json');
    }
  });

  it('since keeps the mail received at or after a moment of the service clock', async () => {
    await send({ from: 'alice@example.test', to: 'early@example.test', subject: 'before', text: 'one' });
    await s.advance(60);
    const { now } = (await s.admin('GET', '/sandbox/clock')).body;
    await send({ from: 'alice@example.test', to: 'late@example.test', subject: 'after', text: 'two' });
    expect((await list(`?since=${encodeURIComponent(now)}`)).data.map((d) => d.subject)).toEqual(['after']);
    const earlier = new Date(Date.parse(now) - 120_000).toISOString();
    expect((await list(`?since=${encodeURIComponent(earlier)}`)).data.map((d) => d.subject)).toEqual([
      'after',
      'before',
    ]);
  });

  it('serves the raw source byte for byte as it was sent, as message/rfc822', async () => {
    const raw = await build({
      from: 'Zoë <zoe@example.test>',
      to: 'bob@example.test',
      subject: 'Raw ✓ check',
      text: 'Ünïcödé text\n.a line starting with a dot\n',
      html: '<p>Ünïcödé</p>',
      attachments: [{ filename: 'data.bin', content: Buffer.from([0, 1, 2, 253, 254, 255]) }],
    });
    await send({ envelope: { from: 'zoe@example.test', to: ['bob@example.test'] }, raw });
    const { data } = await list();
    expect(data).toHaveLength(1);
    const res = await fetch(`${s.origin}/sandbox/messages/${data[0].id}/raw`, {
      headers: { authorization: `Bearer ${s.adminToken}` },
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^message\/rfc822/);
    const body = Buffer.from(await res.arrayBuffer());
    expect(body.equals(raw)).toBe(true);
    expect(data[0].size).toBe(raw.length);
    expect(data[0].subject).toBe('Raw ✓ check');
  });

  it('catches a message byte for byte whatever size its client declared for it (SIZE, RFC 1870)', async () => {
    const raw = await build({
      from: 'alice@example.test',
      to: 'bob@example.test',
      subject: 'Declared',
      text: 'A line of the report.\n'.repeat(10_000),
      attachments: [
        { filename: 'data.bin', content: Buffer.from(Array.from({ length: 300_000 }, (_, i) => (i * 31) % 256)) },
      ],
    });
    expect(raw.includes('\r\n.')).toBe(false);
    const sock = connect(s.smtpPort, '127.0.0.1');
    sock.setEncoding('utf8');
    let buffer = '';
    sock.on('data', (d: string) => (buffer += d));
    const reply = async () => {
      for (let i = 0; i < 1000 && !/^\d{3} .*\r\n/m.test(buffer); i++) await new Promise((r) => setTimeout(r, 10));
      const out = buffer;
      buffer = '';
      return out;
    };
    try {
      await reply();
      sock.write('EHLO client.example.test\r\n');
      await reply();
      // Exactly, far less and far more than it sends.
      for (const size of [raw.length, 10, raw.length * 3]) {
        sock.write(`MAIL FROM:<alice@example.test> SIZE=${size}\r\n`);
        expect(await reply()).toMatch(/^250 /m);
        sock.write('RCPT TO:<bob@example.test>\r\n');
        expect(await reply()).toMatch(/^250 /m);
        sock.write('DATA\r\n');
        expect(await reply()).toMatch(/^354 /m);
        sock.write(Buffer.concat([raw, Buffer.from('.\r\n')]));
        expect(await reply()).toMatch(/^250 /m);
      }
      sock.write('QUIT\r\n');
    } finally {
      sock.destroy();
    }
    const { data } = await list();
    expect(data).toHaveLength(3);
    for (const m of data) {
      const res = await fetch(`${s.origin}/sandbox/messages/${m.id}/raw`, {
        headers: { authorization: `Bearer ${s.adminToken}` },
      });
      expect(Buffer.from(await res.arrayBuffer()).equals(raw)).toBe(true);
    }
  });

  it('empties with DELETE /sandbox/messages, and unknown ids are 404 Problems', async () => {
    await send({ from: 'alice@example.test', to: 'bob@example.test', subject: 'to be deleted', text: 'x' });
    const { data } = await list();
    expect(data).toHaveLength(1);
    const id = data[0].id;

    const del = await s.admin('DELETE', '/sandbox/messages');
    expect(del.status).toBe(204);
    expect(del.text).toBe('');
    expect(await list()).toEqual({ data: [], has_more: false });

    for (const path of [
      `/sandbox/messages/${id}`,
      `/sandbox/messages/${id}/raw`,
      '/sandbox/messages/eml_doesnotexist',
    ]) {
      const r = await s.admin('GET', path);
      expect(r.status, path).toBe(404);
      expect(r.headers.get('content-type')).toContain('application/problem+json');
      expect(r.body).toMatchObject({ status: 404, code: 'not_found' });
    }
    // The sink keeps catching after being emptied.
    await send({ from: 'alice@example.test', to: 'bob@example.test', subject: 'after delete', text: 'x' });
    expect((await list()).data.map((d) => d.subject)).toEqual(['after delete']);
  });

  it('advertises SIZE and AUTH, no STARTTLS, and refuses a declared oversize message with 552 at MAIL FROM', async () => {
    const sock = connect(s.smtpPort, '127.0.0.1');
    sock.setEncoding('utf8');
    let buffer = '';
    sock.on('data', (d: string) => (buffer += d));
    const reply = async (pattern: RegExp) => {
      for (let i = 0; i < 500 && !pattern.test(buffer); i++) await new Promise((r) => setTimeout(r, 10));
      const out = buffer;
      buffer = '';
      return out;
    };
    try {
      expect(await reply(/^220 .*\r\n/m)).toMatch(/^220 /);
      sock.write('EHLO client.example.test\r\n');
      const ehlo = await reply(/^250 .*\r\n/m);
      expect(ehlo).toMatch(new RegExp(`^250[- ]SIZE ${MAX_MESSAGE_BYTES}\\r?$`, 'm'));
      // A client needs only its host and port: no STARTTLS to upgrade to, and any AUTH taken
      // (test/e2e/smtp-sink-clients.test.ts, and --smtp-starttls there).
      expect(ehlo).not.toMatch(/STARTTLS/);
      expect(ehlo).toMatch(/^250[- ]AUTH PLAIN LOGIN/m);
      sock.write(`MAIL FROM:<alice@example.test> SIZE=${MAX_MESSAGE_BYTES + 1}\r\n`);
      expect(await reply(/^\d{3} .*\r\n/m)).toMatch(/^552 /);
      sock.write('QUIT\r\n');
      await reply(/^221 /m);
    } finally {
      sock.destroy();
    }
  });

  it('refuses a message just over the default 50 MB with 552 and keeps catching mail afterwards', async () => {
    const head = Buffer.from('From: alice@example.test\r\nTo: bob@example.test\r\nSubject: too big\r\n\r\n');
    const line = Buffer.from(`${'x'.repeat(998)}\r\n`);
    const lines = Math.ceil((MAX_MESSAGE_BYTES + 1 - head.length) / line.length);
    const big = Buffer.concat([head, Buffer.concat(new Array(lines).fill(line))]);
    expect(big.length).toBeGreaterThan(MAX_MESSAGE_BYTES);
    expect(big.length).toBeLessThan(MAX_MESSAGE_BYTES + 2 * line.length);

    const err = await send({ envelope: { from: 'alice@example.test', to: ['bob@example.test'] }, raw: big }).then(
      () => null,
      (e: Error & { responseCode?: number }) => e,
    );
    expect(err).not.toBeNull();
    expect(err!.responseCode).toBe(552);
    expect((await list()).data).toEqual([]);

    await send({ from: 'alice@example.test', to: 'bob@example.test', subject: 'small after big', text: 'still here' });
    expect((await list()).data.map((d) => d.subject)).toEqual(['small after big']);
  }, 60_000);

  it('links mail sent through /v1 to its message and workspace; mail from other programs has message_id null', async () => {
    await send({
      from: 'alice@example.test',
      to: 'delivered@simulator.test',
      subject: 'from another program',
      text: 'x',
    });
    const accepted = await s.call('POST', '/v1/emails', {
      token: s.seed!.api_key_test,
      body: {
        from: 'Sandbox <hello@example.test>',
        to: 'delivered@simulator.test',
        subject: 'through v1',
        text: 'hello',
      },
    });
    expect(accepted.status, accepted.text).toBe(202);
    await s.settle();

    const { data } = await list('?to=delivered@simulator.test');
    expect(data.map((d) => [d.subject, d.message_id])).toEqual([
      ['through v1', accepted.body.id],
      ['from another program', null],
    ]);
    const mine = await list(`?workspace_id=${s.seed!.workspace_id}`);
    expect(mine.data.map((d) => d.subject)).toEqual(['through v1']);
    expect((await list('?workspace_id=ws_doesnotexist000000000000')).data).toEqual([]);
    // The service signs with the seeded domain's key, which the seed published in the sandbox zone.
    const m = (await s.admin('GET', `/sandbox/messages/${data[0].id}`)).body;
    expect(m.dkim).toBe('pass');
  });

  it('verifies DKIM of mail sent by any program against the sandbox zone: fail until the key is published, then pass', async () => {
    const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const pem = privateKey.export({ type: 'pkcs8', format: 'pem' }) as string;
    const host = 'sinktest2026._domainkey.example.test';
    const signed = (subject: string) =>
      send({
        from: 'alice@example.test',
        to: 'bob@example.test',
        subject,
        text: 'signed body',
        dkim: { domainName: 'example.test', keySelector: 'sinktest2026', privateKey: pem },
      });
    const dkimOf = async (subject: string) => {
      const { data } = await list();
      const id = data.find((d) => d.subject === subject)!.id;
      const m = (await s.admin('GET', `/sandbox/messages/${id}`)).body;
      expect(m.headers.some((h: { name: string }) => h.name.toLowerCase() === 'dkim-signature')).toBe(true);
      return m.dkim;
    };

    await signed('unpublished');
    expect(await dkimOf('unpublished')).toBe('fail');

    const put = await s.admin('PUT', '/sandbox/dns', {
      host,
      type: 'TXT',
      values: [`v=DKIM1; k=rsa; p=${publicKey.export({ type: 'spki', format: 'der' }).toString('base64')}`],
    });
    expect(put.status, put.text).toBe(200);
    try {
      await signed('published');
      expect(await dkimOf('published')).toBe('pass');
    } finally {
      expect((await s.admin('DELETE', `/sandbox/dns?host=${host}&type=TXT`)).status).toBe(204);
    }
  });
});

describe('sink DKIM verdicts (ingest with a resolver, verified on first read)', () => {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const other = generateKeyPairSync('rsa', { modulusLength: 2048 }).publicKey;
  const pem = privateKey.export({ type: 'pkcs8', format: 'pem' }) as string;
  const txt = (key: typeof publicKey) =>
    `v=DKIM1; k=rsa; p=${key.export({ type: 'spki', format: 'der' }).toString('base64')}`;

  async function verdict(raw: Buffer, records: Record<string, string>) {
    const { db } = openDb({ memory: true });
    try {
      const store = createInboxStore(db);
      const resolver = async (name: string, type: string) => {
        const value = type === 'TXT' ? records[name.toLowerCase()] : undefined;
        if (!value) throw Object.assign(new Error(`queryTxt ENOTFOUND ${name}`), { code: 'ENOTFOUND' });
        return [[value]];
      };
      const inbox = createInbox({ store, clock: manualClock(), verifyDkim: (bytes) => verifyDkim(bytes, resolver) });
      const id = await ingest({ inbox, log: silentLogger }, raw, {
        mailFrom: 'alice@example.test',
        rcptTo: ['bob@example.test'],
      });
      // Verified on first read, then kept.
      const verdict = (await inbox.get(id!)).dkim;
      expect(store.get(id!)!.dkim).toBe(verdict);
      return verdict;
    } finally {
      db.close();
    }
  }

  const signed = () =>
    build({
      from: 'alice@example.test',
      to: 'bob@example.test',
      subject: 'Signed',
      text: 'signed body\n',
      dkim: { domainName: 'example.test', keySelector: 'sel1', privateKey: pem },
    });

  it('pass when the selector publishes the signing key', async () => {
    expect(await verdict(await signed(), { 'sel1._domainkey.example.test': txt(publicKey) })).toBe('pass');
  });

  it('fail when the selector publishes another key, or nothing', async () => {
    expect(await verdict(await signed(), { 'sel1._domainkey.example.test': txt(other) })).toBe('fail');
    expect(await verdict(await signed(), {})).toBe('fail');
  });

  it('fail when the body was changed after signing', async () => {
    const raw = (await signed()).toString('utf8').replace('signed body', 'forged body');
    expect(await verdict(Buffer.from(raw), { 'sel1._domainkey.example.test': txt(publicKey) })).toBe('fail');
  });

  it('none for an unsigned message', async () => {
    const raw = await build({ from: 'alice@example.test', to: 'bob@example.test', subject: 'x', text: 'x' });
    expect(await verdict(raw, {})).toBe('none');
  });
});
