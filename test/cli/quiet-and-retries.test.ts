// The built binary against the real server: `-q` prints only what a command made, so `id=$(svc emails send -q …)`
// captures the id; and retries are told — each on a line of stderr on a terminal and with --verbose, never in a pipe
// without it — through a real server answering 503 twice (a chaos rule).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pty from '@lydell/node-pty';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ANSI, BIN, ensureBuilt, ROOT } from '../helpers/binary.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

const ID = (prefix: string) => new RegExp(`^${prefix}_\\w{24}$`);

describe('svc -q and retries told', { timeout: 120_000 }, () => {
  let s: TestServer;
  let home: string;

  beforeAll(async () => {
    ensureBuilt();
    s = await startTestServer();
    home = mkdtempSync(join(tmpdir(), 'svc-quiet-'));
  }, 120_000);
  afterAll(async () => {
    await s.close();
    rmSync(home, { recursive: true, force: true });
  });

  const env = (extra: Record<string, string> = {}) => ({
    PATH: process.env.PATH!,
    HOME: home,
    SVC_CONFIG_DIR: join(home, 'config'),
    SVC_RUNTIME_DIR: join(home, 'run'),
    SVC_CREDENTIAL_STORE: 'file',
    SVC_BASE_URL: s.api,
    SVC_API_KEY: s.seed!.api_key_test!,
    SVC_ADMIN_TOKEN: s.adminToken,
    ...extra,
  });
  const svc = (args: string[], input = '') =>
    execa(process.execPath, [BIN, ...args], { env: env(), extendEnv: false, input, reject: false, cwd: ROOT });
  const send = ['emails', 'send', '--from', 'hello@example.test', '--to', 'ada@example.org', '--text', 'hi'];

  /** The next two sends are answered 503 (Retry-After: 0) before one goes through. */
  const twice503 = async () => {
    const set = await svc([
      'sandbox',
      'chaos',
      'set',
      '--path',
      '/v1/emails',
      '--status',
      '503',
      '--retry-after',
      '0',
      '--times',
      '2',
    ]);
    expect(set.exitCode, set.stderr).toBe(0);
  };

  it('-q prints only the id (or the key, or the code) of what a command made, and nothing on stderr', async () => {
    const captured = await execa(
      'sh',
      ['-c', `id=$("${process.execPath}" "${BIN}" "$@"); echo "[$id]"`, 'sh', ...send, '-q'],
      {
        env: env(),
        extendEnv: false,
        reject: false,
        cwd: ROOT,
      },
    );
    expect(captured.stderr).toBe('');
    expect(captured.stdout).toMatch(/^\[msg_\w{24}\]$/);
    // Without -q a script gets the status after a tab.
    expect((await svc(send)).stdout).toMatch(/^msg_\w{24}\tqueued$/);

    const domain = await svc(['domains', 'add', 'quiet.example.com', '-q']);
    expect([domain.stdout, domain.stderr]).toEqual([expect.stringMatching(ID('dom')), '']);

    // Keys are made by a signed-in session.
    const login = await svc(['login', '--email', s.seed!.email, '--password-stdin'], s.seed!.password);
    expect(login.exitCode, login.stderr).toBe(0);
    const key = await svc(['-q', 'keys', 'create', '--name', 'ci', '--scope', 'emails:send']);
    expect([key.stdout, key.stderr]).toEqual([expect.stringMatching(/^svc_test_\w{32}$/), '']);

    const invite = await svc(['sandbox', 'invites', 'create', '--quiet']);
    expect([invite.stdout, invite.stderr]).toEqual([expect.stringMatching(/^inv-\S+$/), '']);

    const hook = await svc([
      'sandbox',
      'webhooks',
      'add',
      '-q',
      '--workspace',
      s.seed!.workspace_id,
      '--url',
      'http://127.0.0.1:9/hook',
    ]);
    expect([hook.stdout, hook.stderr]).toEqual([expect.stringMatching(ID('whk')), '']);
    const added = await s.admin('GET', `/sandbox/webhooks?workspace_id=${s.seed!.workspace_id}`);
    expect(added.body.data.map((e: { id: string }) => e.id)).toContain(hook.stdout);

    // A batch: a line per email of the file, in order, `-` for one refused (and exit 1, saying so).
    const file = join(home, 'batch.json');
    writeFileSync(
      file,
      JSON.stringify([
        { from: 'hello@example.test', to: 'a@example.org', text: 'one' },
        { from: 'hello@nowhere.example', to: 'b@example.org', text: 'refused' },
        { from: 'hello@example.test', to: 'c@example.org', text: 'three' },
      ]),
    );
    const batch = await svc(['emails', 'batch', file, '-q']);
    expect(batch.exitCode).toBe(1);
    expect(batch.stdout.split('\n')).toEqual([expect.stringMatching(ID('msg')), '-', expect.stringMatching(ID('msg'))]);
    expect(batch.stderr).toBe('error: svc emails batch: 1 of 3 emails were refused; the others were accepted');
  });

  it('says each retry on stderr with --verbose, and nothing of them in a pipe without it', async () => {
    await twice503();
    const verbose = await svc([...send, '--verbose']);
    expect(verbose.exitCode, verbose.stderr).toBe(0);
    expect(verbose.stdout).toMatch(/^msg_\w{24}\tqueued$/);
    expect(verbose.stderr.split('\n')).toEqual([
      'note: POST /v1/emails answered 503 (unavailable); retry 1 of 3 in 0.0 s',
      'note: POST /v1/emails answered 503 (unavailable); retry 2 of 3 in 0.0 s',
    ]);

    await twice503();
    const piped = await svc(send);
    expect(piped.exitCode, piped.stderr).toBe(0);
    expect(piped.stderr).toBe('');
    // The chaos rule is used up: the send went through on its third attempt.
    expect((await s.admin('GET', '/sandbox/chaos')).body.rules).toEqual([
      expect.objectContaining({ times: 2, remaining: 0 }),
    ]);
  });

  it('says each retry on a terminal, without being asked', async () => {
    await twice503();
    const term = pty.spawn(process.execPath, [BIN, ...send], {
      name: 'xterm-256color',
      cols: 120,
      rows: 30,
      cwd: ROOT,
      env: env({ NO_COLOR: '1' }),
    });
    let raw = '';
    term.onData((d) => (raw += d));
    const code = await new Promise<number>((resolve) => term.onExit(({ exitCode }) => resolve(exitCode)));
    const lines = raw.replace(ANSI, '').split(/\r?\n/).filter(Boolean);
    expect(code, raw).toBe(0);
    expect(lines).toEqual([
      'note: POST /v1/emails answered 503 (unavailable); retry 1 of 3 in 0.0 s',
      'note: POST /v1/emails answered 503 (unavailable); retry 2 of 3 in 0.0 s',
      expect.stringMatching(/^msg_\w{24} {2}queued$/),
    ]);
  });
});
