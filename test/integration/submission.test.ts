// SMTP submission's rules beyond the common ones (test/e2e/smtp-submission.test.ts): a key revoked or a workspace
// suspended during a session, the abuse filter, an Idempotency-Key reused with another message, a message whose To
// names none of its recipients; every way a message can end, each answered as what was stored; AUTH only over TLS,
// and failed AUTHs throttled; TLS sessions resumed with a ticket on both listeners; and the listeners' ports: one that
// is taken stops the start.
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect as tlsConnect } from 'node:tls';
import { promisify } from 'node:util';
import nodemailer from 'nodemailer';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { GTUBE } from '../../src/server/core/rules/send-rules.js';
import { startServer } from '../../src/server/index.js';
import { silentLogger } from '../../src/lib/log.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { caughtOf } from './emails-helpers.js';
import { createKey, sessionOf } from '../helpers/tenants.js';
import { bigHeaderBlock, manyParts, nestedParts } from '../helpers/mime.js';
import { smtpTalk, smtpTalkOn, smtpsTalk, type SmtpTalk } from '../helpers/smtp.js';

const run = promisify(execFile);
const MiB = 1024 * 1024;
const sorted = (ids: string[]) => [...ids].sort();

describe('SMTP submission', () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer();
  });
  afterAll(() => s.close());

  /** A transport over STARTTLS with the key, on one connection reused for every message (a pool of one). */
  const transport = (pass: string) =>
    nodemailer.createTransport({
      host: '127.0.0.1',
      port: s.submissionPort!,
      requireTLS: true,
      pool: true,
      maxConnections: 1,
      auth: { user: 'app', pass },
      tls: { ca: s.smtpTls.cert },
    });
  const refusal = (p: Promise<unknown>) =>
    p.then(
      () => {
        throw new Error('the message was taken');
      },
      (err: { response: string }) => err.response,
    );

  it('checks the key again for every message: one revoked during the session is refused with 535 5.7.8', async () => {
    const session = await sessionOf(s);
    const key = await createKey(s, session, { scopes: ['emails:send'] });
    const t = transport(key.key);
    try {
      const first = await t.sendMail({ from: 'a@example.test', to: 'ada@example.org', text: 'one' });
      expect(first.response).toMatch(/^250 2\.0\.0 OK msg_/);
      expect((await s.call('DELETE', `/v1/api-keys/${key.id}`, { token: session })).status).toBe(204);
      expect(await refusal(t.sendMail({ from: 'a@example.test', to: 'ada@example.org', text: 'two' }))).toMatch(
        /^535 5\.7\.8 The API key is unknown, revoked or expired/,
      );
    } finally {
      t.close();
    }
  });

  it("refuses the mail of a suspended workspace with 550 5.7.1, and its login with the workspace's status", async () => {
    const session = await sessionOf(s);
    const key = await createKey(s, session, { scopes: ['emails:send'] });
    const t = transport(key.key);
    const ws = s.seed!.workspace_id;
    try {
      await t.sendMail({ from: 'a@example.test', to: 'ada@example.org', text: 'before' });
      expect((await s.admin('POST', `/sandbox/workspaces/${ws}/suspend`)).status).toBe(200);
      expect(await refusal(t.sendMail({ from: 'a@example.test', to: 'ada@example.org', text: 'after' }))).toMatch(
        /^550 5\.7\.1 This workspace is suspended/,
      );
    } finally {
      t.close();
      await s.admin('POST', `/sandbox/workspaces/${ws}/activate`);
    }
    const fresh = transport(key.key);
    await s.admin('POST', `/sandbox/workspaces/${ws}/suspend`);
    try {
      expect(await refusal(fresh.sendMail({ from: 'a@example.test', to: 'ada@example.org', text: 'x' }))).toMatch(
        /^535 5\.7\.8 This workspace is suspended/,
      );
    } finally {
      fresh.close();
      await s.admin('POST', `/sandbox/workspaces/${ws}/activate`);
    }
  });

  it('refuses what the API refuses: GTUBE (554 5.7.1), a reused Idempotency-Key (550), a To without a recipient', async () => {
    const t = transport(s.seed!.api_key_test!);
    try {
      expect(
        await refusal(t.sendMail({ from: 'a@example.test', to: 'ada@example.org', subject: 'x', text: GTUBE })),
      ).toMatch(/^554 5\.7\.1 The message was refused by the abuse filter/);
      const headers = { 'Idempotency-Key': 'welcome-ada' };
      const first = await t.sendMail({ from: 'a@example.test', to: 'ada@example.org', text: 'Welcome', headers });
      const again = await t.sendMail({ from: 'a@example.test', to: 'ada@example.org', text: 'Welcome', headers });
      expect(again.response).toBe(first.response);
      expect(
        await refusal(t.sendMail({ from: 'a@example.test', to: 'ada@example.org', text: 'Other', headers })),
      ).toMatch(/^550 5\.6\.0 This Idempotency-Key was used with a different request body/);
      const bccOnly = t.sendMail({
        from: 'a@example.test',
        to: 'list@example.org',
        text: 'x',
        envelope: { from: 'a@example.test', to: ['ada@example.org'] },
      });
      expect(await refusal(bccOnly)).toMatch(/^550 5\.6\.0 None of the recipients \(RCPT TO\) is in the To header/);
    } finally {
      t.close();
    }
  });
});

