// The sink of the real binary as stock clients meet it, configured as for Mailpit or MailDev with a host and a port and
// nothing else: nodemailer, Python's smtplib and swaks deliver, with AUTH or without. It offers no STARTTLS unless
// `--smtp-starttls` asks for it (then with the made certificate); `--no-smtp-starttls`, the default's name, still starts.
import { execFile } from 'node:child_process';
import { connect as tlsConnect } from 'node:tls';
import { promisify } from 'node:util';
import nodemailer from 'nodemailer';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt, killAll, serve, stop, type Served } from '../helpers/binary.js';
import { smtpTalk } from '../helpers/smtp.js';

const run = promisify(execFile);

/** What a server's EHLO reply names (its extensions), as a client reads it. */
async function ehlo(port: number): Promise<string> {
  const talk = await smtpTalk(port);
  try {
    await talk.reply();
    talk.write('EHLO client.example\r\n');
    return await talk.reply();
  } finally {
    talk.destroy();
  }
}

const sinkPort = (s: Served) => Number(new URL(s.ready.smtp).port);

/** The caught messages sent to `to`, each with its subject and workspace. */
async function caught(s: Served, to: string): Promise<{ subject: string; workspace: { id: string } | null }[]> {
  const res = await fetch(`${s.origin}/sandbox/messages?to=${encodeURIComponent(to)}&limit=100`, {
    headers: { authorization: `Bearer ${s.ready.admin_token}` },
  });
  expect(res.status).toBe(200);
  return ((await res.json()) as { data: { subject: string; workspace: { id: string } | null }[] }).data;
}

/** nodemailer as an app configures it for a mail catcher: host and port, and `auth` when given; nothing about TLS. */
async function nodemailerSend(port: number, subject: string, to: string, auth?: { user: string; pass: string }) {
  const transport = nodemailer.createTransport({ host: '127.0.0.1', port, ...(auth ? { auth } : {}) });
  try {
    return await transport.sendMail({ from: 'app@anywhere.example', to, subject, text: 'x' });
  } finally {
    transport.close();
  }
}

/** The certificate SMTP TLS presents, taken from a handshake on the implicit TLS port and checked by its fingerprint. */
function madeCertificate(s: Served): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = tlsConnect(
      { host: '127.0.0.1', port: Number(new URL(s.ready.submissions!).port), rejectUnauthorized: false },
      () => {
        const cert = socket.getPeerX509Certificate()!;
        socket.destroy();
        if (cert.fingerprint256 !== s.ready.smtp_tls.fingerprint_sha256) reject(new Error('another certificate'));
        else resolve(cert.toString());
      },
    );
    socket.on('error', reject);
  });
}

beforeAll(() => ensureBuilt(), 120_000);
afterAll(() => killAll());

