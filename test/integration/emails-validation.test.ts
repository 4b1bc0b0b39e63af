// POST /v1/emails: what a send request must look like (docs/api.md#sending: from, live
// sending, addresses, content, attachments, headers, tags, queued vs scheduled, credential kinds and scopes). Every refusal is asserted with status and code, and — where it matters — that nothing is sent.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { verificationToken } from './auth-helpers.js';
import {
  FROM,
  addDomain,
  caughtDetail,
  caughtTo,
  createKey,
  errorPaths,
  expectProblem,
  getMessage,
  mail,
  newTenant,
  outbox,
  publishAndVerify,
  rcpt,
  send,
  sendOk,
  seedTenant,
  serviceNow,
  sessionOf,
} from './emails-helpers.js';

let s: TestServer;

beforeAll(async () => {
  // A generous bucket: this file sends far more than the default 100-token burst without moving the clock.
  s = await startTestServer({ sendRate: 10_000 });
});
afterAll(() => s.close());

const ws = () => s.seed!.workspace_id;

/**
 * Sends `body` (whose recipient is `to`) expecting a refusal, then runs due jobs and asserts that nothing reached the
 * sink for `to` and that no event entered the outbox.
 */
async function expectRefused(body: Record<string, unknown>, status: number, code: string, to?: string) {
  await s.settle(); // earlier tests' deliveries must not count as events of this one
  const before = outbox(s, ws()).length;
  const r = await send(s, body);
  expectProblem(r, status, code);
  await s.settle();
  if (to) expect(await caughtTo(s, to)).toEqual([]);
  expect(outbox(s, ws()).length).toBe(before);
  return r;
}

describe('from', () => {
  it('accepts a bare address and a display name "Name <address>", which arrives as the From header', async () => {
    const to = rcpt();
    const a = await sendOk(s, mail({ from: 'Acme Billing <billing@example.test>', to }));
    expect(a.status).toBe('queued');
    await s.settle();
    const m = await caughtDetail(s, a.id);
    expect(m.from).toContain('Acme Billing');
    expect(m.from).toContain('billing@example.test');
    expect((await getMessage(s, a.id)).from).toBe('Acme Billing <billing@example.test>');

    // Quoted and non-ASCII display names arrive intact and signed.
    for (const [from, name] of [
      ['"Acme, Inc." <billing@example.test>', 'Acme, Inc.'],
      ['Jörg Müller <billing@example.test>', 'Jörg Müller'],
    ]) {
      const q = await sendOk(s, mail({ from }));
      await s.settle();
      const caught = await caughtDetail(s, q.id);
      expect(caught.from).toBe(`"${name}" <billing@example.test>`);
      expect(caught.dkim).toBe('pass');
    }
  });

  it('refuses a from that is not an address (422 validation_failed naming from)', async () => {
    const r = await expectRefused(mail({ from: 'not an address' }), 422, 'validation_failed');
    expect(errorPaths(r)).toContain('from');
  });

  it('a domain that is not the workspace’s → 422 domain_not_verified', async () => {
    const to = rcpt();
    const r = await expectRefused(mail({ from: 'someone@not-ours.test', to }), 422, 'domain_not_verified', to);
    expect(errorPaths(r)).toContain('from');
  });

  it('a domain of the workspace that is added but not verified → 422 domain_not_verified', async () => {
    const token = await sessionOf(s, seedTenant(s));
    const d = await addDomain(s, token, 'unverified-send.test');
    const to = rcpt();
    const r = await expectRefused(mail({ from: `hello@${d.name}`, to }), 422, 'domain_not_verified', to);
    expect(r.body.detail).toContain('unverified-send.test');
  });

  it('a key restricted to another domain → 403 domain_not_allowed; restricted to example.test → 202', async () => {
    const token = await sessionOf(s, seedTenant(s));
    const other = await addDomain(s, token, 'restricted-other.test');
    const restricted = await createKey(s, token, { scopes: ['emails:send'], domain_id: other.id });
    const to = rcpt();
    await s.settle();
    const before = outbox(s, ws()).length;
    const r = await send(s, mail({ to }), { key: restricted.key });
    expectProblem(r, 403, 'domain_not_allowed');
    await s.settle();
    expect(await caughtTo(s, to)).toEqual([]);
    expect(outbox(s, ws()).length).toBe(before);

    const own = await createKey(s, token, { scopes: ['emails:send'], domain_id: s.seed!.domain_id });
    const ok = await send(s, mail(), { key: own.key });
    expect(ok.status, ok.text).toBe(202);
  });
});

