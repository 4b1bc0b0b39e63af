// svc-mail/testing's startSandbox, as a test file uses it: in this process, in memory, manual clock, seeded.
import { connect } from 'node:net';
import nodemailer from 'nodemailer';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../../src/testing/index.js';

describe('startSandbox', () => {
  let sb: Sandbox;
  beforeAll(async () => {
    sb = await startSandbox();
  });
  afterAll(() => sb?.close());

  const send = (body: Record<string, unknown>) =>
    sb.client.call('sendEmail', {
      body: { from: 'Shop <orders@example.test>', subject: 'Your code', ...body } as never,
    });

  it('starts seeded on ports of its own, with a client holding the test key', async () => {
    expect(sb.apiUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/v1$/);
    expect(sb.smtp.url).toBe(`smtp://127.0.0.1:${sb.smtp.port}`);
    expect(sb.seed?.api_key_test).toMatch(/^svc_test_/);
    expect(sb.inboxUrl).toContain(sb.adminToken);
    const r = await sb.client.call('listDomains', {});
    expect((r.body as { data: { name: string }[] }).data.map((d) => d.name)).toEqual(['example.test']);
  });

  it('waits for the message sent, with its links and codes taken out', async () => {
    const waiting = sb.inbox.waitFor({ to: 'ada@example.org' });
    await send({ to: 'ada@example.org', text: 'Code: 123456. Confirm at https://app.example/confirm?t=9.' });
    const m = await waiting;
    expect(m.subject).toBe('Your code');
    expect(m.codes).toEqual(['123456']);
    expect(m.links).toEqual([
      { text: 'Confirm at', url: 'https://app.example/confirm?t=9', tracked: null, role: 'action' },
    ]);
    expect(m.dkim).toBe('pass');
  });

  it('takes subject and match filters, and since as a Date', async () => {
    const before = sb.clock.now();
    await send({ to: 'bo@example.org', subject: 'Welcome', text: 'Hello' });
    await sb.inbox.waitFor({ to: 'bo@example.org', subject: 'welcome', since: before });
    const next = sb.inbox.waitFor({ to: 'bo@example.org', match: (m) => m.codes.includes('7777'), timeout: 10_000 });
    await send({ to: 'bo@example.org', text: 'Not this one: 1111' });
    await send({ to: 'bo@example.org', text: 'This one: 7777' });
    expect((await next).text).toContain('This one: 7777');
  });

  it('gives up after its timeout, saying what the inbox holds instead', async () => {
    const err = await sb.inbox.waitFor({ to: 'nobody@example.org', timeout: 300 }).then(
      () => null,
      (e: Error) => e.message,
    );
    expect(err).toMatch(
      /^inbox\.waitFor: no message to nobody@example\.org was caught within 300 ms \(counting from [^)]+\)\. The inbox holds 4 messages:\n/,
    );
    // Newest first, one line each: when, to whom, the subject, and whether a wait returned it.
    expect(err!.split('\n').slice(1)).toEqual([
      expect.stringMatching(/^ {2}\S+ {2}to bo@example\.org {2}"Your code" {2}\(an earlier wait returned it\)$/),
      expect.stringMatching(/^ {2}\S+ {2}to bo@example\.org {2}"Your code"$/),
      expect.stringMatching(/^ {2}\S+ {2}to bo@example\.org {2}"Welcome" {2}\(an earlier wait returned it\)$/),
      expect.stringMatching(/^ {2}\S+ {2}to ada@example\.org {2}"Your code" {2}\(an earlier wait returned it\)$/),
    ]);
  });

  it('takes out the code a person would type and the links as a person sees them, their tracking decoded', async () => {
    const waiting = sb.inbox.waitFor({ to: 'ida@example.org' });
    await send({
      to: 'ida@example.org',
      subject: 'Confirm your Acme account',
      text:
        'Thanks for order #10423.\nYour verification code is 482913.\n\nConfirm your account: https://app.example/confirm?t=9\n\n' +
        'Unsubscribe: https://app.example/unsubscribe',
      html:
        '<p><a href="https://app.example/view/1">View in browser</a></p><p>Thanks for order #10423.</p>' +
        '<p>Your verification code is <b>482913</b>.</p><p><a href="https://app.example/confirm?t=9">Confirm your account</a></p>' +
        '<p><a href="https://app.example/unsubscribe">Unsubscribe</a></p>',
    });
    const m = await waiting;
    expect(m.codes).toEqual(['482913']);
    expect(m.code).toBe('482913');
    expect(m.links.map((l) => [l.role, l.text, l.url])).toEqual([
      ['view-in-browser', 'View in browser', 'https://app.example/view/1'],
      ['action', 'Confirm your account', 'https://app.example/confirm?t=9'],
      ['unsubscribe', 'Unsubscribe', 'https://app.example/unsubscribe'],
    ]);
    expect(m.link()).toBe('https://app.example/confirm?t=9');
    expect(m.link({ text: 'unsubscribe' })).toBe('https://app.example/unsubscribe');
    expect(m.link({ match: /\/view\// })).toBe('https://app.example/view/1');
    // Each tracked as sent through /v1: the redirect beside the target, for a test of click events.
    const confirm = m.links[1]!;
    expect(confirm.tracked).toMatch(new RegExp(`^${sb.apiUrl.replace(/\/v1$/, '')}/t/c/`));
    const followed = await fetch(confirm.tracked!, { redirect: 'manual' });
    expect(followed.headers.get('location')).toBe(confirm.url);
  });

  it('moves the clock: a scheduled send goes out when its time comes, not before', async () => {
    const at = new Date(sb.clock.now().getTime() + 3_600_000).toISOString();
    await send({ to: 'cy@example.org', text: 'Later: 4242', scheduled_at: at });
    await expect(sb.inbox.waitFor({ to: 'cy@example.org', timeout: 300 })).rejects.toThrow(
      /no message to cy@example\.org/,
    );
    const waiting = sb.inbox.waitFor({ to: 'cy@example.org' });
    const now = await sb.clock.advance('1h');
    expect(now.getTime()).toBe(Date.parse(at));
    expect((await waiting).codes).toEqual(['4242']);
    await expect(sb.clock.advance('soon')).rejects.toThrow(/clock\.advance takes seconds or a duration/);
  });

  it('captures webhook events whose signatures it verified, and lets go of its endpoint on close', async () => {
    const hook = await sb.webhooks.capture({ events: ['email.delivered'] });
    expect(hook.secret).toMatch(/^whsec_/);
    const sent = await send({ to: 'dee@example.org', text: 'Hi' });
    const id = (sent.body as { id: string }).id;
    const e = await hook.waitFor('email.delivered', (ev) => ev.data.message_id === id);
    expect(e.attempt).toBe(1);
    expect(hook.events().every((ev) => ev.type === 'email.delivered')).toBe(true);
    await hook.close();
    const left = await sb.client.sandbox('listWebhooks', { query: {} });
    expect(left.body.data.map((w) => w.id)).not.toContain(hook.endpointId);
  });

  it('sets, lists and clears chaos rules: a refused send retried by the client, a deferral the clock moves past', async () => {
    const set = await sb.chaos.set(
      [{ match: { method: 'POST', path: '/v1/emails' }, action: { status: 503, retry_after: 0 }, times: 1 }],
      5,
    );
    expect(set).toEqual({
      rules: [
        {
          match: { method: 'POST', path: '/v1/emails' },
          action: { status: 503, retry_after: 0 },
          times: 1,
          remaining: 1,
        },
      ],
      seed: 5,
    });
    // The sandbox's client retries the 503 by itself (Retry-After: 0).
    const through = sb.inbox.waitFor({ to: 'eve@example.org' });
    const sent = await send({ to: 'eve@example.org', text: 'Through' });
    expect(sent.status).toBe(202);
    expect((await sb.chaos.list()).rules[0]!.remaining).toBe(0);
    await through;

    // The sink refuses the next recipient once: the delivery is deferred, and goes out 2 s of service time later.
    await sb.chaos.set([{ match: { smtp: 'rcpt' }, action: { code: 451 }, times: 1 }]);
    const deferred = await send({ to: 'fay@example.org', text: 'Later' });
    const id = (deferred.body as { id: string }).id;
    const timeline = async () => (await sb.client.call('getEmail', { params: { id } })).body.events.map((e) => e.type);
    for (let i = 0; i < 100 && (await timeline()).length < 2; i++) await new Promise((r) => setTimeout(r, 20));
    expect(await timeline()).toEqual(['email.queued', 'email.deferred']);
    await expect(sb.inbox.waitFor({ to: 'fay@example.org', timeout: 200 })).rejects.toThrow(/no message to fay/);
    const waiting = sb.inbox.waitFor({ to: 'fay@example.org' });
    await sb.clock.advance('2s');
    expect((await waiting).text).toContain('Later');

    await sb.chaos.clear();
    expect((await sb.chaos.list()).rules).toEqual([]);
  });

  it('takes mail through SMTP submission, as an app configured for SMTP sends it, and waits for it by workspace', async () => {
    const transport = nodemailer.createTransport({
      host: sb.submission.host,
      port: sb.submission.port,
      requireTLS: true,
      auth: { user: 'app', pass: sb.seed!.api_key_test! },
      tls: { ca: sb.submission.ca },
    });
    const waiting = sb.inbox.waitFor({ workspace: sb.seed!.workspace_id, to: 'smtp-user@example.org' });
    const info = await transport.sendMail({
      from: 'Shop <orders@example.test>',
      to: 'smtp-user@example.org',
      subject: 'Your code',
      text: 'Code: 424242',
    });
    transport.close();
    const m = await waiting;
    expect(m.message_id).toBe(info.response.split(' ').pop());
    expect(m.codes).toEqual(['424242']);
    expect(m.dkim).toBe('pass');
    expect((await sb.inbox.list({ workspace: 'no such workspace' })).length).toBe(0);
    expect((await sb.inbox.list({ workspace: sb.seed!.workspace_id })).map((x) => x.id)).toContain(m.id);
  });

  it('the sink takes a client given its host and port alone; smtpStarttls: true offers STARTTLS, which such a client then fails', async () => {
    // nodemailer's defaults: STARTTLS whenever the server offers it, the certificate verified against the system's list.
    const send = (box: Sandbox) => {
      const transport = nodemailer.createTransport({
        host: '127.0.0.1',
        port: box.smtp.port,
        auth: { user: 'app', pass: box.seed!.api_key_test! },
      });
      return transport
        .sendMail({ from: 'app@example.org', to: 'go-app@example.org', subject: 'From an app', text: 'x' })
        .finally(() => transport.close());
    };
    const waiting = sb.inbox.waitFor({ to: 'go-app@example.org', workspace: sb.seed!.workspace_id });
    expect((await send(sb)).response).toMatch(/^250 /);
    expect((await waiting).subject).toBe('From an app');
    const offering = await startSandbox({ smtpStarttls: true });
    try {
      await expect(send(offering)).rejects.toThrow(/self[- ]signed certificate/i);
    } finally {
      await offering.close();
    }
  });

  it('allowPrivateAttachmentUrls: an attachment url to a private address is refused without it, taken with it', async () => {
    // Scheduled a day ahead (and cancelled): nothing here ever connects to 10.0.0.1.
    const body = (box: Sandbox) => ({
      to: 'files@example.org',
      text: 'x',
      scheduled_at: new Date(box.clock.now().getTime() + 86_400_000).toISOString(),
      attachments: [{ filename: 'report.pdf', url: 'https://10.0.0.1/report.pdf' }],
    });
    await expect(send(body(sb))).rejects.toMatchObject({
      status: 422,
      problem: { code: 'validation_failed', errors: [expect.objectContaining({ path: 'attachments.0.url' })] },
    });
    const open = await startSandbox({ allowPrivateAttachmentUrls: true });
    try {
      const sent = await open.client.call('sendEmail', {
        body: { from: 'Shop <orders@example.test>', subject: 'Your file', ...body(open) } as never,
      });
      expect(sent.body.status).toBe('scheduled');
      await open.client.call('cancelEmail', { params: { id: sent.body.id } });
    } finally {
      await open.close();
    }
  });

  it('clears the inbox', async () => {
    await sb.inbox.clear();
    expect(await sb.inbox.list()).toEqual([]);
  });

  it('closes without waiting for a connection that never sent a request (a pool opens them ahead)', async () => {
    const other = await startSandbox({ seed: false });
    // A wait for mail reads the inbox stream and aborts it once done; a client pool may then hold a fresh connection.
    await other.inbox.waitFor({ timeout: 50 }).catch(() => {});
    const { port } = new URL(other.apiUrl);
    const silent = connect(Number(port), '127.0.0.1');
    await new Promise((resolve) => silent.once('connect', resolve));
    const ended = new Promise((resolve) => silent.once('close', resolve));
    // Before, close() waited for such a connection until its client gave up on it (seconds; never, for this one).
    await other.close();
    await ended;
    expect(silent.destroyed).toBe(true);
  });

  it("finds its seeded domain's DKIM key once per process; a domain added gets a key of its own", async () => {
    const other = await startSandbox();
    try {
      const dkim = async (box: Sandbox, id?: string) => {
        const domains = (await box.client.call('listDomains', {})).body.data;
        const d = id ? domains.find((x) => x.id === id)! : domains.find((x) => x.name === 'example.test')!;
        const value = d.records.find((r) => r.kind === 'dkim')!.value;
        expect(value).toMatch(/p=[A-Za-z0-9+/]{300,}/);
        return value;
      };
      expect(await dkim(other)).toBe(await dkim(sb));
      const added = await other.client.call('createDomain', { body: { name: 'own-key.test' } });
      expect(await dkim(other, added.body.id)).not.toBe(await dkim(sb));
      // The shared key signs for real: mail from the seeded domain of the second sandbox passes DKIM on arrival.
      const waiting = other.inbox.waitFor({ to: 'dkim@example.org' });
      await other.client.call('sendEmail', {
        body: { from: 'orders@example.test', to: 'dkim@example.org', subject: 'signed', text: 'hi' },
      });
      const m = await waiting;
      expect((await other.client.sandbox('getMessage', { params: { id: m.id } })).body.dkim).toBe('pass');
    } finally {
      await other.close();
    }
  });
});
