// The sandbox routes through the client, and where the admin token comes from (docs/command-line.md#the-admin-token): --admin-token, else
// SVC_ADMIN_TOKEN, else — for a loopback base URL — the admin-token file of the default data directory.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ClockState } from '../../src/contract/clock.js';
import { reportError } from '../../src/cli/errors.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { cli, tempDirs } from './helpers.js';

describe('the admin token of a local server', () => {
  let s: TestServer;
  let dataDir: string;
  const dirs = tempDirs();
  beforeAll(async () => {
    s = await startTestServer();
    dataDir = join(dirs.make(), 'svc');
    mkdirSync(dataDir);
    // What `svc serve` writes in its data directory.
    writeFileSync(join(dataDir, 'admin-token'), `${s.adminToken}\n`, { mode: 0o600 });
  });
  afterAll(async () => {
    await s.close();
    dirs.cleanup();
  });

  const clock = async (o: Parameters<typeof cli>[1]) => {
    const c = await cli(s, o);
    try {
      const r = await (await c.ctx.client()).sandbox('getClock');
      return { code: 0, body: ClockState.parse(r.body), stderr: '' };
    } catch (err) {
      return {
        code: await reportError(c.ctx.io, err, { command: 'svc sandbox clock' }),
        body: undefined,
        stderr: c.stderr(),
      };
    }
  };

  it('is read from the local data directory when the base URL is loopback, so `svc serve` next door just works', async () => {
    const r = await clock({ configDir: dirs.make(), env: { SVC_DATA_DIR: dataDir } });
    expect(r.body).toMatchObject({ mode: 'manual' });
    const viaLocalhost = await clock({
      configDir: dirs.make(),
      env: { SVC_DATA_DIR: dataDir, SVC_BASE_URL: s.api.replace('127.0.0.1', 'localhost') },
    });
    expect(viaLocalhost.code).toBe(0);
  });

  it('comes from --admin-token, else SVC_ADMIN_TOKEN, before the file', async () => {
    const wrongFile = join(dirs.make(), 'svc');
    mkdirSync(wrongFile);
    writeFileSync(join(wrongFile, 'admin-token'), 'adm_wrong\n');
    expect(
      (await clock({ configDir: dirs.make(), env: { SVC_DATA_DIR: wrongFile, SVC_ADMIN_TOKEN: s.adminToken } })).code,
    ).toBe(0);
    expect(
      (await clock({ configDir: dirs.make(), env: { SVC_DATA_DIR: wrongFile }, globals: { adminToken: s.adminToken } }))
        .code,
    ).toBe(0);
    const wrong = await clock({ configDir: dirs.make(), env: { SVC_DATA_DIR: wrongFile } });
    expect(wrong.code).toBe(4);
    expect(wrong.stderr).toMatch(/hint: that is not this server's admin token: give the admin_token of its ready line/);
  });

  it('without one, the refusal says where a token comes from (exit 4)', async () => {
    const r = await clock({ configDir: dirs.make(), env: { SVC_DATA_DIR: join(dirs.make(), 'none') } });
    expect(r.code).toBe(4);
    expect(r.stderr).toMatch(
      /^error: svc sandbox clock: no admin token for \S+: no svc serve on this machine is registered at that address, and \S+\/none\/admin-token does not exist; hint: start one with `svc serve`, or set SVC_ADMIN_TOKEN \(or pass --admin-token\)/,
    );
  });
});
