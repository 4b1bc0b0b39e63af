// keys create | list | revoke against the real server: the key printed once, saved with --save for sending without
// a flag, the list as a table, as tab-separated lines and as the API body.
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listOf } from '../../src/contract/common.js';
import { ApiKey, CreatedApiKey } from '../../src/contract/keys.js';
import { loginRun } from '../../src/cli/commands/auth/login.js';
import { keysCreateRun } from '../../src/cli/commands/keys/create.js';
import { keysListRun } from '../../src/cli/commands/keys/list.js';
import { keysRevokeRun } from '../../src/cli/commands/keys/revoke.js';
import { emailsSendRun } from '../../src/cli/commands/emails/send.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { cli, tempDirs } from './helpers.js';

describe('svc keys', () => {
  let s: TestServer;
  let configDir: string;
  const dirs = tempDirs();
  beforeAll(async () => {
    s = await startTestServer();
    configDir = dirs.make();
    const c = await cli(s, { configDir, stdin: s.seed!.password });
    expect(await c.run(loginRun, { email: s.seed!.email, passwordStdin: true })).toBe(0);
  });
  afterAll(async () => {
    await s.close();
    dirs.cleanup();
  });

  it('prints a new key once on stdout with a warning on stderr, and with --save sends without --api-key', async () => {
    const c = await cli(s, { configDir });
    expect(await c.run(keysCreateRun, { name: 'ci', scopes: ['emails:send', 'emails:read'], save: true })).toBe(0);
    const key = c.stdout().trim();
    expect(key).toMatch(/^svc_test_[0-9A-Za-z]{32}$/);
    expect(c.stderr()).toContain('warning: this is the only time the key is shown');
    expect(c.stderr()).toContain('Saved in profile default');
    expect(c.stderr()).not.toContain(key);

    const secrets = JSON.parse(readFileSync(join(configDir, 'secrets', 'credentials.json'), 'utf8'));
    expect(secrets['default/api_key']).toBe(key);
    expect(statSync(join(configDir, 'secrets', 'credentials.json')).mode & 0o777).toBe(0o600);
    expect(readFileSync(join(configDir, 'config.json'), 'utf8')).not.toContain(key);

    const send = await cli(s, { configDir });
    expect(
      await send.run(emailsSendRun, {
        from: 'Shop <orders@example.test>',
        to: ['saved-key@example.org'],
        subject: 'Hi',
        text: 'hello',
      }),
    ).toBe(0);
    expect(send.stdout()).toMatch(/^msg_\w+\tqueued\n$/);
  });

  it('prints the CreatedApiKey body with --json, and refuses an unknown scope with the field named', async () => {
    const c = await cli(s, { configDir, globals: { json: true } });
    expect(await c.run(keysCreateRun, { name: 'json', scopes: ['domains:read'], mode: 'live' })).toBe(0);
    const created = CreatedApiKey.parse(JSON.parse(c.stdout()));
    expect(created).toMatchObject({ name: 'json', mode: 'live', scopes: ['domains:read'] });

    const bad = await cli(s, { configDir });
    expect(await bad.run(keysCreateRun, { name: 'bad', scopes: ['emails:sned'] }, 'svc keys create')).toBe(1);
    expect(bad.stdout()).toBe('');
    expect(bad.stderr()).toMatch(
      /^error: svc keys create: Validation failed — scopes\.0: must be one of emails:send, [^[]+ \[validation_failed, req_\w+\]$/m,
    );
  });

  it('lists keys as a table on a terminal, one tab-separated line per key when piped, and the API body with --json', async () => {
    const tty = await cli(s, { configDir, tty: true, env: { NO_COLOR: '1' } });
    expect(await tty.run(keysListRun, {})).toBe(0);
    const [head, ...rows] = tty
      .stdout()
      .trimEnd()
      .split('\n')
      .filter((l) => l);
    expect(head).toMatch(/ID {2,}NAME {2,}KEY {2,}MODE {2,}SCOPES {2,}STATE {2,}CREATED {2,}LAST USED/);
    expect(rows.some((r) => /Sandbox test key {2,}svc_test_\w{4}…\w{4} {2,}test/.test(r))).toBe(true);

    const piped = await cli(s, { configDir });
    expect(await piped.run(keysListRun, { limit: 2 })).toBe(0);
    const lines = piped.stdout().trimEnd().split('\n');
    expect(lines).toHaveLength(2);
    for (const line of lines) expect(line.split('\t')).toHaveLength(8);
    expect(lines[0]!.split('\t')[0]).toMatch(/^key_/);

    const json = await cli(s, { configDir, globals: { json: true } });
    expect(await json.run(keysListRun, { limit: 1 })).toBe(0);
    const page = listOf(ApiKey).parse(JSON.parse(json.stdout()));
    expect(page.data).toHaveLength(1);
    expect(page.has_more).toBe(true);
    const next = await cli(s, { configDir, globals: { json: true } });
    expect(await next.run(keysListRun, { limit: 1, after: page.data[0]!.id })).toBe(0);
    expect(listOf(ApiKey).parse(JSON.parse(next.stdout())).data[0]!.id).not.toBe(page.data[0]!.id);
  });

  it('revokes a key; revoking the saved one forgets it, and sending then asks for a key', async () => {
    const c = await cli(s, { configDir });
    expect(await c.run(keysCreateRun, { name: 'short-lived', scopes: ['emails:send'], save: true })).toBe(0);
    const list = await cli(s, { configDir, globals: { json: true } });
    await list.run(keysListRun, { limit: 1 });
    const id = JSON.parse(list.stdout()).data[0].id;

    const revoke = await cli(s, { configDir });
    expect(await revoke.run(keysRevokeRun, { id })).toBe(0);
    expect(revoke.stdout()).toBe('');
    expect(revoke.stderr()).toContain(`Revoked ${id}`);
    expect(revoke.stderr()).toContain('it is forgotten');

    const send = await cli(s, { configDir });
    expect(
      await send.run(
        emailsSendRun,
        { from: 'orders@example.test', to: ['x@example.org'], text: 'x' },
        'svc emails send',
      ),
    ).toBe(4);
    expect(send.stderr()).toMatch(
      /Missing credentials .* \[missing_credentials, req_\w+\]; hint: pass --api-key, set SVC_API_KEY, or save a key/,
    );

    const unknown = await cli(s, { configDir });
    expect(await unknown.run(keysRevokeRun, { id: 'key_000000000000000000000000' }, 'svc keys revoke')).toBe(1);
    expect(unknown.stderr()).toMatch(/\[not_found, req_\w+\]/);
  });

  it('needs a session: an API key alone is told to sign in', async () => {
    const c = await cli(s, { configDir: dirs.make(), env: { SVC_API_KEY: s.seed!.api_key_test } });
    expect(await c.run(keysListRun, {}, 'svc keys list')).toBe(4);
    expect(c.stderr()).toMatch(/hint: sign in with `svc login`$/m);
  });
});