describe('what SMTP submission answers is what it stored', () => {
  let s: TestServer;
  let dir: string;
  // Two messages a second, four at most: the rate limit is met on purpose below.
  beforeAll(async () => {
    s = await startTestServer({ sendRate: 2 });
    dir = mkdtempSync(join(tmpdir(), 'svc-submission-'));
  });
  afterAll(async () => {
    await s?.close();
    rmSync(dir, { recursive: true, force: true });
  });
  // The sending bucket is full again at the start of each test.
  beforeEach(() => s.advance(10));

  const key = () => s.seed!.api_key_test!;
  const auth = () => `AUTH PLAIN ${Buffer.from(`\0app\0${key()}`).toString('base64')}\r\n`;

  /** Every message the workspace has sent (its `email.queued`) and every one the sink caught, once due work ran. */
  async function stored(): Promise<{ sent: string[]; caught: string[] }> {
    await s.settle();
    const events = await s.call('GET', '/v1/events?limit=100', { token: key() });
    const caught = await s.admin('GET', '/sandbox/messages?limit=100');
    return {
      sent: events.body.data.filter((e: any) => e.type === 'email.queued').map((e: any) => e.data.message_id),
      caught: caught.body.data.map((m: any) => m.message_id),
    };
  }

  /** Greeted, EHLO'd and logged in over implicit TLS. */
  async function loggedIn(): Promise<SmtpTalk> {
    const talk = await smtpsTalk(s.submissionsPort!, s.smtpTls.cert);
    expect(await talk.reply()).toMatch(/^220 /);
    talk.write('EHLO client.example\r\n');
    await talk.reply();
    talk.write(auth());
    expect(await talk.reply()).toMatch(/^235 /);
    return talk;
  }

  const implicitTls = () =>
    nodemailer.createTransport({
      host: '127.0.0.1',
      port: s.submissionsPort!,
      secure: true,
      auth: { user: 'app', pass: key() },
      tls: { ca: s.smtpTls.cert },
    });

  it('250 names a /v1 message, which is delivered and caught', async () => {
    const t = implicitTls();
    const info = await t.sendMail({ from: 'a@example.test', to: 'ada@example.org', subject: 'Taken', text: 'x' });
    t.close();
    const id = /^250 2\.0\.0 OK (msg_\w+)$/.exec(info.response)?.[1];
    expect(id, info.response).toBeDefined();
    const { sent, caught } = await stored();
    expect(sent).toContain(id);
    expect(caught).toContain(id);
  });

  it('an attachment of every byte value arrives byte for byte in the caught message', async () => {
    const bytes = Buffer.from(Array.from({ length: 4 * 256 }, (_, i) => i % 256));
    const t = implicitTls();
    const info = await t.sendMail({
      from: 'a@example.test',
      to: 'ada@example.org',
      text: 'Attached.',
      attachments: [{ filename: 'bytes.bin', content: bytes }],
    });
    t.close();
    const id = info.response.split(' ').pop()!;
    await s.settle();
    const [caught] = await caughtOf(s, id);
    expect(caught, `${id} was caught`).toBeDefined();
    const res = await fetch(`${s.origin}/sandbox/messages/${caught.id}/attachments/0`, {
      headers: { authorization: `Bearer ${s.adminToken}` },
    });
    expect(res.status).toBe(200);
    expect(Buffer.from(await res.arrayBuffer()).equals(bytes)).toBe(true);
  });

  it('a message over 40 MiB (swaks, implicit TLS, no SIZE declared) is refused with 552 5.3.4 naming the limit, and nothing is stored', async () => {
    const before = await stored();
    const file = join(dir, 'big.eml');
    const line = `${'x'.repeat(998)}\r\n`;
    writeFileSync(
      file,
      `From: a@example.test\r\nTo: ada@example.org\r\nSubject: too big\r\n\r\n${line.repeat(Math.ceil((41 * MiB) / line.length))}`,
    );
    const transcript = await run('swaks', [
      ...['--server', '127.0.0.1', '--port', String(s.submissionsPort), '--tls-on-connect'],
      ...['--auth', 'PLAIN', '--auth-user', 'app', '--auth-password', key()],
      ...['--from', 'a@example.test', '--to', 'ada@example.org', '--data', `@${file}`, '--suppress-data'],
    ]).then(
      (ok) => ok.stdout,
      (err: { stdout: string }) => err.stdout,
    );
    expect(transcript).toMatch(
      /<~\* +552 5\.3\.4 The message is over the 41943040-byte \(40 MiB\) limit of SMTP submission/,
    );
    expect(await stored()).toEqual(before);
  }, 60_000);

  it('a message cut off during DATA is not stored; the next one is', async () => {
    const before = await stored();
    const cut = await loggedIn();
    cut.write('MAIL FROM:<a@example.test>\r\nRCPT TO:<ada@example.org>\r\nDATA\r\n');
    for (const code of ['250', '250', '354']) expect((await cut.reply()).slice(0, 3)).toBe(code);
    cut.write('From: a@example.test\r\nTo: ada@example.org\r\nSubject: cut off\r\n\r\nThe first half');
    cut.destroy();

    const t = implicitTls();
    const info = await t.sendMail({ from: 'a@example.test', to: 'ada@example.org', subject: 'After', text: 'x' });
    t.close();
    const id = info.response.split(' ').pop()!;
    const after = await stored();
    expect(sorted(after.sent)).toEqual(sorted([id, ...before.sent]));
    expect(sorted(after.caught)).toEqual(sorted([id, ...before.caught]));
  });

  it('a message the send rules refuse (550 5.7.1) or the sending rate refuses (451 4.7.1) is not stored', async () => {
    const before = await stored();
    const t = implicitTls();
    await expect(
      t.sendMail({ from: 'me@unverified.example', to: 'ada@example.org', subject: 'No', text: 'x' }),
    ).rejects.toMatchObject({
      response: expect.stringMatching(/^550 5\.7\.1 unverified\.example is not a verified domain/),
    });
    // The refused message took a token, as a refused API send does: three are left.
    const taken: string[] = [];
    for (let i = 0; i < 3; i++) {
      taken.push((await t.sendMail({ from: 'a@example.test', to: 'ada@example.org', text: `${i}` })).response);
    }
    await expect(t.sendMail({ from: 'a@example.test', to: 'ada@example.org', text: 'five' })).rejects.toMatchObject({
      response: expect.stringMatching(/^451 4\.7\.1 This workspace may send 2 messages a second; retry in 1 s\./),
    });
    t.close();
    const ids = taken.map((r) => r.split(' ').pop()!);
    const after = await stored();
    expect(sorted(after.sent)).toEqual(sorted([...ids, ...before.sent]));
    expect(sorted(after.caught)).toEqual(sorted([...ids, ...before.caught]));
  });

  it('a message no reader takes whole (1,001 parts, 2,000 nested, a header block over 1 MiB) is refused for good, saying why', async () => {
    const before = await stored();
    const t = implicitTls();
    const envelope = { from: 'exports@example.test', to: ['ops@example.test'] };
    try {
      for (const raw of [manyParts(1_001), nestedParts(2_000)]) {
        await expect(t.sendMail({ envelope, raw })).rejects.toMatchObject({
          response: expect.stringMatching(/^554 5\.6\.0 The message has more than 1000 MIME parts/),
        });
      }
      await expect(t.sendMail({ envelope, raw: bigHeaderBlock(1_100_000) })).rejects.toMatchObject({
        response: expect.stringMatching(/^552 5\.3\.4 A header block of the message is over 1 MiB/),
      });
    } finally {
      t.close();
    }
    expect(await stored()).toEqual(before);
  });

  it('answers whole messages pipelined in one write (RFC 2920) each in order, and stores each', async () => {
    const before = await stored();
    const talk = await loggedIn();
    const message = (i: number) =>
      `MAIL FROM:<a@example.test>\r\nRCPT TO:<ada@example.org>\r\nDATA\r\n` +
      `From: a@example.test\r\nTo: ada@example.org\r\nSubject: pipelined ${i}\r\n\r\nMessage ${i}\r\n.\r\n`;
    talk.write(`${[1, 2, 3].map(message).join('')}QUIT\r\n`);
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      for (const code of ['250', '250', '354']) expect((await talk.reply()).slice(0, 3)).toBe(code);
      const taken = /^250 2\.0\.0 OK (msg_\w+)\r\n$/.exec(await talk.reply());
      expect(taken).not.toBeNull();
      ids.push(taken![1]!);
    }
    expect(await talk.reply()).toMatch(/^221 /);
    const after = await stored();
    expect(sorted(after.sent)).toEqual(sorted([...ids, ...before.sent]));
    expect(sorted(after.caught)).toEqual(sorted([...ids, ...before.caught]));
  });
});