describe('domain status and workspace status', () => {
  it('a degraded domain still sends; the address domain is matched case-insensitively', async () => {
    const t = await newTenant(s, 'degraded');
    const d = await addDomain(s, t.token, 'degraded-send.test');
    await publishAndVerify(s, t.token, d.id);
    const key = await createKey(s, t.token, { scopes: ['emails:send', 'emails:read'] });
    // A required record disappears: the next check degrades the domain.
    expect((await s.admin('DELETE', `/sandbox/dns?host=bounces.${d.name}&type=TXT`)).status).toBe(204);
    const v = await s.call('POST', `/v1/domains/${d.id}/verify`, { token: t.token });
    expect(v.status, v.text).toBe(200);
    expect(v.body.status).toBe('degraded');
    const a = await sendOk(s, mail({ from: `Hi@${d.name.toUpperCase()}` }), { key: key.key });
    await s.settle();
    expect((await getMessage(s, a.id, key.key)).status).toBe('delivered');
    expect((await caughtDetail(s, a.id)).dkim).toBe('pass');
  });

  it('a suspended workspace → 403 workspace_suspended, nothing sent', async () => {
    const t = await newTenant(s, 'suspended');
    const d = await addDomain(s, t.token, 'suspended-send.test');
    await publishAndVerify(s, t.token, d.id);
    const key = await createKey(s, t.token, { scopes: ['emails:send'] });
    expect((await s.admin('POST', `/sandbox/workspaces/${t.workspace_id}/suspend`)).status).toBe(200);
    const to = rcpt();
    expectProblem(await send(s, mail({ from: `hi@${d.name}`, to }), { key: key.key }), 403, 'workspace_suspended');
    await s.settle();
    expect(await caughtTo(s, to)).toEqual([]);
    expect((await s.admin('POST', `/sandbox/workspaces/${t.workspace_id}/activate`)).status).toBe(200);
    expect((await send(s, mail({ from: `hi@${d.name}`, to }), { key: key.key })).status).toBe(202);
  });
});

describe('live sending', () => {
  it('a live key of a workspace whose owner has not confirmed → 403 live_sending_locked; a test key works; confirming unlocks', async () => {
    const t = await newTenant(s, 'unconfirmed');
    const d = await addDomain(s, t.token, 'second-tenant.test');
    await publishAndVerify(s, t.token, d.id);
    const live = await createKey(s, t.token, { scopes: ['emails:send', 'emails:read'], mode: 'live' });
    const test = await createKey(s, t.token, { scopes: ['emails:send', 'emails:read'], mode: 'test' });
    expect(live.key.startsWith('svc_live_')).toBe(true);

    const to = rcpt();
    const before = outbox(s, t.workspace_id).length;
    const locked = await send(s, mail({ from: `hi@${d.name}`, to }), { key: live.key });
    expectProblem(locked, 403, 'live_sending_locked');
    await s.settle();
    expect(await caughtTo(s, to)).toEqual([]);
    expect(outbox(s, t.workspace_id).length).toBe(before);

    const viaTest = await send(s, mail({ from: `hi@${d.name}`, to }), { key: test.key });
    expect(viaTest.status, viaTest.text).toBe(202);
    await s.settle();
    expect(await caughtTo(s, to)).toHaveLength(1);

    // The owner confirms their address: the live key now sends.
    const tokenValue = await verificationToken(s, t.email);
    const v = await s.call('POST', '/v1/auth/verify-email', { body: { token: tokenValue } });
    expect(v.status, v.text).toBe(200);
    const unlocked = await send(s, mail({ from: `hi@${d.name}` }), { key: live.key });
    expect(unlocked.status, unlocked.text).toBe(202);
  });

  it('the seed live key (confirmed owner) sends', async () => {
    const r = await send(s, mail(), { key: s.seed!.api_key_live });
    expect(r.status, r.text).toBe(202);
  });
});

