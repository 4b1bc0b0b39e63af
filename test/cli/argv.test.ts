// argv → options for every command, through the real commander tree: what each flag becomes, and the usage errors
// (exit 2) a person gets for a wrong call, before anything is sent.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { buildProgram } from '../../src/cli/program.js';
import { VERSION } from '../../src/lib/version.js';
import { parse } from './helpers.js';

describe('svc argv', () => {
  it('prints the package version', async () => {
    const r = await parse('--version');
    expect(r.code).toBe(0);
    expect(r.stdout.trim()).toBe(VERSION);
    expect(VERSION).toBe(JSON.parse(readFileSync('package.json', 'utf8')).version);
  });

  it('takes the global options before or after the command', async () => {
    const r = await parse(
      '--profile',
      'staging',
      'keys',
      'list',
      '--json',
      '--base-url',
      'https://api.example.com/v1',
      '--retries',
      '5',
    );
    expect(r).toMatchObject({ code: 0, command: 'keys list', opts: { limit: undefined, after: undefined } });
    expect(r.globals).toMatchObject({
      profile: 'staging',
      json: true,
      baseUrl: 'https://api.example.com/v1',
      retries: 5,
    });
    expect((await parse('keys', 'list')).globals?.retries).toBe(3);
    const eq = await parse('--base-url=https://api.example.com/v1', '--admin-token', 'adm_x', 'inbox', '--limit', '5');
    expect(eq).toMatchObject({ code: 0, command: 'inbox list', opts: { limit: 5 } });
    expect(eq.globals).toMatchObject({ baseUrl: 'https://api.example.com/v1', adminToken: 'adm_x' });
  });

  it("lists every command in the root's help", async () => {
    const r = await parse('--help');
    expect(r.code).toBe(0);
    const listed = [...r.stdout.matchAll(/^ {2}([a-z-]+)\b/gm)].map((m) => m[1]);
    expect(listed).toEqual(
      expect.arrayContaining([
        'signup',
        'login',
        'logout',
        'whoami',
        'verify-email',
        'sessions',
        'keys',
        'domains',
        'emails',
        'events',
        'webhooks',
        'inbox',
        'sandbox',
        'mcp',
        'doctor',
        'completion',
        'serve',
      ]),
    );
  });

  it.each([
    [
      ['signup', '--email', 'a@example.com', '--workspace', 'Acme', '--invite-code', 'c0de', '--password-stdin'],
      'signup',
      { email: 'a@example.com', workspace: 'Acme', inviteCode: 'c0de', passwordStdin: true },
    ],
    [
      ['login', '--email', 'a@example.com', '--workspace', 'acme', '--password-stdin'],
      'login',
      { email: 'a@example.com', workspace: 'acme', passwordStdin: true },
    ],
    [['login'], 'login', { email: undefined, workspace: undefined, passwordStdin: undefined }],
    [['logout'], 'logout', {}],
    [['whoami'], 'whoami', {}],
    [['verify-email', 'tok123'], 'verify-email', { token: 'tok123', resend: undefined }],
    [['verify-email', '--resend'], 'verify-email', { token: undefined, resend: true }],
    [['sessions', 'revoke-all'], 'sessions revoke-all', {}],
    [
      [
        'keys',
        'create',
        '--name',
        'ci',
        '--scope',
        'emails:send,emails:read',
        '--scope',
        'domains:read',
        '--mode',
        'live',
        '--domain',
        'dom_1',
        '--allow-ip',
        '10.0.0.0/8',
        '--allow-ip',
        '::1',
        '--expires-at',
        '2030-01-01T00:00:00Z',
        '--save',
      ],
      'keys create',
      {
        name: 'ci',
        scopes: ['emails:send', 'emails:read', 'domains:read'],
        mode: 'live',
        domain: 'dom_1',
        allowIps: ['10.0.0.0/8', '::1'],
        expiresAt: '2030-01-01T00:00:00Z',
        save: true,
      },
    ],
    [['keys', 'list', '--limit', '5', '--after', 'key_1'], 'keys list', { limit: 5, after: 'key_1' }],
    [['keys', 'revoke', 'key_1'], 'keys revoke', { id: 'key_1' }],
    [
      ['domains', 'add', 'example.com', '--purpose', 'sending,mailbox'],
      'domains add',
      { name: 'example.com', purpose: ['sending', 'mailbox'] },
    ],
    [['domains', 'list'], 'domains list', { limit: undefined, after: undefined }],
    [['domains', 'get', 'example.com'], 'domains get', { domain: 'example.com' }],
    [['domains', 'dns', 'dom_1'], 'domains dns', { domain: 'dom_1' }],
    [
      ['domains', 'update', 'dom_1', '--tracking-host', 'links.example.com'],
      'domains update',
      { domain: 'dom_1', trackingHost: 'links.example.com' },
    ],
    [['domains', 'delete', 'dom_1'], 'domains delete', { domain: 'dom_1' }],
    [['domains', 'verify', 'dom_1'], 'domains verify', { domain: 'dom_1', wait: undefined, timeout: undefined }],
    [
      ['domains', 'verify', 'dom_1', '--wait', '--timeout', '2m'],
      'domains verify',
      { domain: 'dom_1', wait: true, timeout: 120_000 },
    ],
    [
      ['domains', 'verify', 'dom_1', '--wait', '--timeout', '90'],
      'domains verify',
      { domain: 'dom_1', wait: true, timeout: 90_000 },
    ],
    [
      [
        'emails',
        'send',
        '--from',
        'Shop <o@example.com>',
        '--to',
        'a@example.org',
        '--to',
        'b@example.org',
        '--cc',
        'c@example.org',
        '--bcc',
        'd@example.org',
        '--reply-to',
        'r@example.com',
        '--subject',
        'Hi',
        '--text',
        'hello',
        '--html-file',
        '-',
        '--attach',
        'a.pdf',
        '--attach',
        'https://cdn.example.com/b.png',
        '--tag',
        'order=10=42',
        '--tag',
        'kind=receipt',
        '--header',
        'X-Order: 1042',
        '--header',
        'X-Trace:abc',
        '--scheduled-at',
        '2026-09-01T09:00:00+02:00',
        '--idempotency-key',
        'k-1',
      ],
      'emails send',
      {
        from: 'Shop <o@example.com>',
        to: ['a@example.org', 'b@example.org'],
        cc: ['c@example.org'],
        bcc: ['d@example.org'],
        replyTo: ['r@example.com'],
        subject: 'Hi',
        text: 'hello',
        htmlFile: '-',
        attach: ['a.pdf', 'https://cdn.example.com/b.png'],
        tags: [
          { name: 'order', value: '10=42' },
          { name: 'kind', value: 'receipt' },
        ],
        headers: { 'X-Order': '1042', 'X-Trace': 'abc' },
        scheduledAt: '2026-09-01T09:00:00+02:00',
        idempotencyKey: 'k-1',
      },
    ],
    [
      ['emails', 'batch', 'mails.json', '--idempotency-key', 'b-1'],
      'emails batch',
      { file: 'mails.json', idempotencyKey: 'b-1' },
    ],
    [['emails', 'get', 'msg_1'], 'emails get', { id: 'msg_1' }],
    [['emails', 'cancel', 'msg_1'], 'emails cancel', { id: 'msg_1' }],
    [['doctor'], 'doctor', {}],
    [['mcp'], 'mcp', {}],
    [['--base-url', 'http://127.0.0.1:4610/v1', 'mcp'], 'mcp', {}],
  ])('svc %j', async (argv, command, opts) => {
    const r = await parse(...argv);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.command).toBe(command);
    expect(r.opts).toEqual(opts);
  });

  it('hands --json on to `svc serve` (its JSON logs), wherever it is written', async () => {
    for (const argv of [
      ['serve', '--json', '--memory'],
      ['--json', 'serve', '--memory'],
      ['serve', '--memory'],
    ]) {
      const program = await buildProgram({ runner: async () => {} });
      let flags: { json?: boolean; memory?: boolean } = {};
      program.commands.find((c) => c.name() === 'serve')!.action((f: typeof flags) => void (flags = f));
      await program.parseAsync(['node', 'svc', ...argv]);
      expect(flags.memory, argv.join(' ')).toBe(true);
      expect(flags.json, argv.join(' ')).toBe(argv.includes('--json') ? true : undefined);
    }
  });

  it('gives the completion command the whole tree', async () => {
    const r = await parse('completion', 'fish');
    expect(r.command).toBe('completion');
    const { shell, tree } = r.opts as { shell: string; tree: { path: string; options: { flag: string }[] }[] };
    expect(shell).toBe('fish');
    expect(tree.map((t) => t.path)).toEqual(
      expect.arrayContaining(['', 'keys', 'keys create', 'domains verify', 'emails send', 'serve']),
    );
    expect(tree.find((t) => t.path === 'emails send')!.options.map((o) => o.flag)).toEqual(
      expect.arrayContaining(['--html-file', '--profile']),
    );
  });

  it.each([
    [['keys', 'create', '--scope', 'emails:send'], /required option '--name <name>' not specified/],
    [['keys', 'create', '--name', 'ci'], /give at least one --scope/],
    [
      ['keys', 'create', '--name', 'ci', '--scope', 'emails:send', '--expires-at', 'tomorrow'],
      /--expires-at takes an ISO 8601 time/,
    ],
    [['keys', 'list', '--limit', '0'], /--limit must be a whole number from 1 to 100/],
    [['keys', 'list', '--limit', '101'], /--limit must be a whole number from 1 to 100/],
    [['keys', 'revoke'], /missing required argument 'id'/],
    [['keys', 'rotate'], /unknown command 'rotate'/],
    [['bogus'], /unknown command 'bogus'/],
    [['--retries', '11', 'keys', 'list'], /--retries must be a whole number from 0 to 10/],
    [['verify-email'], /give the TOKEN from the email, or --resend/],
    [['verify-email', 'tok', '--resend'], /give the TOKEN from the email, or --resend/],
    [['domains', 'verify', 'dom_1', '--timeout', '5m'], /--timeout goes with --wait/],
    [['domains', 'verify', 'dom_1', '--wait', '--timeout', 'soon'], /--timeout takes seconds or a duration/],
    [['domains', 'update', 'dom_1'], /nothing to change/],
    [['emails', 'send', '--to', 'a@example.org', '--text', 'x'], /required option '--from <address>' not specified/],
    [['emails', 'send', '--from', 'o@example.com', '--text', 'x'], /required option '--to <address>' not specified/],
    [
      ['emails', 'send', '--from', 'o@example.com', '--to', 'a@example.org', '--text', 'x', '--text-file', 'b.txt'],
      /cannot be used with option/,
    ],
    [
      ['emails', 'send', '--from', 'o@example.com', '--to', 'a@example.org', '--text-file', '-', '--html-file', '-'],
      /stdin can hold one body/,
    ],
    [
      ['emails', 'send', '--from', 'o@example.com', '--to', 'a@example.org', '--tag', 'order'],
      /--tag takes NAME=VALUE/,
    ],
    [
      ['emails', 'send', '--from', 'o@example.com', '--to', 'a@example.org', '--header', 'X-Order'],
      /--header takes 'Name: value'/,
    ],
    [
      ['emails', 'send', '--from', 'o@example.com', '--to', 'a@example.org', '--scheduled-at', '2026-09-01 09:00'],
      /ISO 8601/,
    ],
    [['emails', 'batch'], /missing required argument 'file'/],
    [['completion', 'powershell'], /'powershell' is invalid for argument 'shell'/],
  ])('svc %j is a usage error (exit 2)', async (argv, message) => {
    const r = await parse(...argv);
    expect(r.code).toBe(2);
    expect(r.command).toBeUndefined();
    expect(r.stderr).toMatch(message);
  });

  it("ends every command's --help with an example", async () => {
    const tree = ((await parse('completion', 'bash')).opts as { tree: { path: string }[] }).tree;
    expect(tree.length).toBeGreaterThan(25);
    for (const { path } of tree) {
      const r = await parse(...(path ? path.split(' ') : []), '--help');
      expect(r.code, path).toBe(0);
      expect(r.stdout, `svc ${path} --help`).toMatch(/\nExamples:\n {2}\$ .*\bsvc /);
    }
  });
});
