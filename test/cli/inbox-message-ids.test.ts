// The msg_… id `svc emails send` prints, given to `svc inbox show|check` (the built binary), and to the MCP tools that
// take a message id; and mail still on its way when `svc inbox` runs right after a send: the README's own flow.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMcpServer } from '../../src/cli/mcp/server.js';
import { BIN, clientEnv, ensureBuilt, killAll, ROOT, serve, stop } from '../helpers/binary.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { cli, tempDirs } from './helpers.js';

type Result = { content: { type: string; text: string }[]; isError?: boolean };

describe('svc inbox with the msg_ id of a sent message', { timeout: 120_000 }, () => {
  let s: TestServer;
  const dirs: string[] = [];
  const configs = tempDirs();
  beforeAll(async () => {
    ensureBuilt();
    s = await startTestServer();
  }, 180_000);
  afterAll(async () => {
    await s?.close();
    killAll();
    configs.cleanup();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  const home = () => {
    const d = mkdtempSync(join(tmpdir(), 'svc-ids-'));
    dirs.push(d);
    return d;
  };
  const envOf = (h: string) => ({
    PATH: process.env.PATH!,
    HOME: h,
    SVC_CONFIG_DIR: join(h, 'config'),
    SVC_RUNTIME_DIR: join(h, 'run'),
    SVC_CREDENTIAL_STORE: 'file',
    SVC_BASE_URL: s.api,
    SVC_API_KEY: s.seed!.api_key_test!,
    SVC_ADMIN_TOKEN: s.adminToken,
  });
  const svc = (args: string[], env: Record<string, string> = envOf(home())) =>
    execa(process.execPath, [BIN, ...args], { env, extendEnv: false, reject: false, cwd: ROOT, encoding: 'buffer' });
  const text = (b: Uint8Array) => Buffer.from(b).toString('utf8');
  const sendCmd = (extra: string[] = []) => [
    'emails',
    'send',
    '--from',
    'orders@example.test',
    '--to',
    'ada@example.org',
    '--subject',
    'Your receipt',
    '--text',
    'Thanks for your order.',
    '--html',
    '<p>Thanks for your <b>order</b>.</p>',
    ...extra,
  ];
  /** `svc emails send`: the msg_ id it prints. */
  const send = async (extra: string[] = []) => {
    const r = await svc(sendCmd(extra));
    expect(r.exitCode, text(r.stderr)).toBe(0);
    return text(r.stdout).split('\t')[0]!;
  };
  const deferEverything = async () =>
    expect(
      (await s.admin('PUT', '/sandbox/chaos', { rules: [{ match: { smtp: 'rcpt' }, action: { code: 451 } }] })).status,
    ).toBe(200);

  it('send → `svc inbox show msg_…`, `--raw` and `svc inbox check msg_…` show the caught message', async () => {
    const msg = await send();
    expect(msg).toMatch(/^msg_\w{24}$/);
    await s.settle();
    const shown = await svc(['inbox', 'show', msg]);
    expect(shown.exitCode, text(shown.stderr)).toBe(0);
    const eml = /^id\s+(eml_\w+)$/m.exec(text(shown.stdout))?.[1];
    expect(eml, text(shown.stdout)).toBeDefined();
    expect(text(shown.stdout)).toMatch(new RegExp(`^status\\s+delivered \\(${msg}\\)$`, 'm'));
    expect(text(shown.stdout)).toContain('Thanks for your order.');
    expect(text((await svc(['inbox', 'show', eml!])).stdout)).toBe(text(shown.stdout));

    const raw = await svc(['inbox', 'show', msg, '--raw']);
    expect(raw.exitCode, text(raw.stderr)).toBe(0);
    expect(text(raw.stdout)).toContain(`Message-ID: <${msg}@example.test>`);
    expect(Buffer.from(raw.stdout).equals(Buffer.from((await svc(['inbox', 'show', eml!, '--raw'])).stdout))).toBe(
      true,
    );

    const checked = await svc(['inbox', 'check', msg]);
    const byEml = await svc(['inbox', 'check', eml!]);
    expect(text(checked.stderr)).toMatch(new RegExp(`^${eml}: \\d+ errors?, `));
    expect([checked.exitCode, text(checked.stdout), text(checked.stderr)]).toEqual([
      byEml.exitCode,
      text(byEml.stdout),
      text(byEml.stderr),
    ]);
  });

  it('a msg_ id not caught yet: says it is queued and names `svc emails get`, not `svc keys list`', async () => {
    await deferEverything();
    const msg = await send();
    await s.settle();
    await s.admin('DELETE', '/sandbox/chaos');
    for (const args of [
      ['inbox', 'show', msg],
      ['inbox', 'show', msg, '--raw'],
      ['inbox', 'check', msg],
    ]) {
      const r = await svc(args);
      expect(r.exitCode).toBe(1);
      expect(text(r.stderr)).toMatch(/is queued/);
      expect(text(r.stderr)).toContain(`svc emails get ${msg}`);
      expect(text(r.stderr)).not.toContain('svc keys list');
    }
    const none = await svc(['inbox', 'show', 'eml_000000000000000000000000']);
    expect(none.exitCode).toBe(1);
    expect(text(none.stderr)).toContain('`svc inbox`');
    expect(text(none.stderr)).not.toContain('svc keys list');
  });

  it('`svc inbox` right after a send: the mail on its way is said on stderr, stdout is the caught mail alone', async () => {
    await s.admin('DELETE', '/sandbox/messages');
    await deferEverything();
    const msg = await send();
    await s.settle();
    await s.admin('DELETE', '/sandbox/chaos');
    const listed = await svc(['inbox']);
    expect(listed.exitCode, text(listed.stderr)).toBe(0);
    expect(text(listed.stdout)).toBe('');
    expect(text(listed.stderr)).toMatch(/^On its way, not caught yet:$/m);
    expect(text(listed.stderr)).toMatch(new RegExp(`^${msg}\\tqueued\\tada@example.org\\tYour receipt$`, 'm'));
    const json = await svc(['inbox', '--json']);
    expect(JSON.parse(text(json.stdout))).toEqual({ data: [], has_more: false });
    expect(text(json.stderr)).toContain(msg);
    // Filtered as the listing is: mail to someone else is not said.
    expect(text((await svc(['inbox', '--to', 'bob@example.org'])).stderr)).not.toContain(msg);

    await s.advance(3600);
    const after = await svc(['inbox']);
    expect(text(after.stdout)).toMatch(/^eml_\w+\t.*\tYour receipt\tdelivered$/m);
    expect(text(after.stderr)).not.toContain('On its way');
  });

  it('get_message and check_message of svc mcp take the msg_ id', async () => {
    const msg = await send();
    await s.settle();
    const { ctx } = await cli(s, {
      configDir: configs.make(),
      env: { SVC_API_KEY: s.seed!.api_key_test!, SVC_ADMIN_TOKEN: s.adminToken },
    });
    const server = createMcpServer(ctx);
    const [a, b] = InMemoryTransport.createLinkedPair();
    await server.connect(a);
    const client = new Client({ name: 'test', version: '0' });
    await client.connect(b);
    try {
      const call = async (name: string, args: Record<string, unknown>) =>
        (await client.callTool({ name, arguments: args })) as Result;
      const got = await call('get_message', { id: msg });
      expect(got.isError, got.content[0]!.text).toBeFalsy();
      const m = JSON.parse(got.content[0]!.text);
      expect(m).toMatchObject({ message_id: msg, subject: 'Your receipt' });
      const checked = await call('check_message', { id: msg });
      expect(checked.isError, checked.content[0]!.text).toBeFalsy();
      expect(JSON.parse(checked.content[0]!.text).message_id).toBe(m.id);
    } finally {
      await client.close();
    }
  });
});

describe('the README flow on a fresh `svc serve`: send, then `svc inbox`', { timeout: 120_000 }, () => {
  afterAll(() => killAll());

  it('never prints nothing: the message is listed, or said to be on its way', async () => {
    ensureBuilt();
    const server = await serve(['--memory']);
    const h = mkdtempSync(join(tmpdir(), 'svc-readme-'));
    try {
      const env = clientEnv(h, server);
      const run = (args: string[]) =>
        execa(process.execPath, [BIN, ...args], { env, extendEnv: false, reject: false, cwd: ROOT });
      const sent = await run([
        'emails',
        'send',
        '--from',
        `hello@${server.ready.seed!.domain}`,
        '--to',
        'ada@example.org',
        '--subject',
        'Hello',
        '--text',
        'Hi.',
      ]);
      expect(sent.exitCode, sent.stderr).toBe(0);
      const msg = sent.stdout.split('\t')[0]!;
      const listed = await run(['inbox']);
      expect(listed.exitCode, listed.stderr).toBe(0);
      expect(`${listed.stdout}\n${listed.stderr}`).toMatch(new RegExp(`\\tHello\\t|${msg}`));
    } finally {
      rmSync(h, { recursive: true, force: true });
      await stop(server);
    }
  });
});
