// The code and the link a person would use, taken out of realistic transactional mail (test/helpers/mail-corpus.ts) by
// every client as users run them: `svc inbox wait --extract` (the built binary), svc-mail/testing's `inbox.waitFor`,
// and `svc mcp`'s `wait_for_message` (the built binary on stdio, driven by the MCP SDK's own client). Each mail goes
// through a real server's /v1, so click tracking rewrites its HTML links as it does for users; each client reads its
// own copy (a wait returns a message once).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../../src/testing/index.js';
import { BIN, ensureBuilt, ROOT } from '../helpers/binary.js';
import { CORPUS, type CorpusMail } from '../helpers/mail-corpus.js';

type Reader = 'cli-code' | 'cli-link' | 'testing' | 'mcp-code' | 'mcp-link';
const address = (m: CorpusMail, reader: Reader) => `${reader}.${m.name}@example.org`;
/** Who reads a mail: the code's readers always (a mail without one must not yield one), the link's where it has one. */
const readers = (m: CorpusMail): Reader[] =>
  m.link === undefined
    ? ['cli-code', 'testing', 'mcp-code']
    : ['cli-code', 'cli-link', 'testing', 'mcp-code', 'mcp-link'];

describe('the code and the link a person would use, by every client', () => {
  let sb: Sandbox;
  let home: string;
  let env: Record<string, string>;
  let mcp: Client;
  let origin: string;
  beforeAll(async () => {
    ensureBuilt();
    sb = await startSandbox({ sendRate: 1_000 });
    origin = sb.apiUrl.replace(/\/v1$/, '');
    home = mkdtempSync(join(tmpdir(), 'svc-extract-'));
    env = {
      PATH: process.env.PATH!,
      HOME: home,
      SVC_CONFIG_DIR: join(home, 'config'),
      SVC_RUNTIME_DIR: join(home, 'run'),
      SVC_CREDENTIAL_STORE: 'file',
      SVC_BASE_URL: sb.apiUrl,
      SVC_API_KEY: sb.seed!.api_key_test!,
      SVC_ADMIN_TOKEN: sb.adminToken,
    };
    mcp = new Client({ name: 'svc-test', version: '0.0.0' });
    await mcp.connect(new StdioClientTransport({ command: process.execPath, args: [BIN, 'mcp'], cwd: ROOT, env }));
    for (const m of CORPUS) {
      for (const reader of readers(m)) {
        const content = { ...(m.text ? { text: m.text } : {}), ...(m.html ? { html: m.html } : {}) };
        await sb.client.call('sendEmail', {
          body: {
            from: 'Acme <hello@example.test>',
            to: address(m, reader),
            subject: m.subject,
            ...content,
            tracking: { clicks: m.clicks ?? true },
          },
        });
      }
    }
  }, 120_000);
  afterAll(async () => {
    await mcp?.close();
    await sb?.close();
    rmSync(home, { recursive: true, force: true });
  });

  const svc = (args: string[]) =>
    execa(process.execPath, [BIN, ...args], { env, extendEnv: false, reject: false, cwd: ROOT });
  const tool = async (args: Record<string, unknown>) =>
    (await mcp.callTool({ name: 'wait_for_message', arguments: { timeout_ms: 30_000, ...args } })) as {
      content: { text: string }[];
      isError?: boolean;
    };

  it.each(CORPUS.map((m) => [m.name, m] as const))('%s', async (_, m) => {
    // svc inbox wait --extract: the value alone on stdout, or exit 1 naming what the mail lacks.
    const [code, link] = await Promise.all([
      svc(['inbox', 'wait', '--to', address(m, 'cli-code'), '--extract', 'code']),
      m.link === undefined ? undefined : svc(['inbox', 'wait', '--to', address(m, 'cli-link'), '--extract', 'link']),
    ]);
    if (m.code === null) {
      expect([code.exitCode, code.stderr]).toEqual([
        1,
        expect.stringContaining('nothing that reads as a one-time code'),
      ]);
    } else expect([code.exitCode, code.stdout], code.stderr).toEqual([0, m.code]);
    if (link && m.link === null)
      expect([link.exitCode, link.stderr]).toEqual([1, expect.stringContaining('no http(s) link')]);
    else if (link) expect([link.exitCode, link.stdout], link.stderr).toEqual([0, m.link]);

    // svc-mail/testing: m.code, m.link(), and the redirect kept beside the target of a tracked link.
    const caught = await sb.inbox.waitFor({ to: address(m, 'testing'), timeout: 30_000 });
    expect(caught.code).toBe(m.code);
    if (m.link === null) expect(() => caught.link()).toThrow(/has no http\(s\) link/);
    else if (m.link !== undefined) {
      expect(caught.link()).toBe(m.link);
      const chosen = caught.links.find((l) => l.url === m.link)!;
      // A link of the HTML is tracked unless the send said not to; one only the text part has never is.
      const inHtml = [m.link, m.link.replace(/&/g, '&amp;')].some((href) => m.html?.includes(`href="${href}"`));
      expect(chosen.tracked?.startsWith(`${origin}/t/c/`) ?? false).toBe(inHtml && m.clicks !== false);
    }
    // No link of the mail is left pointing at the tracking redirect.
    expect(caught.links.filter((l) => l.url.startsWith(origin))).toEqual([]);

    // svc mcp's wait_for_message.
    const byMcp = await tool({ to: address(m, 'mcp-code'), extract: 'code' });
    if (m.code === null) {
      expect(byMcp.isError).toBe(true);
      expect(byMcp.content[0]!.text).toContain('nothing that reads as a one-time code');
    } else expect(JSON.parse(byMcp.content[0]!.text).code, byMcp.content[0]!.text).toBe(m.code);
    if (m.link !== undefined) {
      const linkByMcp = await tool({ to: address(m, 'mcp-link'), extract: 'link' });
      if (m.link === null) expect(linkByMcp.isError).toBe(true);
      else expect(JSON.parse(linkByMcp.content[0]!.text).link, linkByMcp.content[0]!.text).toBe(m.link);
    }
  });
});