describe('the sink, as svc serve starts it, and stock clients given its host and port alone', () => {
  let s: Served;
  beforeAll(async () => {
    s = await serve(['--memory', '--clock', 'manual']);
  }, 30_000);
  afterAll(async () => {
    if (s) await stop(s);
  });

  it('offers no STARTTLS, and AUTH of any kind (never required)', async () => {
    const extensions = await ehlo(sinkPort(s));
    expect(extensions).not.toMatch(/STARTTLS/);
    expect(extensions).toMatch(/^250[- ]AUTH PLAIN LOGIN/m);
  });

  it('nodemailer delivers, with AUTH or without; a key as the password files the mail under its workspace', async () => {
    const to = 'nodemailer@example.org';
    expect((await nodemailerSend(sinkPort(s), 'nodemailer, no auth', to)).response).toMatch(/^250 /);
    const key = s.ready.seed!.api_key_test!;
    const authed = await nodemailerSend(sinkPort(s), 'nodemailer, a key', to, { user: 'app', pass: key });
    expect(authed.response).toMatch(/^250 /);
    const byWorkspace = Object.fromEntries((await caught(s, to)).map((m) => [m.subject, m.workspace?.id ?? null]));
    expect(byWorkspace).toEqual({
      'nodemailer, no auth': null,
      'nodemailer, a key': s.ready.seed!.workspace_id,
    });
  });

  it('a client that requires TLS stops before it sends anything, saying why', async () => {
    const strict = nodemailer.createTransport({ host: '127.0.0.1', port: sinkPort(s), requireTLS: true });
    const refused = await strict
      .sendMail({ from: 'app@anywhere.example', to: 'strict@example.org', subject: 'never', text: 'x' })
      .catch((e) => e);
    strict.close();
    expect(refused).toMatchObject({ code: 'ETLS', command: 'STARTTLS' });
    expect(refused.message).toMatch(/Error upgrading connection with STARTTLS: 500 /);
    expect(await caught(s, 'strict@example.org')).toEqual([]);
  });

  it("Python's smtplib delivers", async () => {
    const script = `
import os, smtplib
from email.message import EmailMessage
m = EmailMessage()
m['From'] = 'py@anywhere.example'
m['To'] = 'smtplib@example.org'
m['Subject'] = 'smtplib'
m.set_content('x')
with smtplib.SMTP('127.0.0.1', int(os.environ['PORT'])) as s:
    print(s.send_message(m) == {})
`;
    const { stdout } = await run('python3', ['-c', script], {
      env: { PATH: process.env.PATH!, PORT: String(sinkPort(s)) },
    });
    expect(stdout.trim()).toBe('True');
    expect((await caught(s, 'smtplib@example.org')).map((m) => m.subject)).toEqual(['smtplib']);
  });

  it('swaks delivers', async () => {
    const { stdout } = await run('swaks', [
      ...['--server', '127.0.0.1', '--port', String(sinkPort(s))],
      ...['--from', 'swaks@anywhere.example', '--to', 'swaks@example.org'],
      ...['--header', 'Subject: swaks', '--body', 'x'],
    ]);
    expect(stdout).toMatch(/<- +250 /);
    expect((await caught(s, 'swaks@example.org')).map((m) => m.subject)).toEqual(['swaks']);
  });
});

describe('svc serve --smtp-starttls', () => {
  let s: Served;
  beforeAll(async () => {
    s = await serve(['--memory', '--clock', 'manual', '--smtp-starttls']);
  }, 30_000);
  afterAll(async () => {
    if (s) await stop(s);
  });

  it('offers STARTTLS with the made certificate: a client trusting it upgrades, one trusting nothing fails', async () => {
    expect(await ehlo(sinkPort(s))).toMatch(/^250[- ]STARTTLS\r$/m);
    // nodemailer upgrades whenever STARTTLS is offered and verifies the certificate against the system's authorities.
    const refused = await nodemailerSend(sinkPort(s), 'untrusted', 'tls@example.org').catch((e: Error) => e);
    expect(refused).toBeInstanceOf(Error);
    expect((refused as Error).message).toMatch(/self[- ]signed certificate/i);
    // Given the certificate, as a client first meets the one made in memory: from a handshake with submission, checked
    // against the ready line's fingerprint.
    const transport = nodemailer.createTransport({
      host: '127.0.0.1',
      port: sinkPort(s),
      requireTLS: true,
      tls: { ca: await madeCertificate(s) },
    });
    try {
      const sent = await transport.sendMail({
        from: 'a@anywhere.example',
        to: 'tls@example.org',
        subject: 'over TLS',
        text: 'x',
      });
      expect(sent.response).toMatch(/^250 /);
    } finally {
      transport.close();
    }
    expect((await caught(s, 'tls@example.org')).map((m) => m.subject)).toEqual(['over TLS']);
  });
});

describe('svc serve --no-smtp-starttls, the default by its name', () => {
  it('starts as without it: no STARTTLS on the sink; submission still requires TLS', async () => {
    const s = await serve(['--memory', '--clock', 'manual', '--no-smtp-starttls']);
    try {
      expect(await ehlo(sinkPort(s))).not.toMatch(/STARTTLS/);
      expect(await ehlo(Number(new URL(s.ready.submission!).port))).toMatch(/^250[- ]STARTTLS\r$/m);
    } finally {
      await stop(s);
    }
  }, 30_000);
});