describe("SMTP submission's AUTH", () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer();
  });
  afterAll(() => s?.close());
  const plain = (key: string) => `AUTH PLAIN ${Buffer.from(`\0app\0${key}`).toString('base64')}\r\n`;

  it('is offered on the STARTTLS port only after STARTTLS; AUTH or MAIL before it is refused, the key never asked for', async () => {
    const talk = await smtpTalk(s.submissionPort!);
    expect(await talk.reply()).toMatch(/^220 /);
    talk.write('EHLO client.example\r\n');
    const before = await talk.reply();
    expect(before).toMatch(/^250[- ]STARTTLS\r$/m);
    expect(before).not.toMatch(/AUTH/);
    // A client that sends its key anyway is refused; one that would be asked for it (LOGIN) is not asked.
    talk.write(plain(s.seed!.api_key_test!));
    expect(await talk.reply()).toMatch(/^538 .*STARTTLS/);
    talk.write('AUTH LOGIN\r\n');
    expect(await talk.reply()).toMatch(/^538 .*STARTTLS/);
    talk.write('MAIL FROM:<a@example.test>\r\n');
    expect(await talk.reply()).toMatch(/^530 5\.7\.0 Must issue a STARTTLS command first/);
    talk.write('STARTTLS\r\n');
    expect(await talk.reply()).toMatch(/^220 /);
    talk.socket.removeAllListeners('data');
    const secure = await new Promise<SmtpTalk>((resolve, reject) => {
      const socket = tlsConnect({ socket: talk.socket, ca: s.smtpTls.cert, servername: 'localhost' }, () =>
        resolve(smtpTalkOn(socket)),
      );
      socket.once('error', reject);
    });
    secure.write('EHLO client.example\r\n');
    expect(await secure.reply()).toMatch(/^250[- ]AUTH PLAIN LOGIN\r$/m);
    secure.write(plain(s.seed!.api_key_test!));
    expect(await secure.reply()).toMatch(/^235 /);
    secure.destroy();
  });

  /** Python's smtplib against a listener: the script's JSON output. */
  async function python(script: string, port: number): Promise<any> {
    const { stdout } = await run('python3', ['-c', script], {
      env: { PATH: process.env.PATH!, CA: s.smtpTls.cert.toString(), PORT: String(port), KEY: s.seed!.api_key_test! },
    });
    return JSON.parse(stdout);
  }

  it("Python's smtplib: login() before starttls() sends no key (no AUTH is offered); after it, logs in", async () => {
    const out = await python(
      `
import json, os, smtplib, ssl
out = {}
with smtplib.SMTP('localhost', int(os.environ['PORT']), timeout=20) as s:
    try:
        s.login('app', os.environ['KEY'])
        out['clear'] = 'logged in'
    except smtplib.SMTPNotSupportedError as e:
        out['clear'] = str(e)
    s.starttls(context=ssl.create_default_context(cadata=os.environ['CA']))
    out['tls'] = s.login('app', os.environ['KEY'])[0]
print(json.dumps(out))
`,
      s.submissionPort!,
    );
    expect(out).toEqual({ clear: 'SMTP AUTH extension not supported by server.', tls: 235 });
  });

  it('refuses the 31st failed AUTH from an address within 15 minutes with 454 4.7.0 and the wait, a right key too, until the window moves', async () => {
    const script = `
import json, os, smtplib, ssl
codes = []
ctx = ssl.create_default_context(cadata=os.environ['CA'])
with smtplib.SMTP_SSL('localhost', int(os.environ['PORT']), context=ctx, timeout=20) as s:
    s.ehlo()
    keys = ['svc_test_wrong%d' % i for i in range(int(os.environ.get('WRONG', '0')))] + [os.environ['KEY']]
    for key in keys:
        s.user, s.password = 'app', key
        try:
            codes.append([s.auth('PLAIN', s.auth_plain)[0], ''])
            break
        except smtplib.SMTPAuthenticationError as e:
            codes.append([e.smtp_code, e.smtp_error.decode()])
print(json.dumps(codes))
`;
    const attempt = (wrong: number) =>
      run('python3', ['-c', script], {
        env: {
          PATH: process.env.PATH!,
          CA: s.smtpTls.cert.toString(),
          PORT: String(s.submissionsPort),
          KEY: s.seed!.api_key_test!,
          WRONG: String(wrong),
        },
      }).then(({ stdout }) => JSON.parse(stdout) as [number, string][]);
    const codes = await attempt(31);
    expect(codes.slice(0, 30).map(([code]) => code)).toEqual(Array(30).fill(535));
    const [throttled, right] = codes.slice(30);
    expect(throttled).toEqual([
      454,
      expect.stringMatching(/^4\.7\.0 Too many failed logins from 127\.0\.0\.1; try again in 900 seconds\./),
    ]);
    expect(right).toEqual([454, expect.stringMatching(/^4\.7\.0 Too many failed logins/)]);
    // The window slides: once the first failures are 15 minutes old, the right key logs in.
    await s.advance(15 * 60);
    expect(await attempt(0)).toEqual([[235, '']]);
  });
});