describe('recipients', () => {
  it('to as a string is accepted and listed as an array', async () => {
    const to = rcpt();
    const a = await sendOk(s, mail({ to }));
    expect((await getMessage(s, a.id)).to).toEqual([to]);
  });

  it('to: [] → 422; 51 items → 422; 50 items → 202', async () => {
    const r0 = await expectRefused(mail({ to: [] }), 422, 'validation_failed');
    expect(errorPaths(r0).some((p) => p.startsWith('to'))).toBe(true);
    const many = Array.from({ length: 51 }, () => rcpt('many'));
    const r51 = await expectRefused(mail({ to: many }), 422, 'validation_failed', many[0]);
    expect(errorPaths(r51).some((p) => p.startsWith('to'))).toBe(true);
    const a = await sendOk(s, mail({ to: many.slice(0, 50) }));
    expect((await getMessage(s, a.id)).to).toHaveLength(50);
  });

  it('cc or bcc of 51 → 422; reply_to of 11 → 422; reply_to of 10 → 202', async () => {
    const list = (n: number) => Array.from({ length: n }, () => rcpt('list'));
    const to = rcpt();
    expect(errorPaths(await expectRefused(mail({ to, cc: list(51) }), 422, 'validation_failed', to))).toContain('cc');
    expect(errorPaths(await expectRefused(mail({ to, bcc: list(51) }), 422, 'validation_failed', to))).toContain('bcc');
    expect(errorPaths(await expectRefused(mail({ to, reply_to: list(11) }), 422, 'validation_failed', to))).toContain(
      'reply_to',
    );
    await sendOk(s, mail({ reply_to: list(10), cc: list(50), bcc: list(50) }));
  });

  it('an invalid address in to, cc, bcc or reply_to → 422 naming it', async () => {
    const to = rcpt();
    expect(errorPaths(await expectRefused(mail({ to: ['a@b.example', 'nope'] }), 422, 'validation_failed'))).toContain(
      'to.1',
    );
    expect(errorPaths(await expectRefused(mail({ to, cc: ['@x.example'] }), 422, 'validation_failed', to))).toContain(
      'cc.0',
    );
    expect(errorPaths(await expectRefused(mail({ to, bcc: ['a@'] }), 422, 'validation_failed', to))).toContain('bcc.0');
    expect(
      errorPaths(await expectRefused(mail({ to, reply_to: ['a b@c.example'] }), 422, 'validation_failed', to)),
    ).toContain('reply_to.0');
  });

  it('UTF-8 addresses are accepted and delivered (jörg@exämple.de)', async () => {
    const a = await sendOk(s, mail({ to: ['jörg@exämple.de'], cc: ['名前@example.jp'] }));
    const m = await getMessage(s, a.id);
    expect(m.to).toEqual(['jörg@exämple.de']);
    await s.settle();
    expect((await getMessage(s, a.id)).status).toBe('delivered');
    const caught = await caughtDetail(s, a.id);
    expect(caught.envelope.rcpt_to.map((x: string) => x.normalize())).toEqual(
      expect.arrayContaining(['jörg@exämple.de'.normalize()]),
    );
  });

  for (const field of ['from', 'to', 'cc', 'bcc', 'reply_to'] as const) {
    for (const eol of ['\r\n', '\n', '\r']) {
      it(`CR/LF (${JSON.stringify(eol)}) inside ${field} → 422, nothing sent`, async () => {
        const victim = rcpt('injected');
        const bad = `a@example.test${eol}Bcc: ${victim}`;
        const to = rcpt();
        const body =
          field === 'from'
            ? mail({ from: `${FROM}${eol}Bcc: ${victim}`, to })
            : field === 'to'
              ? mail({ to: bad })
              : mail({ to, [field]: [bad] });
        const r = await expectRefused(body, 422, 'validation_failed', to);
        expect(errorPaths(r).some((p) => p.startsWith(field))).toBe(true);
        expect(await caughtTo(s, victim)).toEqual([]);
      });
    }
  }
});

