// SMTP submission of the real binary, spoken to by the clients applications use: nodemailer (implicit TLS trusting the
// kept certificate, and STARTTLS with requireTLS), Python's smtplib and swaks. Each message becomes a /v1 message with
// its events, a signed webhook delivery and a DKIM-signed copy in the sink; every refusal answers its code.
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { connect as tlsConnect } from 'node:tls';
import { execa } from 'execa';
import nodemailer from 'nodemailer';
import { SMTPServer } from 'smtp-server';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { SIGNATURE_HEADER, verifyWebhook } from '../../src/contract/signature.js';
import { ensureBuilt, killAll, serve, stop, type Served } from '../helpers/binary.js';
import { startReceiver, type Receiver } from '../helpers/receiver.js';
import { smtpTalk } from '../helpers/smtp.js';

const run = promisify(execFile);

describe('SMTP submission of svc serve', () => {
  let s: Served;
  let dir: string;
  let receiver: Receiver;
  let secret: string;
  let relay: SMTPServer;
  /** What the relay (`--relay`) was handed: the subjects, as the sink keeps the rest. */
  const relayed: string[] = [];
  /** Resolves once the relay has been handed a message with this subject (it relays after the sink caught it). */
  const relayedWaiters: (() => void)[] = [];
  const relayedOnce = (subject: string) =>
    relayed.includes(subject)
      ? Promise.resolve()
      : new Promise<void>((resolve) => relayedWaiters.push(() => relayed.includes(subject) && resolve()));
  let ca: Buffer;
  let port: number;
  let tlsPort: number;
  let key: string;

  beforeAll(async () => {
    ensureBuilt();
    dir = mkdtempSync(join(tmpdir(), 'svc-submission-'));
    receiver = await startReceiver(() => 204);
    relay = new SMTPServer({
      authOptional: true,
      disabledCommands: ['STARTTLS'],
      logger: false,
      onData(stream, _session, callback) {
        const chunks: Buffer[] = [];
        stream.on('data', (c: Buffer) => chunks.push(c));
        stream.on('end', () => {
          relayed.push(/^Subject: (.*)$/m.exec(Buffer.concat(chunks).toString())?.[1]?.trim() ?? '');
          for (const w of relayedWaiters) w();
          callback();
        });
      },
    });
    await new Promise<void>((resolve) => relay.listen(0, '127.0.0.1', resolve));
    const relayPort = (relay.server.address() as AddressInfo).port;
    s = await serve([
      '--data-dir',
      join(dir, 'data'),
      '--clock',
      'manual',
      '--send-rate',
      '3',
      '--relay',
      `smtp://127.0.0.1:${relayPort}`,
    ]);
    port = Number(new URL(s.ready.submission!).port);
    tlsPort = Number(new URL(s.ready.submissions!).port);
    key = s.ready.seed!.api_key_test!;
    ca = readFileSync(s.ready.smtp_tls.cert!);
    const hook = await admin('POST', '/sandbox/webhooks', {
      workspace_id: s.ready.seed!.workspace_id,
      url: receiver.url,
    });
    expect(hook.status).toBe(201);
    secret = hook.body.secret;
  }, 120_000);
  afterAll(async () => {
    if (s) await stop(s);
    killAll();
    await receiver?.close();
    await new Promise<void>((resolve) => (relay ? relay.close(() => resolve()) : resolve()));
    rmSync(dir, { recursive: true, force: true });
  });
  // The sending bucket (3 a second, 6 at most) is full again at the start of each test.
  beforeEach(async () => {
    await admin('POST', '/sandbox/clock', { advance_seconds: 10 });
  });

  async function call(method: string, path: string, token: string | null, body?: unknown) {
    const res = await fetch(s.origin + path, {
      method,
      headers: {
        ...(token ? { authorization: `Bearer ${token}` } : {}),
        ...(body ? { 'content-type': 'application/json' } : {}),
      },
      body: body ? JSON.stringify(body) : undefined,
    });
    return { status: res.status, body: (await res.json().catch(() => null)) as any };
  }
  const admin = (method: string, path: string, body?: unknown) => call(method, path, s.ready.admin_token, body);

  /**
   * Everything that follows a submitted message, as for one sent through the API: its /v1 message (delivered), its
   * events, the webhook deliveries of them (signatures verified) and the DKIM-signed copy in the sink.
   */
  async function followed(id: string) {
    // Runs the due work (delivery, the simulated outcome, webhook attempts) before it answers.
    expect((await admin('POST', '/sandbox/clock', { advance_seconds: 0 })).status).toBe(200);
    const message = await call('GET', `/v1/emails/${id}`, key);
    expect(message.status).toBe(200);
    const events = await call('GET', '/v1/events?limit=100', key);
    const types = events.body.data.filter((e: any) => e.data.message_id === id).map((e: any) => e.type);
    const hooks = receiver.received
      .filter((r) => JSON.parse(r.body).data.message_id === id)
      .map((r) => {
        verifyWebhook({ secret, header: r.headers[SIGNATURE_HEADER.toLowerCase()] as string, body: r.body });
        return JSON.parse(r.body).type as string;
      });
    const list = await admin('GET', '/sandbox/messages?limit=100');
    const summary = list.body.data.find((m: any) => m.message_id === id);
    expect(summary, `no caught copy of ${id}`).toBeDefined();
    const caught = (await admin('GET', `/sandbox/messages/${summary.id}`)).body;
    return { message: message.body, types, hooks, caught };
  }

  it('keeps the certificate it made in the data directory, 0600, and names it with its fingerprint', async () => {
    const cert = s.ready.smtp_tls.cert!;
    expect(cert).toBe(join(dir, 'data', 'smtp-tls.crt'));
    expect(statSync(cert).mode & 0o777).toBe(0o600);
    expect(statSync(join(dir, 'data', 'smtp-tls.key')).mode & 0o777).toBe(0o600);
    // What a client sees in the handshake is that certificate.
    const seen = await new Promise<string>((resolve, reject) => {
      const socket = tlsConnect({ host: '127.0.0.1', port: tlsPort, ca }, () => {
        resolve(socket.getPeerX509Certificate()!.fingerprint256);
        socket.destroy();
      });
      socket.on('error', reject);
    });
    expect(seen).toBe(s.ready.smtp_tls.fingerprint_sha256);
  });

  it('nodemailer over implicit TLS, trusting the kept certificate: a /v1 message with its events, webhooks and a DKIM-signed copy', async () => {
    const transport = nodemailer.createTransport({
      host: '127.0.0.1',
      port: tlsPort,
      secure: true,
      auth: { user: 'resend', pass: key },
      tls: { ca },
    });
    const info = await transport.sendMail({
      from: 'Shop <orders@example.test>',
      to: 'ada@example.org',
      bcc: 'audit@example.org',
      subject: 'Your receipt',
      text: 'Thanks! Your code is 271828',
      html: '<p>Thanks! Your code is <b>271828</b></p>',
      attachments: [{ filename: 'receipt.txt', content: 'one order' }],
      headers: { 'X-Entity-Ref-ID': 'order-1' },
    });
    transport.close();
    const id = /^250 2\.0\.0 OK (msg_\w+)$/.exec(info.response)?.[1];
    expect(id, info.response).toBeDefined();
    const { message, types, hooks, caught } = await followed(id!);
    expect(message).toMatchObject({
      status: 'delivered',
      from: '"Shop" <orders@example.test>',
      to: ['ada@example.org'],
      bcc: ['audit@example.org'],
      subject: 'Your receipt',
    });
    expect(types).toEqual(expect.arrayContaining(['email.queued', 'email.sent', 'email.delivered']));
    expect(hooks).toEqual(expect.arrayContaining(['email.queued', 'email.sent', 'email.delivered']));
    expect(caught).toMatchObject({ dkim: 'pass', dkim_domain: 'example.test', subject: 'Your receipt' });
    expect(caught.text).toContain('271828');
    expect(caught.html).toContain('<b>271828</b>');
    expect(caught.attachments).toEqual([expect.objectContaining({ filename: 'receipt.txt' })]);
    expect(caught.headers).toEqual(expect.arrayContaining([{ name: 'X-Entity-Ref-ID', value: 'order-1' }]));
    // Bcc is an envelope recipient of the delivery, named in no header.
    expect(caught.envelope.rcpt_to).toEqual(expect.arrayContaining(['ada@example.org', 'audit@example.org']));
    expect(caught.headers.map((h: { name: string }) => h.name.toLowerCase())).not.toContain('bcc');
  });

  it('nodemailer with STARTTLS and requireTLS, and the live key: relayed as live mail is, where test mail is not', async () => {
    const send = async (pass: string, subject: string) => {
      const transport = nodemailer.createTransport({
        host: '127.0.0.1',
        port,
        secure: false,
        requireTLS: true,
        auth: { user: 'app', pass },
        tls: { ca },
      });
      try {
        return await transport.sendMail({ from: 'hello@example.test', to: 'grace@example.org', subject, text: 'Hi' });
      } finally {
        transport.close();
      }
    };
    const live = await send(s.ready.seed!.api_key_live!, 'Live over STARTTLS');
    const test = await send(key, 'Test over STARTTLS');
    for (const info of [live, test]) expect(info.response).toMatch(/^250 2\.0\.0 OK msg_\w+$/);
    const liveId = live.response.split(' ').pop()!;
    const { message, caught } = await followed(liveId);
    expect(message.status).toBe('delivered');
    expect(caught.dkim).toBe('pass');
    // --relay passes live mail on once the sink has caught it (a relay job); test-key mail is never given one.
    await relayedOnce('Live over STARTTLS');
    expect(relayed).not.toContain('Test over STARTTLS');
  });

  it("Python's smtplib: starttls(), login(), a message with Cc and Bcc; a declared size over the limit is 552", async () => {
    const script = `
import json, os, smtplib, ssl
from email.message import EmailMessage
ctx = ssl.create_default_context(cafile=os.environ['CA'])
# What Python 3.13 verifies with by default: OpenSSL's strict checks of the certificate.
ctx.verify_flags |= ssl.VERIFY_X509_STRICT
out = {}
with smtplib.SMTP('localhost', int(os.environ['PORT']), timeout=20) as s:
    s.starttls(context=ctx)
    s.login('resend', os.environ['KEY'])
    m = EmailMessage()
    m['From'] = 'Python <py@example.test>'
    m['To'] = 'ada@example.org'
    m['Cc'] = 'cc@example.org'
    m['Subject'] = 'From smtplib'
    m['Idempotency-Key'] = 'py-1'
    m.set_content('Your code is 314159')
    m.add_alternative('<p>Your code is <b>314159</b></p>', subtype='html')
    for n in ('first', 'again'):
        s.mail('py@example.test')
        for r in ('ada@example.org', 'cc@example.org', 'hidden@example.org'):
            s.rcpt(r)
        out[n] = s.data(m.as_bytes())
    out['big'] = s.mail('py@example.test', ['SIZE=%d' % (41 * 1024 * 1024)])
print(json.dumps({k: [v[0], v[1].decode()] for k, v in out.items()}))
`;
    const { stdout } = await run('python3', ['-c', script], {
      env: { PATH: process.env.PATH!, CA: s.ready.smtp_tls.cert!, PORT: String(port), KEY: key },
    });
    const out = JSON.parse(stdout) as Record<string, [number, string]>;
    expect(out.first![0]).toBe(250);
    const id = /^2\.0\.0 OK (msg_\w+)$/.exec(out.first![1])?.[1];
    // The same Idempotency-Key: the same message, not a second one.
    expect(out.again).toEqual(out.first);
    expect(out.big![0]).toBe(552);
    const { message, types, hooks, caught } = await followed(id!);
    expect(message).toMatchObject({
      status: 'delivered',
      to: ['ada@example.org'],
      cc: ['cc@example.org'],
      bcc: ['hidden@example.org'],
    });
    expect(types).toContain('email.delivered');
    expect(hooks).toContain('email.delivered');
    expect(caught).toMatchObject({ dkim: 'pass', subject: 'From smtplib' });
    expect(caught.text).toContain('314159');
    const again = await admin('GET', '/sandbox/messages?q=smtplib&limit=100');
    expect(again.body.data).toHaveLength(1);
  });

  it('swaks with STARTTLS and AUTH PLAIN, verifying the certificate', async () => {
    const { stdout } = await run('swaks', [
      ...[
        '--server',
        '127.0.0.1',
        '--port',
        String(port),
        '--tls',
        '--tls-verify',
        '--tls-ca-path',
        s.ready.smtp_tls.cert!,
      ],
      ...['--auth', 'PLAIN', '--auth-user', 'swaks', '--auth-password', key],
      ...['--from', 'swaks@example.test', '--to', 'bounce@simulator.test'],
      ...['--header', 'Subject: From swaks', '--body', 'Sent by swaks'],
    ]);
    const id = /<~ +250 2\.0\.0 OK (msg_\w+)/.exec(stdout)?.[1];
    expect(id, stdout).toBeDefined();
    const { message, types, hooks, caught } = await followed(id!);
    // A simulator recipient plays its outcome, as for the API.
    expect(message.status).toBe('bounced');
    expect(types).toContain('email.bounced');
    expect(hooks).toContain('email.bounced');
    expect(caught).toMatchObject({ dkim: 'pass', subject: 'From swaks' });
  });

  it("OpenSSL's s_client upgrades with STARTTLS and verifies the kept certificate for localhost and 127.0.0.1", async () => {
    for (const check of [
      ['-verify_hostname', 'localhost'],
      ['-verify_ip', '127.0.0.1'],
    ]) {
      // It says QUIT once upgraded, and the server closes.
      const { stdout } = await execa(
        'openssl',
        [
          ...['s_client', '-connect', `127.0.0.1:${port}`, '-starttls', 'smtp', '-crlf', '-verify_return_error'],
          ...['-CAfile', s.ready.smtp_tls.cert!, ...check],
        ],
        { input: 'QUIT\n', timeout: 15_000 },
      );
      expect(stdout).toMatch(/Verify return code: 0 \(ok\)/);
      expect(stdout).toMatch(/Peer signature type: ECDSA/);
    }
  });

  /** swaks's transcript of a session (`<~` a reply over TLS, `<~*` a refusal), whatever its exit code. */
  async function swaks(args: string[]): Promise<string> {
    const common = ['--server', '127.0.0.1', '--port', String(port), '--tls', '--tls-ca-path', s.ready.smtp_tls.cert!];
    const r = await run('swaks', [...common, ...args]).then(
      (ok) => ok.stdout,
      (err: { stdout: string }) => err.stdout,
    );
    return r;
  }
  const message = ['--from', 'swaks@example.test', '--to', 'ada@example.org', '--body', 'x'];

  it('refuses: no AUTH (530), a wrong key (535 5.7.8), a key without emails:send (saying so), AUTH before TLS (not offered; 538)', async () => {
    expect(await swaks(message)).toMatch(/<~\* +530 5\.7\.0 Authentication required/);
    const wrong = await swaks([
      ...message,
      '--auth',
      'LOGIN',
      '--auth-user',
      'resend',
      '--auth-password',
      'svc_test_nope',
    ]);
    expect(wrong).toMatch(/<~\* +535 5\.7\.8 The API key is unknown, revoked or expired/);
    const login = { email: s.ready.seed!.email, password: s.ready.seed!.password };
    const session = (await call('POST', '/v1/auth/login', null, login)).body.access_token;
    const readOnly = await call('POST', '/v1/api-keys', session, { name: 'reader', scopes: ['emails:read'] });
    expect(readOnly.status).toBe(201);
    const scoped = await swaks([
      ...message,
      '--auth',
      'PLAIN',
      '--auth-user',
      'x',
      '--auth-password',
      readOnly.body.key,
    ]);
    expect(scoped).toMatch(/<~\* +535 5\.7\.8 This API key lacks the emails:send scope/);
    // Before STARTTLS, AUTH is neither offered nor taken: the key would travel in the clear.
    const talk = await smtpTalk(port);
    expect(await talk.reply()).toMatch(/^220 /);
    talk.write('EHLO client.example\r\n');
    const ehlo = await talk.reply();
    expect(ehlo).toMatch(/^250[- ]STARTTLS\r$/m);
    expect(ehlo).not.toMatch(/AUTH/);
    talk.write(`AUTH PLAIN ${Buffer.from(`\0x\0${key}`).toString('base64')}\r\n`);
    expect(await talk.reply()).toMatch(/^538 /);
    talk.destroy();
  });

  it('refuses a From domain that is not verified with 550 5.7.1 and the API detail; a rate limit with 451 and the wait', async () => {
    const auth = ['--auth', 'LOGIN', '--auth-user', 'resend', '--auth-password', key];
    const other = await swaks(['--from', 'me@unverified.example', '--to', 'ada@example.org', '--body', 'x', ...auth]);
    expect(other).toMatch(/<~\* +550 5\.7\.1 unverified\.example is not a verified domain of this workspace/);
    // One token left of the six: the next message is taken, the one after refused until the clock moves.
    await swaks([...message, ...auth]);
    await swaks([...message, ...auth]);
    await swaks([...message, ...auth]);
    await swaks([...message, ...auth]);
    expect(await swaks([...message, ...auth])).toMatch(/<~ +250 2\.0\.0 OK msg_/);
    expect(await swaks([...message, ...auth])).toMatch(
      /<~\* +451 4\.7\.1 This workspace may send 3 messages a second; retry in 1 s\./,
    );
    await admin('POST', '/sandbox/clock', { advance_seconds: 1 });
    expect(await swaks([...message, ...auth])).toMatch(/<~ +250 2\.0\.0 OK msg_/);
  });

  it('a suppressed recipient is not sent to, as through the API', async () => {
    const transport = nodemailer.createTransport({
      host: '127.0.0.1',
      port: tlsPort,
      secure: true,
      auth: { user: 'u', pass: key },
      tls: { ca },
    });
    const info = await transport.sendMail({
      from: 'hello@example.test',
      to: 'suppressed@simulator.test',
      subject: 'No',
      text: 'x',
    });
    transport.close();
    const id = info.response.split(' ').pop()!;
    await admin('POST', '/sandbox/clock', { advance_seconds: 0 });
    const m = await call('GET', `/v1/emails/${id}`, key);
    expect(m.body.status).toBe('suppressed');
  });
});
