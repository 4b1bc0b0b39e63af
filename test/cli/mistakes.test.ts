// Mistakes a newcomer makes on the first day, through the built binary against the real server, each answered with
// what to do: a key from another service, a base URL without /v1, several recipients in one --to, and svc trigger
// sending from the seeded domain whatever was added since.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, ensureBuilt, ROOT } from '../helpers/binary.js';
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
