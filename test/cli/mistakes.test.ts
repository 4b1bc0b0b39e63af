// Mistakes a newcomer makes on the first day, through the built binary against the real server, each answered with
// what to do: a key from another service, a base URL without /v1 or with another version, https:// to a plain HTTP
// server and the reverse, a misspelt command or option, a domain named instead of its id, a send without a body or
// with a sender missing its angle brackets, no key beside a local server, several recipients in one --to, and svc
// trigger sending from the seeded domain whatever was added since.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeCertificate } from '../../src/server/inbound/tls.js';
import { BIN, ensureBuilt, killAll, ROOT, serve, stop } from '../helpers/binary.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

describe('first-day mistakes', { timeout: 120_000 }, () => {
  let s: TestServer;
  let home: string;

  beforeAll(async () => {
    ensureBuilt();
    s = await startTestServer();
    home = mkdtempSync(join(tmpdir(), 'svc-mistakes-'));
  }, 120_000);
  afterAll(async () => {
    await s.close();
    killAll();
    rmSync(home, { recursive: true, force: true });
  });

  const svc = (args: string[], extra: Record<string, string> = {}) =>
    execa(process.execPath, [BIN, ...args], {
      env: {
        PATH: process.env.PATH!,
        HOME: home,
        SVC_CONFIG_DIR: join(home, 'config'),
        SVC_RUNTIME_DIR: join(home, 'run'),
        SVC_CREDENTIAL_STORE: 'file',
        SVC_BASE_URL: s.api,
        SVC_API_KEY: s.seed!.api_key_test!,
        SVC_ADMIN_TOKEN: s.adminToken,
        ...extra,
      },
      extendEnv: false,
      reject: false,
      cwd: ROOT,
    });
  const send = ['emails', 'send', '--from', 'hello@example.test', '--to', 'ada@example.org', '--text', 'hi'];

  it('refuses a key that is not an svc key before sending it, naming where it came from', async () => {
    const fromEnv = await svc(send, { SVC_API_KEY: 're_123' });
    expect(fromEnv.exitCode).toBe(4);
    expect(fromEnv.stderr).toBe(
      'error: svc emails send: re_… (SVC_API_KEY) is not an svc API key (they start with svc_test_ or svc_live_, then 32 letters and digits); ' +
        "hint: set SVC_API_KEY to a key `svc keys create --name NAME --scope emails:send` printed, or unset it to use the profile's",
    );
    const fromFlag = await svc([...send, '--api-key', 'sk_live_abcdefghijklmnop']);
    expect(fromFlag.exitCode).toBe(4);
    expect(fromFlag.stderr).toMatch(/^error: svc emails send: sk_liv… \(--api-key\) is not an svc API key /);
    expect(fromFlag.stderr).toMatch(/hint: give --api-key a key `svc keys create/);
    // Nothing was sent: the sink is as it was.
    expect((await s.admin('GET', '/sandbox/messages?to=ada@example.org')).body.data).toEqual([]);

    const doctor = await svc(['doctor', '--json'], { SVC_API_KEY: 're_123' });
    const check = JSON.parse(doctor.stdout).checks.find((c: { name: string }) => c.name === 'api key');
    expect(check).toEqual({
      name: 'api key',
      status: 'fail',
      detail: expect.stringMatching(/^re_… \(SVC_API_KEY\) is not an svc API key .*; set SVC_API_KEY to a key/),
    });
  });

  it('says which base URL was meant when one without /v1 is answered 404', async () => {
    const origin = s.api.replace(/\/v1$/, '').replace('127.0.0.1', 'localhost');
    const r = await svc([...send, '--base-url', origin]);
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toMatch(
      new RegExp(
        `\\[not_found, req_\\w+\\]; hint: did you mean ${origin.replace(/\./g, '\\.')}/v1\\? The API is under /v1 of the service's address \\(--base-url, SVC_BASE_URL\\)$`,
      ),
    );
    // A 404 under the right base URL keeps its own hint.
    const missing = await svc(['emails', 'get', 'msg_000000000000000000000000']);
    expect(missing.exitCode).toBe(1);
    expect(missing.stderr).not.toContain('did you mean');
  });

  it('says which base URL was meant when one ending in another version is answered 404', async () => {
    const r = await svc(['domains', 'list', '--base-url', s.api.replace(/\/v1$/, '/v2')]);
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toContain(`hint: did you mean ${s.api}? `);
    expect(r.stderr).not.toContain('/v2/v1');
  });

  it('says the server speaks plain HTTP when https:// is given, and HTTPS when http:// is', async () => {
    const https = s.api.replace(/^http:/, 'https:');
    const r = await svc(['domains', 'list', '--retries', '0', '--base-url', https]);
    expect(r.exitCode).toBe(1);
    const port = new URL(s.api).port;
    expect(r.stderr).toMatch(
      new RegExp(
        `^error: svc domains list: could not reach ${https.replace(/\./g, '\\.')} \\(EPROTO\\): 127\\.0\\.0\\.1:${port} speaks plain HTTP, not HTTPS; use ${s.api.replace(/\./g, '\\.')}$`,
        'm',
      ),
    );

    // A local server given a certificate speaks HTTPS only.
    const certs = mkdtempSync(join(tmpdir(), 'svc-tls-'));
    const { cert, key } = await makeCertificate(Date.now());
    writeFileSync(join(certs, 'cert.pem'), cert);
    writeFileSync(join(certs, 'key.pem'), key);
    const tls = await startTestServer({ tlsCert: join(certs, 'cert.pem'), tlsKey: join(certs, 'key.pem') });
    try {
      expect(tls.api).toMatch(/^https:/);
      const plain = tls.api.replace(/^https:/, 'http:');
      const reverse = await svc(['domains', 'list', '--retries', '0', '--base-url', plain]);
      expect(reverse.exitCode).toBe(1);
      expect(reverse.stderr).toContain(
        `could not reach ${plain} (ECONNRESET): 127.0.0.1:${new URL(tls.api).port} speaks HTTPS, not plain HTTP; use ${tls.api}`,
      );
    } finally {
      await tls.close();
      rmSync(certs, { recursive: true, force: true });
    }
  });

  it('suggests the command or option meant: a subcommand of svc inbox, an option of svc emails send', async () => {
    const wait = await svc(['inbox', 'wiat', '--to', 'ada@example.org']);
    expect(wait.exitCode).toBe(2);
    expect(wait.stderr).toMatch(/^error: unknown command 'wiat'\n\(Did you mean wait\?\)\n/);
    expect(wait.stderr).not.toContain('too many arguments');
    // The default subcommand still takes no word for one.
    expect((await svc(['inbox', 'lsit'])).stderr).toMatch(/^error: unknown command 'lsit'\n\(Did you mean list\?\)/);
    expect((await svc(['inbox', 'show'])).stderr).toContain("missing required argument 'id'");

    const form = await svc([
      'emails',
      'send',
      '--form',
      'hello@example.test',
      '--to',
      'form@example.org',
      '--text',
      'hi',
    ]);
    expect(form.exitCode).toBe(2);
    expect(form.stderr).toMatch(/^error: unknown option '--form'\n\(Did you mean --from\?\)\n/);
    // A required option left out is still said when nothing else is wrong.
    const none = await svc(['emails', 'send', '--to', 'form@example.org', '--text', 'hi']);
    expect(none.exitCode).toBe(2);
    expect(none.stderr).toMatch(/^error: required option '--from <address>' not specified\n/);
    expect((await s.admin('GET', '/sandbox/messages?to=form@example.org')).body.data).toEqual([]);
  });

  it('takes a domain by name or id in every domains command; verify exits 1 while it is not verified', async () => {
    const seeded = await svc(['domains', 'get', 'example.test', '--json']);
    expect(seeded.exitCode, seeded.stderr).toBe(0);
    expect(JSON.parse(seeded.stdout)).toMatchObject({ id: s.seed!.domain_id, name: 'example.test' });
    const verified = await svc(['domains', 'verify', 'example.test']);
    expect(verified.exitCode, verified.stderr).toBe(0);
    expect(verified.stderr).toContain('example.test is verified.');

    const added = await svc(['domains', 'add', 'named.example.com', '-q']);
    expect(added.exitCode, added.stderr).toBe(0);
    const dns = await svc(['domains', 'dns', 'Named.Example.com.']);
    expect(dns.exitCode, dns.stderr).toBe(0);
    expect(dns.stderr).toMatch(/^named\.example\.com: pending/);
    const pending = await svc(['domains', 'verify', 'named.example.com']);
    expect(pending.exitCode).toBe(1);
    expect(pending.stdout).toMatch(/^ownership\tTXT\t_svc-verification\.named\.example\.com\tyes\tmissing\t/m);
    expect(pending.stderr).toMatch(
      /^error: svc domains verify: named\.example\.com is not verified yet \(\d+ required records missing or wrong\); hint: this is a local sandbox: /m,
    );
    const waited = await svc(['domains', 'verify', 'named.example.com', '--wait', '--timeout', '1s']);
    expect(waited.exitCode).toBe(1);
    expect(waited.stderr).toContain('named.example.com is not verified after 1s');
    const updated = await svc(['domains', 'update', 'named.example.com', '--mail-from-subdomain', 'mail']);
    expect(updated.exitCode, updated.stderr).toBe(0);
    const published = await svc(['domains', 'verify', 'named.example.com', '--publish']);
    expect(published.exitCode, published.stderr).toBe(0);
    expect(published.stderr).toContain('named.example.com is verified.');
    const deleted = await svc(['domains', 'delete', 'named.example.com']);
    expect(deleted.exitCode, deleted.stderr).toBe(0);
    expect(deleted.stderr).toContain(`Deleted named.example.com (${added.stdout}).`);

    const missing = await svc(['domains', 'verify', 'named.example.com']);
    expect(missing.exitCode).toBe(1);
    expect(missing.stderr).toBe(
      'error: svc domains verify: this workspace has no domain named named.example.com; ' +
        'hint: `svc domains list` shows its domains; `svc domains add named.example.com` adds it',
    );
  });

  it('names the flags that give a body, and the brackets a sender with a name needs', async () => {
    const bodiless = await svc(['emails', 'send', '--from', 'hello@example.test', '--to', 'ada@example.org']);
    expect(bodiless.exitCode).toBe(1);
    expect(bodiless.stderr).toMatch(
      /^error: svc emails send: Validation failed — body: give --text, --text-file, --html or --html-file \[validation_failed, req_\w+\]$/,
    );
    expect(bodiless.stderr).not.toContain('template_id');

    const unbracketed = await svc([
      'emails',
      'send',
      '--from',
      'Shop orders@example.test',
      '--to',
      'ada@example.org',
      '--text',
      'hi',
    ]);
    expect(unbracketed.exitCode).toBe(1);
    expect(unbracketed.stderr).toContain(
      `--from: "Shop orders@example.test" is not a valid email address; did you mean --from 'Shop <orders@example.test>'?`,
    );
    const recipients = await svc([
      'emails',
      'send',
      '--from',
      'hello@example.test',
      '--to',
      'ada@example.org',
      '--cc',
      'Jo jo@example',
      '--reply-to',
      'nobody',
      '--text',
      'hi',
    ]);
    expect(recipients.exitCode).toBe(1);
    expect(recipients.stderr).toContain('--cc: "Jo jo@example" is not a valid email address');
    expect(recipients.stderr).toContain('--reply-to: "nobody" is not a valid email address');
    // --json prints the service's Problem as it is.
    const json = await svc(['emails', 'send', '--from', 'hello@example.test', '--to', 'ada@example.org', '--json']);
    expect(JSON.parse(json.stdout).error.errors).toEqual([
      { path: 'html', code: 'content_required', message: 'give at least one of html, text or template_id' },
    ]);
  });

  it('names the test key of the local server when a command is given none', async () => {
    const env = { SVC_RUNTIME_DIR: join(home, 'run') };
    const local = await serve(['--memory'], env);
    try {
      const r = await svc(send, { SVC_API_KEY: '', SVC_BASE_URL: local.ready.api });
      expect(r.exitCode).toBe(4);
      const key = local.ready.seed!.api_key_test!;
      expect(r.stderr).toContain(
        `; hint: use the test key this local svc serve was seeded with: SVC_API_KEY=${key} (or --api-key ${key})`,
      );
      // A server that is not a registered local one gets the general hint.
      const remote = await svc(send, { SVC_API_KEY: '' });
      expect(remote.exitCode).toBe(4);
      expect(remote.stderr).not.toContain('svc_test_');
    } finally {
      await stop(local);
    }
  });

  it('takes --to a@x,b@y as two recipients, a comma inside quotes as part of a name', async () => {
    const r = await svc([
      'emails',
      'send',
      '--from',
      'hello@example.test',
      '--to',
      'comma-1@example.org,comma-2@example.org',
      '--cc',
      '"Doe, Jo" <jo@example.org>',
      '--subject',
      'Commas',
      '--text',
      'hi',
      '--json',
    ]);
    expect(r.exitCode, r.stderr).toBe(0);
    await s.settle();
    const email = await s.call('GET', `/v1/emails/${JSON.parse(r.stdout).id}`, { token: s.seed!.api_key_test });
    expect(email.body.to).toEqual(['comma-1@example.org', 'comma-2@example.org']);
    // One address, not split at the comma of its name (which the service would have refused).
    expect(email.body.cc).toEqual(['jo@example.org']);
    const caught = await s.admin('GET', '/sandbox/messages?to=comma-2@example.org');
    expect(caught.body.data.map((m: { subject: string }) => m.subject)).toEqual(['Commas']);
  });

  it('svc trigger sends from the seeded domain, not from one added and verified since', async () => {
    const added = await svc(['domains', 'add', 'later.example.com', '-q']);
    expect(added.exitCode, added.stderr).toBe(0);
    const verified = await svc(['domains', 'verify', added.stdout, '--publish']);
    expect(verified.exitCode, verified.stderr).toBe(0);
    expect(verified.stderr).toContain('later.example.com is verified.');

    const r = await svc(['trigger', 'email.delivered', '--json']);
    expect(r.exitCode, r.stderr).toBe(0);
    const { created } = JSON.parse(r.stdout);
    expect(created).toEqual([expect.objectContaining({ kind: 'email', from: `trigger@${s.seed!.domain}` })]);
    expect(s.seed!.domain).toBe('example.test');
  });
});