describe("SMTP submission's TLS", () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer({ seed: false });
  });
  afterAll(() => s.close());

  /**
   * One TLS session on a listener (implicit TLS, or STARTTLS first), resuming `session` when given: whether it was
   * resumed, and the session the server handed out (a ticket, sent once the handshake is done).
   */
  async function tlsSession(starttls: boolean, session?: Buffer): Promise<{ reused: boolean; session?: Buffer }> {
    let plain;
    if (starttls) {
      plain = await smtpTalk(s.submissionPort!);
      await plain.reply();
      plain.write('EHLO client.example\r\n');
      await plain.reply();
      plain.write('STARTTLS\r\n');
      expect(await plain.reply()).toMatch(/^220 /);
      plain.socket.removeAllListeners('data');
    }
    const target = plain ? { socket: plain.socket } : { host: '127.0.0.1', port: s.submissionsPort! };
    let ticket: Buffer | undefined;
    const secure = await new Promise<ReturnType<typeof smtpTalkOn>>((resolve, reject) => {
      const socket = tlsConnect({ ...target, ca: s.smtpTls.cert, servername: 'localhost', session }, () =>
        resolve(smtpTalkOn(socket)),
      );
      socket.on('session', (t: Buffer) => (ticket ??= t));
      socket.once('error', reject);
    });
    // A reply after the handshake: the tickets came before it.
    if (!starttls) await secure.reply();
    secure.write('EHLO client.example\r\n');
    await secure.reply();
    const reused = (secure.socket as import('node:tls').TLSSocket).isSessionReused();
    secure.destroy();
    return { reused, session: ticket };
  }

  it('lets a client that kept its session (a ticket) resume it on both listeners: no full handshake again', async () => {
    for (const starttls of [false, true]) {
      const first = await tlsSession(starttls);
      expect(first.reused).toBe(false);
      expect(first.session).toBeInstanceOf(Buffer);
      expect((await tlsSession(starttls, first.session)).reused).toBe(true);
    }
  });
});

