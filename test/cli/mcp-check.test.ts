// svc mcp's check_message tool against the real server in this process, through the MCP SDK's own client on an
// in-memory transport (as mcp-tools.test.ts does for the other tools).
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMcpServer } from '../../src/cli/mcp/server.js';
import { MessageChecks } from '../../src/contract/checks.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { cli, tempDirs } from './helpers.js';

type Result = { content: { type: string; text: string }[]; structuredContent?: unknown; isError?: boolean };

describe('svc mcp: check_message', () => {
  let s: TestServer;
  let client: Client;
  const dirs = tempDirs();
  beforeAll(async () => {
    s = await startTestServer();
    const { ctx } = await cli(s, {
      configDir: dirs.make(),
      env: { SVC_API_KEY: s.ready.seed!.api_key_test!, SVC_ADMIN_TOKEN: s.adminToken },
    });
    const server = createMcpServer(ctx);
    const [a, b] = InMemoryTransport.createLinkedPair();
    await server.connect(a);
    client = new Client({ name: 'test', version: '0' });
    await client.connect(b);
  });
  afterAll(async () => {
    await client?.close();
    await s.close();
    dirs.cleanup();
  });
  const call = async (args: Record<string, unknown>) =>
    (await client.callTool({ name: 'check_message', arguments: args })) as Result;

  it('answers the report of a caught message', async () => {
    const sent = await client.callTool({
      name: 'send_email',
      arguments: {
        from: 'Shop <orders@example.test>',
        to: 'ada@example.org',
        subject: 'Weekend sale',
        html: '<p><img src="https://cdn.example.test/sale.png"> Everything half price.</p>',
      },
    });
    expect(sent.isError).toBeFalsy();
    await s.settle();
    const id = (await s.admin('GET', '/sandbox/messages?limit=1')).body.data[0].id;
    const r = await call({ id });
    expect(r.isError).toBeFalsy();
    const report = MessageChecks.parse(JSON.parse(r.content[0]!.text));
    expect(report.message_id).toBe(id);
    const content = report.checks.find((c) => c.id === 'content')!;
    expect(content.findings.map((f) => f.rule)).toEqual(
      expect.arrayContaining(['text-part-missing', 'img-alt-missing']),
    );
    expect(report.checks.find((c) => c.id === 'authentication')!.status).toBe('ok');
    // The links again, on request: the same report otherwise.
    const again = MessageChecks.parse(JSON.parse((await call({ id, refresh_links: true })).content[0]!.text));
    expect(again.checked_at).toBe(report.checked_at);
  });

  it("fails as a tool error with the service's Problem for a message that is not there", async () => {
    const r = await call({ id: 'eml_nope' });
    expect(r.isError).toBe(true);
    expect(r.content[0]!.text).toMatch(/^check_message: .*No caught message has this id/);
    expect(JSON.parse(r.content[1]!.text).error.code).toBe('not_found');
  });
});