describe('subject and content', () => {
  it('CR/LF in the subject → 422, nothing sent', async () => {
    for (const eol of ['\r\n', '\n', '\r']) {
      const to = rcpt();
      const victim = rcpt('injected');
      const r = await expectRefused(mail({ to, subject: `Hi${eol}Bcc: ${victim}` }), 422, 'validation_failed', to);
      expect(errorPaths(r)).toContain('subject');
      expect(await caughtTo(s, victim)).toEqual([]);
    }
  });

  it('a subject of 999 characters → 422; 998 → 202', async () => {
    const to = rcpt();
    const r = await expectRefused(mail({ to, subject: 'x'.repeat(999) }), 422, 'validation_failed', to);
    expect(errorPaths(r)).toContain('subject');
    const a = await sendOk(s, mail({ subject: 's'.repeat(998) }));
    expect((await getMessage(s, a.id)).subject).toHaveLength(998);
  });

  it('no html, text or template_id → 422', async () => {
    const to = rcpt();
    await expectRefused({ from: FROM, to, subject: 'empty' }, 422, 'validation_failed', to);
    // html alone and text alone are enough
    await sendOk(s, { from: FROM, to: rcpt(), html: '<p>only html</p>' });
    await sendOk(s, { from: FROM, to: rcpt(), text: 'only text' });
  });

  it('template_id → 422 template_not_found (templates are not served)', async () => {
    const to = rcpt();
    const r = await expectRefused(
      { from: FROM, to, subject: 'tpl', template_id: 'tpl_welcome', template_data: { name: 'Jo' } },
      422,
      'template_not_found',
      to,
    );
    expect(errorPaths(r)).toContain('template_id');
  });

  it('an unknown field (htm) → 400 invalid_request naming it and the field meant', async () => {
    const to = rcpt();
    const r = await expectRefused({ from: FROM, to, subject: 'typo', htm: '<p>hi</p>' }, 400, 'invalid_request', to);
    expect(r.body.errors).toEqual([
      { path: 'htm', code: 'unknown_field', message: 'unknown field "htm"; did you mean "html"?' },
    ]);
    expect(r.body.detail).toBe('htm: unknown field "htm"; did you mean "html"?');
  });

  it('a field of the wrong JSON type → 400 invalid_request saying what it must be', async () => {
    const r = await send(s, mail({ subject: 42 }));
    expectProblem(r, 400, 'invalid_request');
    expect(r.body.errors).toEqual([{ path: 'subject', code: 'invalid_type', message: 'must be a string' }]);
  });
});