describe("SMTP submission's ports", () => {
  it('a port that is taken stops the start, naming every flag whose port is taken; off turns a listener off', async () => {
    // Two ports held here (test/e2e/serve.test.ts holds the default ones, which a start without the flags would try).
    const held = await Promise.all(
      [0, 1].map(
        () =>
          new Promise<Server>((resolve) => {
            const holder = createServer();
            holder.listen(0, '127.0.0.1', () => resolve(holder));
          }),
      ),
    );
    const [starttls, implicit] = held.map((h) => (h.address() as { port: number }).port) as [number, number];
    const common = { memory: true, port: 0, smtpPort: 0, pop3Port: 0, imapPort: 0, log: silentLogger, seed: false };
    try {
      await expect(
        startServer({ ...common, submissionPort: starttls, submissionsPort: implicit }),
      ).rejects.toMatchObject({
        code: 'EADDRINUSE',
        port: starttls,
        flag: '--submission-port',
        flags: ['--submission-port', '--submissions-port'],
      });
      await expect(startServer({ ...common, submissionPort: 0, submissionsPort: implicit })).rejects.toMatchObject({
        code: 'EADDRINUSE',
        port: implicit,
        flag: '--submissions-port',
        flags: ['--submissions-port'],
      });
      const off = await startServer({ ...common, submissionPort: null, submissionsPort: null });
      expect(off.ready).toMatchObject({ submission: null, submissions: null });
      await off.close();
    } finally {
      for (const h of held) h.close();
    }
  });
});
