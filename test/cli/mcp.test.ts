// `svc mcp` as an agent runs it: the built binary spawned by the MCP SDK's own client (StdioClientTransport), against
// `svc serve` run as a process of its own (--memory, manual clock), finding the server, key and admin token in its
// environment as every command does. Every tool once, a refusal as a tool error, nothing but protocol on stdout, and
// the process ending by itself (exit 0) when the client closes its stdin, or at SIGTERM or SIGINT.
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  BIN,
  clientEnv,
  ensureBuilt,
  killAll,
  ROOT,
  serve,
  stop,
  within,
  type Exit,
  type Served,
} from '../helpers/binary.js';

type Result = { content: { type: string; text: string }[]; structuredContent?: any; isError?: boolean };

const TOOLS = [
  'send_email',
  'list_messages',
  'get_message',
  'check_message',
  'release_message',
  'wait_for_message',
  'list_events',
  'advance_clock',
  'publish_domain_records',
  'set_chaos',
];

describe('svc mcp, the built binary on stdio', () => {
  let served: Served;
  const dirs: string[] = [];
  const sessions: { client: Client; proc: ChildProcess }[] = [];
  beforeAll(async () => {
    ensureBuilt();
    served = await serve(['--memory', '--clock', 'manual']);
  }, 120_000);
  afterAll(async () => {
    for (const s of sessions) s.proc.kill('SIGKILL');
    if (served) await stop(served);
    killAll();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  /** `svc mcp` spawned by the SDK's client, with only the environment given (no SVC_* of the machine). */
  async function start() {
    const home = mkdtempSync(join(tmpdir(), 'svc-mcp-'));
    dirs.push(home);
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [BIN, 'mcp'],
      cwd: ROOT,
      stderr: 'pipe',
      env: clientEnv(home, served),
    });
    let stderr = '';
    transport.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
    const client = new Client({ name: 'svc-test', version: '0.0.0' });
    // A line on stdout that is not a protocol message comes here (the transport fails to parse it).
    const errors: Error[] = [];
    client.onerror = (err) => errors.push(err);
    await client.connect(transport);
    // The transport keeps its child to itself; its exit code is what this test is about.
    const proc = (transport as unknown as { _process: ChildProcess })._process;
    const exited = new Promise<Exit>((resolve) => {
      if (proc.exitCode !== null || proc.signalCode !== null)
        resolve({ code: proc.exitCode, signal: proc.signalCode as NodeJS.Signals | null });
      else proc.once('exit', (code, signal) => resolve({ code, signal }));
    });
    sessions.push({ client, proc });
    const call = async (name: string, args: Record<string, unknown> = {}) =>
      (await client.callTool({ name, arguments: args })) as Result;
    return { client, transport, proc, exited, call, errors, stderr: () => stderr };
  }
  const json = (r: Result) => JSON.parse(r.content[0]!.text);

  it('serves every tool: send, wait for the code, the clock, events, DNS, and refusals as tool errors', async () => {
    const { client, call, errors, exited, stderr } = await start();

    const listed = (await client.listTools()).tools;
    expect(listed.map((t) => t.name)).toEqual(TOOLS);
    for (const t of listed) {
      expect(t.description, t.name).toBeTruthy();
      expect(t.inputSchema.type, t.name).toBe('object');
    }
    const props = (name: string) => Object.keys(listed.find((t) => t.name === name)!.inputSchema.properties ?? {});
    expect(props('send_email')).toEqual(expect.arrayContaining(['from', 'to', 'subject', 'text', 'idempotency_key']));
    expect(props('wait_for_message')).toEqual(expect.arrayContaining(['to', 'subject', 'timeout_ms', 'extract']));
    expect(props('list_events')).toEqual(['type', 'limit', 'after']);
    expect(props('advance_clock')).toEqual(['duration']);

    // Send, then wait: the code of the text sent, although the mail was caught before the wait began.
    const sent = await call('send_email', {
      from: 'Shop <orders@example.test>',
      to: 'ada@example.org',
      subject: 'Your sign-in code',
      text: 'Your code is 482913. It expires in 10 minutes.',
      idempotency_key: 'signin-1',
    });
    expect(sent.isError, sent.content[0]?.text).toBeFalsy();
    expect(sent.structuredContent).toMatchObject({ id: expect.stringMatching(/^msg_/), status: 'queued' });
    const waited = await call('wait_for_message', { to: 'ada@example.org', extract: 'code', timeout_ms: 10_000 });
    expect(waited.isError, waited.content[0]?.text).toBeFalsy();
    expect(json(waited)).toMatchObject({
      code: '482913',
      message: { subject: 'Your sign-in code', message_id: sent.structuredContent.id, codes: ['482913'] },
    });

    // A send scheduled an hour ahead is caught once the clock has moved two.
    const later = new Date(Date.parse(sent.structuredContent.created_at) + 3_600_000).toISOString();
    const scheduled = await call('send_email', {
      from: 'orders@example.test',
      to: 'reminder@example.org',
      subject: 'Reminder',
      text: 'Your cart misses you.',
      scheduled_at: later,
    });
    expect(scheduled.structuredContent.status).toBe('scheduled');
    expect(json(await call('list_messages', { to: 'reminder@example.org' })).data).toEqual([]);
    const moved = await call('advance_clock', { duration: '2h' });
    expect(moved.isError, moved.content[0]?.text).toBeFalsy();
    expect(Date.parse(moved.structuredContent.now)).toBeGreaterThan(Date.parse(later));
    expect(moved.structuredContent.ran).toBeGreaterThanOrEqual(1);
    const caught = json(await call('list_messages', { to: 'reminder@example.org' })).data;
    expect(caught.map((m: { subject: string }) => m.subject)).toEqual(['Reminder']);
    const read = await call('get_message', { id: caught[0].id });
    expect(json(read)).toMatchObject({ subject: 'Reminder', text: expect.stringContaining('Your cart misses you.') });

    const delivered = await call('list_events', { type: 'email.delivered', limit: 100 });
    expect(delivered.isError, delivered.content[0]?.text).toBeFalsy();
    const ids = delivered.structuredContent.data.map((e: { data: { message_id: string } }) => e.data.message_id);
    expect(ids).toEqual(expect.arrayContaining([sent.structuredContent.id, scheduled.structuredContent.id]));
    expect(delivered.structuredContent.data.every((e: { type: string }) => e.type === 'email.delivered')).toBe(true);

    const published = await call('publish_domain_records', { domain: 'example.test' });
    expect(published.isError, published.content[0]?.text).toBeFalsy();
    expect(published.structuredContent.domain_id).toBe(served.ready.seed!.domain_id);
    expect(published.structuredContent.records.length).toBeGreaterThan(0);

    // Chaos on purpose: the next send is refused with the rule's status, then the rules are cleared.
    const chaos = await call('set_chaos', {
      rules: [{ match: { method: 'POST', path: '/v1/emails' }, action: { status: 409 }, times: 1 }],
      seed: 7,
    });
    expect(chaos.isError, chaos.content[0]?.text).toBeFalsy();
    expect(chaos.structuredContent).toMatchObject({ seed: 7, rules: [{ remaining: 1 }] });
    const failed = await call('send_email', { from: 'orders@example.test', to: 'chaos@example.org', text: 'x' });
    expect(failed.isError).toBe(true);
    expect(failed.content[0]!.text).toContain('chaos rule 0 answered this request with 409');
    expect(json(await call('set_chaos', { rules: [] })).rules).toEqual([]);
    const invalid = await call('set_chaos', { rules: [{ match: { smtp: 'rcpt' }, action: { status: 503 } }] });
    expect(invalid.isError).toBe(true);

    // Refusals: tool errors with the Problem's words (and the Problem), never protocol errors or a crash.
    const refused = await call('send_email', { from: 'hi@unverified.example', to: 'ada@example.org', text: 'x' });
    expect(refused.isError).toBe(true);
    expect(refused.content[0]!.text).toContain('unverified.example is not a verified domain');
    expect(JSON.parse(refused.content[1]!.text).error.code).toBe('domain_not_verified');
    const unknown = await call('get_message', { id: `eml_${'0'.repeat(24)}` });
    expect(unknown.isError).toBe(true);
    expect(unknown.content[0]!.text).toContain('No caught message has this id');
    // Still serving after them.
    expect((await call('list_messages', { limit: 1 })).isError).toBeFalsy();

    expect(errors).toEqual([]);
    expect(stderr()).toContain('svc mcp: serving the Model Context Protocol on stdio');
    expect(stderr()).toContain('get_message: Not found');
    await client.close();
    expect(await within(5_000, exited, 'svc mcp exit')).toEqual({ code: 0, signal: null });
  });

  it('says how long a wait that found nothing waited, to the tenth of a second', async () => {
    const { client, call } = await start();
    const r = await call('wait_for_message', { to: 'nobody-soon@example.org', timeout_ms: 1500 });
    expect(r.isError).toBe(true);
    expect(r.content[0]!.text).toMatch(
      /^wait_for_message: no message to nobody-soon@example\.org was caught within 1\.5s /,
    );
    await client.close();
  });

  it('ends by itself, exit 0, when the client closes its stdin', async () => {
    const { transport, exited, stderr } = await start();
    await transport.close();
    // It says it ended because stdin closed (the transport would otherwise send SIGTERM after 2 s).
    expect(await within(5_000, exited, 'svc mcp exit')).toEqual({ code: 0, signal: null });
    expect(stderr()).toContain('stdin closed');
  });

  it.each(['SIGTERM', 'SIGINT'] as const)('ends with exit 0 at %s, in the middle of a wait', async (signal) => {
    const { proc, client, exited, stderr } = await start();
    let told!: () => void;
    const waitingNow = new Promise<void>((resolve) => (told = resolve));
    const waiting = client
      .callTool({ name: 'wait_for_message', arguments: { to: 'nobody@example.org', timeout_ms: 60_000 } }, undefined, {
        onprogress: () => told(),
      })
      .catch((err: Error) => err);
    // The wait says (MCP progress) once it waits on the inbox stream: the signal comes in the middle of it.
    await within(10_000, waitingNow, 'the wait under way');
    proc.kill(signal);
    expect(await within(5_000, exited, 'svc mcp exit')).toEqual({ code: 0, signal: null });
    expect(stderr()).toContain('interrupted');
    await waiting;
  });
});