describe('attachments', () => {
  const att = (over: Record<string, unknown> = {}) => ({
    filename: 'a.txt',
    content: Buffer.from('hi').toString('base64'),
    ...over,
  });

  it('21 attachments → 422; 20 → 202', async () => {
    const to = rcpt();
    const r = await expectRefused(
      mail({ to, attachments: Array.from({ length: 21 }, () => att()) }),
      422,
      'validation_failed',
      to,
    );
    expect(errorPaths(r)).toContain('attachments');
    await sendOk(s, mail({ attachments: Array.from({ length: 20 }, (_, i) => att({ filename: `f${i}.txt` })) }));
  });

  it('both content and url, or neither → 422', async () => {
    const to = rcpt();
    const both = await expectRefused(
      mail({ to, attachments: [att({ url: 'https://files.example/a.txt' })] }),
      422,
      'validation_failed',
      to,
    );
    expect(errorPaths(both)).toContain('attachments.0');
    const neither = await expectRefused(
      mail({ to, attachments: [{ filename: 'a.txt' }] }),
      422,
      'validation_failed',
      to,
    );
    expect(errorPaths(neither)).toContain('attachments.0');
  });

  it('invalid base64 content → 422', async () => {
    const to = rcpt();
    for (const content of ['not base64!', 'abc', 'ab=c']) {
      const r = await expectRefused(mail({ to, attachments: [att({ content })] }), 422, 'validation_failed', to);
      expect(errorPaths(r)).toContain('attachments.0.content');
    }
  });

  it('a filename with / or \\ → 422; of 256 characters → 422; of 255 → 202', async () => {
    const to = rcpt();
    for (const filename of ['../etc/passwd', 'dir/a.txt', 'dir\\a.txt']) {
      const r = await expectRefused(mail({ to, attachments: [att({ filename })] }), 422, 'validation_failed', to);
      expect(errorPaths(r)).toContain('attachments.0.filename');
    }
    const long = await expectRefused(
      mail({ to, attachments: [att({ filename: `${'n'.repeat(252)}.txt` })] }),
      422,
      'validation_failed',
      to,
    );
    expect(errorPaths(long)).toContain('attachments.0.filename');
    await sendOk(s, mail({ attachments: [att({ filename: `${'n'.repeat(251)}.txt` })] }));
  });

  it('an http url to a non-loopback host → 422; not a URL → 422; http to 127.0.0.1 is accepted', async () => {
    const to = rcpt();
    for (const url of [
      'http://files.example/report.pdf',
      'http://10.0.0.1/a.pdf',
      'ftp://files.example/a.pdf',
      'not a url',
    ]) {
      const r = await expectRefused(
        mail({ to, attachments: [{ filename: 'a.pdf', url }] }),
        422,
        'validation_failed',
        to,
      );
      expect(errorPaths(r)).toContain('attachments.0.url');
    }
    // Accepted (scheduled far ahead so it is never fetched in this test).
    const later = new Date((await serviceNow(s)) + 86_400_000).toISOString();
    const a = await sendOk(
      s,
      mail({ scheduled_at: later, attachments: [{ filename: 'a.pdf', url: 'http://127.0.0.1:9/a.pdf' }] }),
    );
    expect(a.status).toBe('scheduled');
    expect((await s.call('POST', `/v1/emails/${a.id}/cancel`, { token: s.seed!.api_key_test })).status).toBe(200);
  });

  it('CR/LF or control characters in attachment filename, content_type or content_id → 422', async () => {
    const to = rcpt();
    const cases: [Record<string, unknown>, string][] = [
      [att({ filename: 'a\r\nBcc: x@y.example.txt' }), 'attachments.0.filename'],
      [att({ content_type: 'text/plain\r\nBcc: x@y.example' }), 'attachments.0.content_type'],
      [att({ content_id: 'logo\r\nX-Evil: 1' }), 'attachments.0.content_id'],
      [att({ content_id: '<logo@acme>' }), 'attachments.0.content_id'],
    ];
    for (const [a, path] of cases) {
      const r = await expectRefused(mail({ to, attachments: [a] }), 422, 'validation_failed', to);
      expect(errorPaths(r)).toContain(path);
    }
  });

  it('content_type defaults from the filename; a given one is kept', async () => {
    const pdf = Buffer.from('%PDF-1.4\n%fake\n').toString('base64');
    const a = await sendOk(
      s,
      mail({
        attachments: [
          { filename: 'report.pdf', content: pdf },
          { filename: 'photo.png', content: Buffer.from('png').toString('base64') },
          { filename: 'data.bin', content: pdf, content_type: 'application/x-custom' },
        ],
      }),
    );
    await s.settle();
    const m = await caughtDetail(s, a.id);
    const byName = Object.fromEntries(
      m.attachments.map((x: { filename: string; content_type: string }) => [x.filename, x.content_type]),
    );
    expect(byName).toEqual({
      'report.pdf': 'application/pdf',
      'photo.png': 'image/png',
      'data.bin': 'application/x-custom',
    });
  });
});

