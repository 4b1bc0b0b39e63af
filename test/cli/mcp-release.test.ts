// svc mcp's release_message tool against the real server in this process and a real SMTP relay on loopback, through
// the MCP SDK's own client on an in-memory transport (as mcp-check.test.ts does): a release by the msg_… id send_email
// answered, and a refusal as a tool error with the service's Problem.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMcpServer } from '../../src/cli/mcp/server.js';
import { RELAY_PASS, startRelay, type TestRelay } from '../helpers/relay.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { cli, tempDirs } from './helpers.js';

type Result = { content: { type: string; text: string }[]; structuredContent?: any; isError?: boolean };

describe('svc mcp: release_message', () => {
  let s: TestServer;
  let relay: TestRelay;
  let client: Client;
  const dirs = tempDirs();
  beforeAll(async () => {
    relay = await startRelay();
    s = await startTestServer({ relayUrl: relay.url, relayAllow: ['*@example.com'] });
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
    await relay.close();
    dirs.cleanup();
  });
  const call = async (args: Record<string, unknown>) =>
    (await client.callTool({ name: 'release_message', arguments: args })) as Result;

  it('releases a caught message by the id send_email answered, and refuses outside the allow-list', async () => {
    const sent = (await client.callTool({
      name: 'send_email',
      arguments: { from: 'Shop <orders@example.test>', to: 'ada@example.org', subject: 'Agent release', text: 'Hi' },
    })) as Result;
    expect(sent.isError).toBeFalsy();
    await s.settle();
    const id = sent.structuredContent.id as string;
    const arrived = relay.next();
    const r = await call({ id, to: ['qa@example.com'] });
    expect(r.isError, r.content[0]?.text).toBeFalsy();
    expect(r.structuredContent).toMatchObject({ to: ['qa@example.com'], relay: expect.stringContaining(':***@') });
    expect(r.content[0]!.text).not.toContain(RELAY_PASS);
    expect((await arrived).rcptTo).toEqual(['qa@example.com']);

    const refused = await call({ id, to: 'x@elsewhere.net' });
    expect(refused.isError).toBe(true);
    expect(refused.content[0]!.text).toMatch(/^release_message: .*x@elsewhere\.net is outside the relay's allow-list/);
    expect(JSON.parse(refused.content[1]!.text).error.code).toBe('relay_recipient_not_allowed');
  });
});
