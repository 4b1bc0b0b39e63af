// The sink of the real binary takes any AUTH, and mail whose client logged in with an API key is filed under that key's
// workspace: each project has an inbox of its own (stock clients and STARTTLS: smtp-sink-clients.test.ts). And the
// command line prints the SMTP settings an app's configuration wants, which work as printed.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import nodemailer from 'nodemailer';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, ROOT, clientEnv, ensureBuilt, killAll, serve, stop, type Served } from '../helpers/binary.js';

describe('the sink with AUTH, per-project inboxes, and svc smtp', () => {
  let s: Served;
  let home: string;
  /** The second project: its workspace (signed up through an invite) and a key of it. */
  let acme: { id: string; name: string; key: string; session: string };

  beforeAll(async () => {
    ensureBuilt();
    home = mkdtempSync(join(tmpdir(), 'svc-sink-auth-'));
    s = await serve(['--memory', '--clock', 'manual'], { SVC_RUNTIME_DIR: join(home, 'run') });
    const invite = await call('POST', '/sandbox/invites', s.ready.admin_token, {});
    const signup = await call('POST', '/v1/auth/signup', null, {
      email: 'owner@acme.example',
      password: 'a long passphrase for acme',
      workspace_name: 'Acme',
      invite_code: invite.body.code,
    });
    expect(signup.status).toBe(201);
    const key = await call('POST', '/v1/api-keys', signup.body.access_token, { name: 'app', scopes: ['emails:send'] });
    expect(key.status).toBe(201);
    acme = { id: signup.body.workspace.id, name: 'Acme', key: key.body.key, session: signup.body.access_token };
  }, 120_000);
  afterAll(async () => {
    if (s) await stop(s);
    killAll();
    rmSync(home, { recursive: true, force: true });
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
  const svc = (args: string[], extra: Record<string, string> = {}) =>
    execa(process.execPath, [BIN, ...args], {
      env: clientEnv(home, s, extra),
      extendEnv: false,
      reject: false,
      cwd: ROOT,
    });

  /** Sends to the sink as an app configured with its host and port does, with `auth` if given. */
  async function toSink(subject: string, auth?: { user: string; pass: string }) {
    const transport = nodemailer.createTransport({
      host: '127.0.0.1',
      port: Number(new URL(s.ready.smtp).port),
      ...(auth ? { auth } : {}),
    });
    try {
      await transport.sendMail({ from: 'app@anywhere.example', to: 'someone@example.org', subject, text: 'x' });
    } finally {
      transport.close();
    }
  }
  /**
   * The certificate made in memory, as a client first meets it (the ready line names no file for it): taken from a
   * handshake and checked against the ready line's fingerprint, as a person would.
   */
  async function certOf(): Promise<string> {
    const { connect } = await import('node:tls');
    return new Promise((resolve, reject) => {
      const socket = connect(
        { host: '127.0.0.1', port: Number(new URL(s.ready.submissions!).port), rejectUnauthorized: false },
        () => {
          const cert = socket.getPeerX509Certificate()!;
          expect(cert.fingerprint256).toBe(s.ready.smtp_tls.fingerprint_sha256);
          resolve(cert.toString());
          socket.destroy();
        },
      );
      socket.on('error', reject);
    });
  }

  it("files mail caught with a key as the AUTH password under the key's workspace; other mail under none", async () => {
    await toSink('from the seed project', { user: 'resend', pass: s.ready.seed!.api_key_test! });
    await toSink('from acme', { user: 'anything', pass: acme.key });
    await toSink('anonymous');
    await toSink('a password that is no key', { user: 'me', pass: 'hunter2' });
    // Only the four sent here: the sign-up of Acme's owner has its own mail caught, whenever it gets there.
    const all = await call('GET', '/sandbox/messages?to=someone@example.org&limit=100', s.ready.admin_token);
    const byWorkspace = Object.fromEntries(all.body.data.map((m: any) => [m.subject, m.workspace?.name ?? null]));
    expect(byWorkspace).toEqual({
      'from the seed project': expect.any(String),
      'from acme': 'Acme',
      anonymous: null,
      'a password that is no key': null,
    });
    const subjects = async (query: string) =>
      (await call('GET', `/sandbox/messages?${query}`, s.ready.admin_token)).body.data.map((m: any) => m.subject);
    expect(await subjects('workspace=Acme')).toEqual(['from acme']);
    expect(await subjects('workspace=acme')).toEqual(['from acme']);
    expect(await subjects(`workspace=${acme.id}`)).toEqual(['from acme']);
    expect(await subjects(`workspace=${s.ready.seed!.workspace_id}`)).toEqual(['from the seed project']);
    const unknown = await call('GET', '/sandbox/messages?workspace=Nobody', s.ready.admin_token);
    expect(unknown.status).toBe(404);
    expect(unknown.body.detail).toMatch(/No workspace has the id or name "Nobody"/);

    const listed = await svc(['inbox', '--workspace', 'Acme', '--json']);
    expect(listed.exitCode, listed.stderr).toBe(0);
    expect(JSON.parse(listed.stdout).data.map((m: any) => m.subject)).toEqual(['from acme']);
  });

  it('svc smtp prints the settings of the local server with the key as the password; they work as printed', async () => {
    const json = await svc(['smtp', '--json'], { SVC_API_KEY: acme.key });
    expect(json.exitCode, json.stderr).toBe(0);
    const settings = JSON.parse(json.stdout);
    expect(settings).toMatchObject({
      host: '127.0.0.1',
      port: Number(new URL(s.ready.submission!).port),
      tls_port: Number(new URL(s.ready.submissions!).port),
      password: acme.key,
      ca_cert: null,
      fingerprint_sha256: s.ready.smtp_tls.fingerprint_sha256,
      sink: s.ready.smtp,
      sink_starttls: false,
    });
    // Both ports and how each speaks TLS (a certificate made in memory has no file to name).
    const env = await svc(['smtp', '--env'], { SVC_API_KEY: acme.key });
    expect(env.exitCode, env.stderr).toBe(0);
    expect(env.stdout).toBe(
      [
        'SMTP_HOST=127.0.0.1',
        `SMTP_PORT=${settings.port}`,
        'SMTP_SECURE=false',
        'SMTP_REQUIRE_TLS=true',
        `SMTP_TLS_PORT=${settings.tls_port}`,
        'SMTP_USER=svc',
        `SMTP_PASS=${acme.key}`,
      ].join('\n'),
    );
    // Acme has no verified domain: the settings work, and the refusal says what to do.
    const transport = nodemailer.createTransport({
      host: settings.host,
      port: settings.port,
      requireTLS: true,
      auth: { user: settings.username, pass: settings.password },
      tls: { ca: await certOf() },
    });
    const refused = await transport
      .sendMail({ from: 'hi@acme.example', to: 'a@example.org', text: 'x' })
      .catch((e) => e);
    transport.close();
    expect(refused.responseCode).toBe(550);
    expect(refused.response).toMatch(
      /^550 5\.7\.1 acme\.example is not a verified domain of this workspace; add it with/,
    );
  });

  it('svc keys create --smtp: the key alone on stdout, the settings with it as the password on stderr', async () => {
    // Keys are made with a session: sign in first, as a person does.
    const login = await execa(process.execPath, [BIN, 'login', '--email', s.ready.seed!.email, '--password-stdin'], {
      env: clientEnv(home, s, { SVC_API_KEY: '' }),
      extendEnv: false,
      reject: false,
      cwd: ROOT,
      input: s.ready.seed!.password,
    });
    expect(login.exitCode, login.stderr).toBe(0);
    const made = await svc(['keys', 'create', '--name', 'smtp app', '--scope', 'emails:send', '--smtp'], {
      SVC_API_KEY: '',
    });
    expect(made.exitCode, made.stderr).toBe(0);
    const key = made.stdout.trim();
    expect(key).toMatch(/^svc_test_\w+$/);
    expect(made.stderr).toContain('SMTP settings (docs/smtp.md):');
    expect(made.stderr).toMatch(new RegExp(`port\\s+${new URL(s.ready.submission!).port}\\b`));
    expect(made.stderr).toMatch(new RegExp(`password\\s+${key}`));
    // A key that cannot send says so at once.
    const reader = await svc(['keys', 'create', '--name', 'reader', '--scope', 'emails:read', '--smtp'], {
      SVC_API_KEY: '',
    });
    expect(reader.stderr).toMatch(/warning: this key lacks emails:send, so SMTP submission refuses it/);
  });

  it('svc smtp without a local server says how to start one (exit 1)', async () => {
    const r = await svc(['smtp'], { SVC_BASE_URL: 'http://127.0.0.1:9/v1' });
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toMatch(/no local svc serve with SMTP submission is registered for http:\/\/127\.0\.0\.1:9\/v1/);
  });
});