describe('custom headers', () => {
  it('an invalid header name → 422', async () => {
    const to = rcpt();
    for (const name of ['Bad Header', 'X:Colon', '', 'Ünïcode', 'X-(paren)']) {
      const r = await expectRefused(mail({ to, headers: { [name]: 'v' } }), 422, 'validation_failed', to);
      expect(errorPaths(r)).toContain(`headers.${name}`);
    }
  });

  const reserved = [
    'From',
    'To',
    'Cc',
    'Bcc',
    'Subject',
    'Date',
    'Message-ID',
    'MIME-Version',
    'Content-Type',
    'Content-Transfer-Encoding',
    'DKIM-Signature',
    'Return-Path',
  ];
  for (const name of reserved) {
    it(`the reserved header ${name} → 422 in any case`, async () => {
      const to = rcpt();
      for (const variant of [name, name.toLowerCase(), name.toUpperCase()]) {
        const r = await expectRefused(
          mail({ to, headers: { [variant]: 'x@example.test' } }),
          422,
          'validation_failed',
          to,
        );
        expect(errorPaths(r)).toContain(`headers.${variant}`);
      }
    });
  }

  it('CR/LF in a header value → 422, nothing sent', async () => {
    for (const eol of ['\r\n', '\n', '\r']) {
      const to = rcpt();
      const victim = rcpt('injected');
      const r = await expectRefused(
        mail({ to, headers: { 'X-Note': `a${eol}Bcc: ${victim}` } }),
        422,
        'validation_failed',
        to,
      );
      expect(errorPaths(r)).toContain('headers.X-Note');
      expect(await caughtTo(s, victim)).toEqual([]);
    }
  });

  it('a value over 998 characters → 422 naming the header, nothing sent; 998 arrive whole and the message reads back', async () => {
    for (const length of [999, 1_100_000]) {
      const to = rcpt();
      const r = await expectRefused(
        mail({ to, headers: { 'X-Foo': 'v'.repeat(length) } }),
        422,
        'validation_failed',
        to,
      );
      expect(r.body.errors).toEqual([
        { path: 'headers.X-Foo', code: 'too_big', message: 'must be at most 998 characters' },
      ]);
    }
    const a = await sendOk(s, mail({ headers: { 'X-Foo': 'v'.repeat(998) } }));
    await s.settle();
    const m = await caughtDetail(s, a.id);
    expect(m.headers).toContainEqual({ name: 'X-Foo', value: 'v'.repeat(998) });
  });

  it('more than 100 header fields → 422 on headers; 100 → 202', async () => {
    const fields = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`X-Field-${i}`, 'v']));
    const to = rcpt();
    const r = await expectRefused(mail({ to, headers: fields(101) }), 422, 'validation_failed', to);
    expect(r.body.errors).toEqual([{ path: 'headers', code: 'custom', message: 'must have at most 100 fields' }]);
    await sendOk(s, mail({ headers: fields(100) }));
  });

  it('a valid custom header arrives in the caught message', async () => {
    const a = await sendOk(
      s,
      mail({ headers: { 'X-Entity-Ref-ID': 'order-1234', 'List-Unsubscribe': '<https://example.test/u>' } }),
    );
    await s.settle();
    const m = await caughtDetail(s, a.id);
    expect(m.headers).toEqual(
      expect.arrayContaining([
        { name: expect.stringMatching(/^X-Entity-Ref-ID$/i), value: 'order-1234' },
        { name: expect.stringMatching(/^List-Unsubscribe$/i), value: '<https://example.test/u>' },
      ]),
    );
  });
});

