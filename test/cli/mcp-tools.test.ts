// The tools of `svc mcp` against the real server in this process, through the MCP SDK's own client on an in-memory
// transport (no stdio, no process): what tools/list describes, what each tool answers, and every failure as a tool
// error (isError) with the Problem's words. test/cli/mcp.test.ts runs the built binary on stdio.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMcpServer } from '../../src/cli/mcp/server.js';
import { tools } from '../../src/cli/mcp/tools.js';
import nodemailer from 'nodemailer';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { createKey, newTenant } from '../helpers/tenants.js';
import { cli, tempDirs } from './helpers.js';

type Result = { content: { type: string; text: string }[]; structuredContent?: any; isError?: boolean };

describe('svc mcp tools', () => {
  let s: TestServer;
  const dirs = tempDirs();
  const open: Client[] = [];
  beforeAll(async () => {
    s = await startTestServer();
  });
  afterAll(async () => {
    for (const c of open) await c.close();
    await s.close();
    dirs.cleanup();
  });

  /** A connected SDK client of a server over a Context with `env` (the seeded key and admin token by default). */
  async function connect(env: Record<string, string> = {}) {
    const { ctx, stderr } = await cli(s, {
      configDir: dirs.make(),
      env: { SVC_API_KEY: s.ready.seed!.api_key_test!, SVC_ADMIN_TOKEN: s.adminToken, ...env },
    });
    const logged: string[] = [];
    const server = createMcpServer(ctx, { onToolError: (name) => logged.push(name) });
    const [a, b] = InMemoryTransport.createLinkedPair();
    await server.connect(a);
    const client = new Client({ name: 'test', version: '0' });
    await client.connect(b);
    open.push(client);
    const call = async (name: string, args: Record<string, unknown> = {}) =>
      (await client.callTool({ name, arguments: args })) as Result;
    return { client, call, logged, stderr };
  }
  const json = (r: Result) => JSON.parse(r.content[0]!.text);
  const send = (call: (n: string, a: Record<string, unknown>) => Promise<Result>, body: Record<string, unknown>) =>
    call('send_email', { from: 'Shop <orders@example.test>', subject: 'Hi', text: 'hello', ...body });

  it('describes every tool with a title, a description and a JSON Schema of its input', async () => {
    const { client } = await connect();
    const listed = (await client.listTools()).tools;
    expect(listed.map((t) => t.name)).toEqual(tools().map((t) => t.name));
    for (const t of listed) {
      expect(t.title, t.name).toBeTruthy();
      expect(t.description!.length, t.name).toBeGreaterThan(40);
      expect(t.inputSchema.type).toBe('object');
    }
    const schema = (name: string) => listed.find((t) => t.name === name)!.inputSchema as any;
    // The contract's send body, unknown fields refused, plus the Idempotency-Key.
    expect(schema('send_email').required).toEqual(['from', 'to']);
    expect(schema('send_email').additionalProperties).toBe(false);
    expect(Object.keys(schema('send_email').properties)).toEqual(
      expect.arrayContaining(['from', 'to', 'cc', 'subject', 'text', 'html', 'scheduled_at', 'idempotency_key']),
    );
    expect(schema('list_events').properties.type.anyOf[0].enum).toContain('email.delivered');
    expect(schema('list_events').properties.after.pattern).toMatch(/^\^evt_/);
    expect(schema('wait_for_message').properties.extract.enum).toEqual(['link', 'code']);
    expect(schema('publish_domain_records').properties.state.enum).toEqual(['visible', 'propagating']);
    expect(schema('get_message').required).toEqual(['id']);
    const { instructions } = { instructions: client.getInstructions() };
    expect(instructions).toMatch(/wait_for_message/);
  });

  it('sends, then waits for the message and answers its code, its link, or the whole message', async () => {
    const { call } = await connect();
    const sent = await send(call, {
      to: 'code@example.org',
      subject: 'Your code',
      text: 'Your code is 482913. Or follow https://app.example.org/verify?t=abc.',
    });
    expect(sent.isError).toBeFalsy();
    expect(sent.structuredContent).toEqual({
      id: expect.stringMatching(/^msg_/),
      status: 'queued',
      created_at: expect.any(String),
    });
    expect(json(sent)).toEqual(sent.structuredContent);

    const code = await call('wait_for_message', { to: 'code@example.org', extract: 'code', timeout_ms: 5_000 });
    expect(code.isError).toBeFalsy();
    const got = json(code);
    expect(got.code).toBe('482913');
    expect(got.message).toMatchObject({ subject: 'Your code', to: ['code@example.org'], codes: ['482913'] });
    expect(got.message.links).toEqual([
      { text: 'Or follow', url: 'https://app.example.org/verify?t=abc', tracked: null, role: 'action' },
    ]);
    // Whole messages are text only.
    expect(code.structuredContent).toBeUndefined();

    // A wait returns a message once: the next one waits for the next message.
    const again = await call('wait_for_message', { to: 'code@example.org', timeout_ms: 200 });
    expect(again.isError).toBe(true);
    expect(again.content[0]!.text).toMatch(
      /^wait_for_message: no message to code@example\.org was caught within 0\.2s/,
    );
    expect(again.content[0]!.text).toContain(
      `the latest one, ${got.message.id}, came at ${got.message.received_at} and an earlier wait returned it: read it with get_message`,
    );

    // `since` narrows; `extract: link` answers the link.
    const second = json(await send(call, { to: 'code@example.org', text: 'Or https://app.example.org/next.' }));
    const link = await call('wait_for_message', { to: 'code@example.org', since: second.created_at, extract: 'link' });
    expect(link.isError).toBeFalsy();
    expect(json(link).link).toBe('https://app.example.org/next');
    expect(json(link).message.message_id).toBe(second.id);
  });

  it('answers the real target of the action link beside its tracking redirect, or the link or code chosen', async () => {
    const { call } = await connect();
    const html =
      '<p><a href="https://app.example.org/view/7">View in browser</a></p><p>Order #10423: your code is 90 31 17, ' +
      'backup code AB-1234.</p><p><a href="https://app.example.org/reset?t=1&amp;u=2">Reset password</a></p>' +
      '<p><a href="https://app.example.org/unsubscribe">Unsubscribe</a></p>';
    const mail = { to: 'choose@example.org', subject: 'Reset your password', html };
    for (let i = 0; i < 4; i++) await send(call, mail);
    const wait = async (args: Record<string, unknown>) => {
      const r = await call('wait_for_message', { to: 'choose@example.org', timeout_ms: 5_000, ...args });
      expect(r.isError, r.content[0]!.text).toBeFalsy();
      return json(r);
    };
    // Click tracking (on by default through /v1) rewrote the links: the answer is where they lead.
    const action = await wait({ extract: 'link' });
    expect(action.link).toBe('https://app.example.org/reset?t=1&u=2');
    expect(action.tracked_link).toMatch(new RegExp(`^${s.origin}/t/c/`));
    expect((await fetch(action.tracked_link, { redirect: 'manual' })).headers.get('location')).toBe(action.link);
    expect(action.message.links.map((l: any) => l.role)).toEqual(['view-in-browser', 'action', 'unsubscribe']);
    expect(action.message.codes).toEqual(['903117', '1234']);
    // Choosing implies what to extract.
    expect((await wait({ link_text: 'unsubscribe' })).link).toBe('https://app.example.org/unsubscribe');
    expect((await wait({ extract: 'link', link_match: '/VIEW/' })).link).toBe('https://app.example.org/view/7');
    expect((await wait({ code_pattern: '[A-Z]{2}-(\\d{4})' })).code).toBe('1234');

    const bad = await call('wait_for_message', { to: 'choose@example.org', code_pattern: '(' });
    expect(bad.isError).toBe(true);
    expect(bad.content[0]!.text).toMatch(/code_pattern/);
    const mixed = await call('wait_for_message', { to: 'choose@example.org', extract: 'code', link_text: 'x' });
    expect(mixed.isError).toBe(true);
    expect(mixed.content[0]!.text).toMatch(/link_text and link_match choose a link/);
  });

  it('waits for mail that has not come yet (telling the client it waits), and says when a message has no code', async () => {
    const { client } = await connect();
    let waiting!: (message: string) => void;
    const told = new Promise<string>((resolve) => (waiting = resolve));
    const result = client.callTool(
      { name: 'wait_for_message', arguments: { to: 'later@example.org', subject: 'WELCOME', extract: 'code' } },
      undefined,
      { onprogress: (p) => waiting(p.message ?? '') },
    );
    // Told once nothing already caught is taken: from then on the wait reads the stream.
    expect(await told).toMatch(
      /^waiting up to 30s for a message to later@example\.org with "WELCOME" in its subject caught since \S+Z$/,
    );
    const { call } = await connect();
    await send(call, { to: 'later@example.org', subject: 'Welcome aboard', text: 'No digits here.' });
    const r = (await result) as Result;
    expect(r.isError).toBe(true);
    expect(r.content[0]!.text).toMatch(
      /^wait_for_message: eml_\w+ arrived, but it has nothing that reads as a one-time code/,
    );
  });

  it('leaves out mail caught before svc mcp started', async () => {
    const before = await connect();
    await send(before.call, { to: 'before@example.org', text: 'Code 111111' });
    await s.settle();
    await s.advance(1);
    const { call } = await connect();
    const r = await call('wait_for_message', { to: 'before@example.org', timeout_ms: 200 });
    expect(r.isError).toBe(true);
    expect(r.content[0]!.text).toMatch(/the latest one, eml_\w+, came at \S+ before svc mcp started: read it/);
    await send(call, { to: 'before@example.org', text: 'Code 222222' });
    expect(json(await call('wait_for_message', { to: 'before@example.org', extract: 'code' })).code).toBe('222222');
  });

  it('send_email then wait_for_message, again and again: each wait answers the message just sent', async () => {
    const { call } = await connect();
    for (let i = 0; i < 25; i++) {
      await send(call, { to: 'loop@example.org', text: `Your code is ${700000 + i}` });
      const r = await call('wait_for_message', { to: 'loop@example.org', extract: 'code', timeout_ms: 10_000 });
      expect(r.isError, r.content[0]!.text).toBeFalsy();
      expect(json(r).code).toBe(String(700000 + i));
    }
  });

  it('under the real clock too, and across two svc mcp of one server', async () => {
    const real = await startTestServer({ clock: 'real' });
    try {
      const { ctx } = await cli(real, {
        configDir: dirs.make(),
        env: { SVC_API_KEY: real.ready.seed!.api_key_test!, SVC_ADMIN_TOKEN: real.adminToken },
      });
      const agents = [createMcpServer(ctx), createMcpServer(ctx)];
      const calls = await Promise.all(
        agents.map(async (server) => {
          const [a, b] = InMemoryTransport.createLinkedPair();
          await server.connect(a);
          const client = new Client({ name: 'test', version: '0' });
          await client.connect(b);
          open.push(client);
          return async (name: string, args: Record<string, unknown> = {}) =>
            (await client.callTool({ name, arguments: args })) as Result;
        }),
      );
      for (let i = 0; i < 20; i++) {
        const call = calls[i % 2]!;
        await send(call, { to: 'real@example.org', text: `Your code is ${800000 + i}` });
        const r = await call('wait_for_message', { to: 'real@example.org', extract: 'code', timeout_ms: 10_000 });
        expect(r.isError, r.content[0]!.text).toBeFalsy();
        expect(json(r).code).toBe(String(800000 + i));
      }
    } finally {
      await real.close();
    }
  });

  it('lists caught mail by recipient and subject, newest first, and reads one whole', async () => {
    const { call } = await connect();
    for (const subject of ['Order 1', 'Receipt', 'Order 2'])
      await send(call, { to: 'list@example.org', subject, text: subject });
    await s.settle();
    const all = await call('list_messages', { to: 'list@example.org' });
    expect(all.structuredContent.data.map((m: any) => m.subject)).toEqual(['Order 2', 'Receipt', 'Order 1']);
    expect(all.structuredContent.has_more).toBe(false);
    const orders = await call('list_messages', { to: 'list@example.org', subject: 'order', limit: 1 });
    expect(orders.structuredContent.data.map((m: any) => m.subject)).toEqual(['Order 2']);
    expect(orders.structuredContent.has_more).toBe(true);

    const one = await call('get_message', { id: all.structuredContent.data[1].id });
    expect(one.isError).toBeFalsy();
    expect(json(one)).toMatchObject({
      subject: 'Receipt',
      text: expect.stringContaining('Receipt'),
      links: [],
      codes: [],
    });
  });

  it("lists and waits for one workspace's mail, by its id or name; a name no workspace has is said", async () => {
    const { call } = await connect();
    const tenant = await newTenant(s, 'mcp');
    const key = (await createKey(s, tenant.token, { scopes: ['emails:send'] })).key;
    // Caught by the sink from apps logged in with each workspace's key.
    const sinkAs = async (pass: string, subject: string, text: string) => {
      const t = nodemailer.createTransport({
        host: '127.0.0.1',
        port: s.smtpPort,
        ignoreTLS: true,
        auth: { user: 'app', pass },
      });
      await t.sendMail({ from: 'app@example.net', to: 'ws@example.org', subject, text }).finally(() => t.close());
    };
    await sinkAs(s.ready.seed!.api_key_test!, 'Seed code', 'Your code is 101010');
    await sinkAs(key, 'Their code', 'Your code is 202020');
    const subjects = async (workspace: string) =>
      (await call('list_messages', { to: 'ws@example.org', workspace })).structuredContent.data.map(
        (m: any) => m.subject,
      );
    expect(await subjects('MCP Workspace')).toEqual(['Their code']);
    expect(await subjects(tenant.workspace_id)).toEqual(['Their code']);
    expect(await subjects(s.ready.seed!.workspace_id)).toEqual(['Seed code']);
    const waited = await call('wait_for_message', {
      to: 'ws@example.org',
      workspace: 'mcp workspace',
      extract: 'code',
      timeout_ms: 5_000,
    });
    expect(json(waited).code).toBe('202020');
    const nobody = await call('list_messages', { workspace: 'Nobody' });
    expect(nobody.isError).toBe(true);
    expect(nobody.content[0]!.text).toMatch(/^list_messages: Not found — No workspace has the id or name "Nobody"/);
    const waitNobody = await call('wait_for_message', { workspace: 'Nobody', timeout_ms: 5_000 });
    expect(waitNobody.content[0]!.text).toMatch(
      /^wait_for_message: Not found — No workspace has the id or name "Nobody"/,
    );
  });

  it('moves the clock: a scheduled send is delivered, and its events are listed', async () => {
    const { call } = await connect();
    const now = (await s.admin('GET', '/sandbox/clock')).body.now as string;
    const at = new Date(Date.parse(now) + 3_600_000).toISOString();
    const sent = json(await send(call, { to: 'scheduled@example.org', scheduled_at: at }));
    expect(sent.status).toBe('scheduled');
    await s.settle();
    expect(json(await call('list_messages', { to: 'scheduled@example.org' })).data).toEqual([]);

    const moved = await call('advance_clock', { duration: '2h' });
    expect(moved.isError).toBeFalsy();
    expect(Date.parse(moved.structuredContent.now)).toBeGreaterThanOrEqual(Date.parse(now) + 7_200_000);
    expect(moved.structuredContent.ran).toBeGreaterThanOrEqual(1);
    expect(json(await call('list_messages', { to: 'scheduled@example.org' })).data).toHaveLength(1);

    const events = await call('list_events', { type: ['email.sent', 'email.delivered'], limit: 100 });
    const mine = events.structuredContent.data.filter((e: any) => e.data.message_id === sent.id);
    expect(mine.map((e: any) => e.type)).toEqual(['email.sent', 'email.delivered']);
    const page = await call('list_events', { limit: 1, after: mine[0].id });
    expect(page.structuredContent.data).toHaveLength(1);

    expect((await call('advance_clock', { duration: 90 })).isError).toBeFalsy();
    const bad = await call('advance_clock', { duration: 'soon' });
    expect(bad.isError).toBe(true);
    expect(bad.content[0]!.text).toContain('duration takes seconds or a duration such as 30s');
  });

  it("publishes a domain's records by id or by name", async () => {
    const { call } = await connect();
    const seed = s.ready.seed!;
    const byName = await call('publish_domain_records', { domain: seed.domain });
    expect(byName.isError).toBeFalsy();
    expect(byName.structuredContent.domain_id).toBe(seed.domain_id);
    expect(byName.structuredContent.records.length).toBeGreaterThan(2);
    const byId = await call('publish_domain_records', { domain: seed.domain_id, state: 'propagating' });
    expect(byId.structuredContent.records.every((r: any) => r.state === 'propagating')).toBe(true);
    const unknown = await call('publish_domain_records', { domain: 'nowhere.example' });
    expect(unknown.isError).toBe(true);
    expect(unknown.content[0]!.text).toContain('the workspace has no domain named nowhere.example');
  });

  it("answers a refusal as a tool error with the Problem: its words in a line, then the Problem's JSON", async () => {
    const { call, logged } = await connect();
    const refused = await send(call, { from: 'x@unverified.example', to: 'a@example.org' });
    expect(refused.isError).toBe(true);
    expect(refused.content[0]!.text).toMatch(/^send_email: .*unverified\.example is not a verified domain/);
    const problem = JSON.parse(refused.content[1]!.text).error;
    expect(problem).toMatchObject({ code: 'domain_not_verified', status: 422 });
    expect(problem.request_id).toMatch(/^req_/);

    const missing = await call('get_message', { id: `eml_${'0'.repeat(24)}` });
    expect(missing.isError).toBe(true);
    expect(missing.content[0]!.text).toContain('No caught message has this id');
    expect(JSON.parse(missing.content[1]!.text).error.code).toBe('not_found');
    expect(logged).toEqual(['send_email', 'get_message']);

    // Input the schema refuses is a tool error too (the SDK's own), not a protocol error.
    const invalid = await call('list_messages', { limit: 1000 });
    expect(invalid.isError).toBe(true);
    expect(invalid.content[0]!.text).toMatch(/limit/);
    const unknownField = await send(call, { to: 'a@example.org', priority: 'high' });
    expect(unknownField.isError).toBe(true);
  });

  it('says what is missing when the server cannot be reached or no credential is given', async () => {
    const down = await connect({ SVC_BASE_URL: 'http://127.0.0.1:9/v1' });
    const r = await down.call('list_messages');
    expect(r.isError).toBe(true);
    expect(r.content[0]!.text).toMatch(/^list_messages: could not reach http:\/\/127\.0\.0\.1:9\/v1/);
    // Not the service's Problem: the line says it all.
    expect(r.content).toHaveLength(1);

    const keyless = await connect({ SVC_API_KEY: '' });
    const send = await keyless.call('send_email', { from: 'a@example.test', to: 'b@example.org', text: 'x' });
    expect(send.isError).toBe(true);
    expect(JSON.parse(send.content[1]!.text).error.code).toBe('missing_credentials');
  });
});
