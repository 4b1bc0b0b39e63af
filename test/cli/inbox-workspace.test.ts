// `svc inbox wait --workspace` against the real server: mail of two workspaces to one address, caught by the sink from
// clients that logged in with each one's API key; a wait takes only the named workspace's (by id or name, any case),
// and a name no workspace has is said at once.
import nodemailer from 'nodemailer';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inboxWaitRun } from '../../src/cli/commands/inbox/wait.js';
import type { WallClock } from '../../src/cli/context.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { createKey, newTenant } from '../helpers/tenants.js';
import { cli, tempDirs } from './helpers.js';

describe('svc inbox wait --workspace', () => {
  let s: TestServer;
  let acme: { id: string; name: string; key: string };
  const dirs = tempDirs();
  beforeAll(async () => {
    s = await startTestServer();
    const tenant = await newTenant(s, 'acme');
    const key = await createKey(s, tenant.token, { scopes: ['emails:send'] });
    acme = { id: tenant.workspace_id, name: 'acme workspace', key: key.key };
  });
  afterAll(async () => {
    await s.close();
    dirs.cleanup();
  });

  /** Hands a message to the sink as an app logged in with `key` does: filed under the key's workspace. */
  async function sinkAs(key: string, to: string, text: string) {
    const t = nodemailer.createTransport({
      host: '127.0.0.1',
      port: s.smtpPort,
      ignoreTLS: true,
      auth: { user: 'app', pass: key },
    });
    try {
      await t.sendMail({ from: 'app@example.net', to, subject: 'Your code', text });
    } finally {
      t.close();
    }
  }

  const wait = async (opts: Parameters<typeof inboxWaitRun>[1], clock?: WallClock) => {
    const c = await cli(s, { configDir: dirs.make(), env: { SVC_ADMIN_TOKEN: s.adminToken }, clock });
    const code = await c.run(inboxWaitRun, opts, 'svc inbox wait');
    return { code, stdout: c.stdout(), stderr: c.stderr() };
  };

  it("takes only the named workspace's mail, by name in any case or by id", async () => {
    await sinkAs(s.seed!.api_key_test!, 'ada@example.org', 'Your code is 111111');
    await sinkAs(acme.key, 'ada@example.org', 'Your code is 222222');
    await sinkAs(acme.key, 'ada@example.org', 'Your code is 333333');
    // The oldest of Acme's, not the seed workspace's caught before it.
    expect(await wait({ to: 'ada@example.org', workspace: 'ACME Workspace', extract: 'code' })).toEqual({
      code: 0,
      stdout: '222222\n',
      stderr: '',
    });
    expect(await wait({ to: 'ada@example.org', workspace: acme.id, extract: 'code' })).toMatchObject({
      stdout: '333333\n',
    });
    expect(await wait({ to: 'ada@example.org', workspace: s.seed!.workspace_id, extract: 'code' })).toMatchObject({
      stdout: '111111\n',
    });
  });

  it("waits past mail of other workspaces for the named one's", async () => {
    // The wait's timeout never runs out: the wait ends when the mail comes, and `waiting` says when it began to wait.
    let waiting!: () => void;
    const started = new Promise<void>((resolve) => (waiting = resolve));
    const clock: WallClock = {
      now: Date.now,
      sleep: (_ms, signal) =>
        new Promise((_resolve, reject) => {
          waiting();
          signal?.addEventListener('abort', () => reject(signal.reason), { once: true });
        }),
    };
    const done = wait({ to: 'bob@example.org', workspace: acme.name, extract: 'code' }, clock);
    await started;
    await sinkAs(s.seed!.api_key_test!, 'bob@example.org', 'Your code is 444444');
    await sinkAs('not a key', 'bob@example.org', 'Your code is 555555');
    await sinkAs(acme.key, 'bob@example.org', 'Your code is 666666');
    expect(await done).toMatchObject({ code: 0, stdout: '666666\n' });
  });

  it('says at once that no workspace has the name given (exit 1), rather than waiting', async () => {
    const r = await wait({ to: 'ada@example.org', workspace: 'Nobody', timeout: 60_000 });
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/No workspace has the id or name "Nobody"/);
  });
});
