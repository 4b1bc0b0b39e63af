// SMTP submission's rules beyond the common ones (test/e2e/smtp-submission.test.ts): a key revoked or a workspace
// suspended during a session, the abuse filter, an Idempotency-Key reused with another message, a message whose To
// names none of its recipients; TLS sessions resumed with a ticket on both listeners; and the listeners' ports: a
// default one that is taken gives way, a given one does not.
import { createServer, type Server } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import nodemailer from 'nodemailer';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GTUBE } from '../../src/server/core/send-rules.js';
import { DEFAULT_SUBMISSION_PORT, startServer } from '../../src/server/index.js';
import { silentLogger } from '../../src/lib/log.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { createKey, sessionOf } from '../helpers/tenants.js';
import { smtpTalk, smtpTalkOn } from '../helpers/smtp.js';

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
  it('takes a free port when the default one is taken, and says so; a port given that is taken stops the start', async () => {
    // Held here, unless another program holds it already: either way it is taken.
    const holder: Server = createServer();
    await new Promise<void>((resolve) => {
      holder.once('error', () => resolve());
      holder.listen(DEFAULT_SUBMISSION_PORT, '127.0.0.1', () => resolve());
    });
    const common = { memory: true, port: 0, smtpPort: 0, submissionsPort: 0, log: silentLogger, seed: false };
    try {
      const moved = await startServer(common);
      try {
        expect(moved.submissionPort).not.toBe(DEFAULT_SUBMISSION_PORT);
        expect(moved.ready.submission).toBe(`smtp://127.0.0.1:${moved.submissionPort}`);
        expect(moved.portsMoved).toEqual([
          { flag: '--submission-port', wanted: DEFAULT_SUBMISSION_PORT, port: moved.submissionPort },
        ]);
        await expect(startServer({ ...common, submissionPort: moved.submissionPort })).rejects.toMatchObject({
          code: 'EADDRINUSE',
          flag: '--submission-port',
        });
      } finally {
        await moved.close();
      }
      const off = await startServer({ ...common, submissionPort: null, submissionsPort: null });
      expect(off.ready).toMatchObject({ submission: null, submissions: null });
      await off.close();
    } finally {
      holder.close();
    }
  });
});