describe('tags', () => {
  const tag = (i: number) => ({ name: `t${i}`, value: 'v' });
  it('more than 50 → 422; 50 → 202', async () => {
    const to = rcpt();
    const r = await expectRefused(
      mail({ to, tags: Array.from({ length: 51 }, (_, i) => tag(i)) }),
      422,
      'validation_failed',
      to,
    );
    expect(errorPaths(r)).toContain('tags');
    const a = await sendOk(s, mail({ tags: Array.from({ length: 50 }, (_, i) => tag(i)) }));
    expect((await getMessage(s, a.id)).tags).toHaveLength(50);
  });

  it('a bad name, an empty value or a 129-character value → 422; 128 characters and a 64-char name → 202', async () => {
    const to = rcpt();
    for (const t of [
      { name: 'has space', value: 'v' },
      { name: '', value: 'v' },
      { name: 'n'.repeat(65), value: 'v' },
      { name: 'dot.ted', value: 'v' },
    ]) {
      const r = await expectRefused(mail({ to, tags: [t] }), 422, 'validation_failed', to);
      expect(errorPaths(r)).toContain('tags.0.name');
    }
    for (const value of ['', 'v'.repeat(129)]) {
      const r = await expectRefused(mail({ to, tags: [{ name: 'ok', value }] }), 422, 'validation_failed', to);
      expect(errorPaths(r)).toContain('tags.0.value');
    }
    await sendOk(s, mail({ tags: [{ name: `A-z_0${'9'.repeat(59)}`, value: 'v'.repeat(128) }] }));
  });
});

describe('scheduled_at', () => {
  it('more than 30 days ahead → 422; 30 days ahead → scheduled', async () => {
    const now = await serviceNow(s);
    const to = rcpt();
    const r = await expectRefused(
      mail({ to, scheduled_at: new Date(now + 30 * 86_400_000 + 1000).toISOString() }),
      422,
      'validation_failed',
      to,
    );
    expect(errorPaths(r)).toContain('scheduled_at');
    const a = await sendOk(s, mail({ scheduled_at: new Date(now + 30 * 86_400_000).toISOString() }));
    expect(a.status).toBe('scheduled');
  });

  it('a scheduled_at that is not a date-time → 422', async () => {
    const r = await send(s, mail({ scheduled_at: 'tomorrow' }));
    expectProblem(r, 422, 'validation_failed');
    expect(errorPaths(r)).toContain('scheduled_at');
  });
});

describe('credentials and scopes', () => {
  it('a session on POST /v1/emails → 403 api_key_required', async () => {
    const token = await sessionOf(s, seedTenant(s));
    const to = rcpt();
    const r = await s.call('POST', '/v1/emails', { token, body: mail({ to }) });
    expectProblem(r, 403, 'api_key_required');
    await s.settle();
    expect(await caughtTo(s, to)).toEqual([]);
  });

  it('a key without emails:send → 403 insufficient_scope; no key → 401', async () => {
    const token = await sessionOf(s, seedTenant(s));
    const readOnly = await createKey(s, token, { scopes: ['emails:read', 'domains:read'] });
    const to = rcpt();
    await s.settle();
    const before = outbox(s, ws()).length;
    expectProblem(await send(s, mail({ to }), { key: readOnly.key }), 403, 'insufficient_scope');
    expectProblem(await send(s, mail({ to }), { key: null }), 401, 'missing_credentials');
    expectProblem(
      await send(s, mail({ to }), { key: 'svc_test_bogusbogusbogusbogusbogusbogus' }),
      401,
      'invalid_api_key',
    );
    await s.settle();
    expect(await caughtTo(s, to)).toEqual([]);
    expect(outbox(s, ws()).length).toBe(before);
  });

  it('the 202 carries Location {base_url}/emails/{id} and a MessageAccepted body', async () => {
    const r = await send(s, mail());
    expect(r.status).toBe(202);
    expect(r.headers.get('location')).toBe(`${s.api}/emails/${r.body.id}`);
    expect(Object.keys(r.body).sort()).toEqual(['created_at', 'id', 'status']);
    expect(r.body.created_at).toBe(new Date(await serviceNow(s)).toISOString());
    // The Location answers with the message.
    const m = await s.call('GET', new URL(r.headers.get('location')!).pathname, { token: s.seed!.api_key_test });
    expect(m.status).toBe(200);
    expect(m.body.id).toBe(r.body.id);
  });
});
