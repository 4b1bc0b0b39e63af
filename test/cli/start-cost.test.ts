// What a client command's run loads. `svc emails send` talks through node:http (client/transport.ts): Node's bundled
// undici, which fetch and the global Headers, Request and Response load on first use, costs about a tenth of such a run
// (bench/README.md, bench:cli-start), so nothing on the way may touch them; nor node:crypto (about 4 ms: the send's
// Idempotency-Key comes from lib/uuid.ts).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, ensureBuilt } from '../helpers/binary.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

// Preloaded into the command's process: says on stderr, as it exits, whether Node loaded its undici and its crypto.
const REPORT =
  "data:text/javascript,process.on('exit', () => process.stderr.write(['undici', 'crypto'].map((name) => " +
  "name + ' loaded: ' + process.moduleLoadList.some((m) => m.startsWith('NativeModule ') && m.includes(name)))" +
  ".join('\\n') + '\\n'))";

describe("a client command's run", () => {
  let s: TestServer;
  let home: string;
  beforeAll(async () => {
    ensureBuilt();
    s = await startTestServer();
    home = mkdtempSync(join(tmpdir(), 'svc-start-'));
  });
  afterAll(async () => {
    await s?.close();
    rmSync(home, { recursive: true, force: true });
  });

  // Not spawnSync: the server answering it runs in this process.
  const run = (args: string[]) =>
    execa(process.execPath, ['--import', REPORT, BIN, ...args], {
      reject: false,
      extendEnv: false,
      env: {
        PATH: process.env.PATH,
        HOME: home,
        SVC_BASE_URL: `${s.origin}/v1`,
        SVC_API_KEY: s.seed!.api_key_test,
        SVC_CREDENTIAL_STORE: 'file',
      },
    });

  it('sends through node:http and never loads the undici behind fetch, nor node:crypto', async () => {
    const r = await run(['emails', 'send', '--from', 'orders@example.test', '--to', 'ada@example.org', '--text', 'hi']);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^msg_\w+\tqueued/);
    expect(r.stderr).toContain('undici loaded: false');
    expect(r.stderr).toContain('crypto loaded: false');
  });

  it('reports a refusal (an ApiError with its headers) without loading it either', async () => {
    const r = await run(['emails', 'get', 'msg_doesnotexist']);
    expect(r.exitCode, r.stderr).toBe(1);
    expect(r.stderr).toMatch(/not_found|Not Found|no email/i);
    expect(r.stderr).toContain('undici loaded: false');
  });
});
