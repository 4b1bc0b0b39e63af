// Fast start, as a property of the source and of the built binary. In the source: what each entry point loads before
// any code runs (its static imports, followed through the tree) — `svc --version` no more than commander and the
// root's options; a client command the client, but never the server, SQLite, the SMTP stack, undici, or the native
// keyring before a secret is needed. In the build: which files a run of the shipped `svc` actually loads — the bundle
// and a few of its chunks, nothing resolved in node_modules, nothing of the server.
import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, ensureBuilt, ROOT } from '../helpers/binary.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

/** Every module an entry loads statically: project files (relative to the root) and packages. */
function staticGraph(entry: string): { files: Set<string>; packages: Set<string> } {
  const files = new Set<string>();
  const packages = new Set<string>();
  const visit = (file: string) => {
    const rel = relative(ROOT, file);
    if (files.has(rel)) return;
    files.add(rel);
    const source = readFileSync(file, 'utf8');
    // `import … from 'x'`, `import 'x'`, `export … from 'x'`; not `import type`/`export type`, not `import('x')`.
    for (const m of source.matchAll(/^\s*(?:import|export)\s+(?!type\s)(?:[^'";]*?\sfrom\s*)?['"]([^'"]+)['"]/gm)) {
      const spec = m[1]!;
      if (spec.startsWith('.')) {
        const ts = resolve(dirname(file), spec).replace(/\.js$/, '.ts');
        if (existsSync(ts)) visit(ts);
      } else if (!spec.startsWith('node:')) {
        packages.add(spec.startsWith('@') ? spec.split('/').slice(0, 2).join('/') : spec.split('/')[0]!);
      }
    }
  };
  visit(join(ROOT, entry));
  return { files, packages };
}

describe('what svc loads before it runs', () => {
  it("loads nothing but the version for `svc --version`, only commander and the root's options for any other command: each command's wiring comes when it is named", () => {
    const main = staticGraph('src/main.ts');
    expect([...main.packages]).toEqual([]);
    expect([...main.files].sort()).toEqual(['src/lib/version.ts', 'src/main.ts']);
    expect(readFileSync(join(ROOT, 'src/main.ts'), 'utf8')).toContain("import('./cli/program.js')");
    const { files, packages } = staticGraph('src/cli/program.ts');
    expect([...packages]).toEqual(['commander']);
    expect([...files].filter((f) => /^src\/(server|client|contract|cli\/commands)\//.test(f))).toEqual([]);
  });

  it('loads the client, the contract and zod for a client command — not undici — and nothing of the server', () => {
    const { files, packages } = staticGraph('src/cli/context.ts');
    const client = staticGraph('src/client/index.ts');
    const all = new Set([...packages, ...client.packages]);
    expect([...all].sort()).toEqual(['zod']);
    expect([...files, ...client.files].filter((f) => f.startsWith('src/server/'))).toEqual([]);
    // The keyring, ora, cli-table3, string-width and the prompts come with import() when a command needs them.
    expect(readFileSync(join(ROOT, 'src/cli/credentials.ts'), 'utf8')).toContain("import('@napi-rs/keyring')");
  });

  it('loads the MCP SDK for `svc mcp` alone, and only when it runs: not with its wiring, nor with its tools', () => {
    expect([...staticGraph('src/cli/commands/mcp.ts').packages]).toEqual(['commander']);
    const tools = staticGraph('src/cli/mcp/tools.ts');
    expect([...tools.packages].sort()).toEqual(['commander', 'zod']);
    expect([...tools.files].filter((f) => f.startsWith('src/server/'))).toEqual([]);
    expect([...staticGraph('src/cli/mcp/server.ts').packages]).toContain('@modelcontextprotocol/sdk');
    expect(readFileSync(join(ROOT, 'src/cli/commands/mcp.ts'), 'utf8')).toContain("import('../mcp/server.js')");
  });

  it('keeps the public library entry free of the command line and the server', () => {
    const { files, packages } = staticGraph('src/index.ts');
    expect([...packages].sort()).toEqual(['zod']);
    expect([...files].filter((f) => /^src\/(server|cli)\//.test(f))).toEqual([]);
  });
});

describe('what the built svc loads when it runs', () => {
  let s: TestServer;
  beforeAll(async () => {
    ensureBuilt();
    s = await startTestServer();
  }, 120_000);
  afterAll(() => s?.close());

  // Reports every module the run imports (a resolve hook, on Node's loader thread), as paths from the root. Written
  // with writeSync: the loader thread's process.stderr is a stream that a process exiting at once (svc --version on
  // Node 24) does not wait for.
  const trace = `data:text/javascript,${encodeURIComponent(`
    import { register } from 'node:module';
    register('data:text/javascript,' + encodeURIComponent(\`
      import { writeSync } from 'node:fs';
      export async function resolve(specifier, context, next) {
        const r = await next(specifier, context);
        if (r.url.startsWith('file:')) writeSync(2, 'loaded ' + r.url + '\\\\n');
        return r;
      }\`));`)}`;

  async function loads(
    args: string[],
    env: Record<string, string> = {},
    input = '',
  ): Promise<{ files: Set<string>; stdout: string }> {
    const r = await execa(process.execPath, ['--import', trace, BIN, ...args], {
      cwd: ROOT,
      reject: false,
      input,
      extendEnv: false,
      env: {
        PATH: process.env.PATH!,
        HOME: '/nonexistent',
        SVC_CONFIG_DIR: '/nonexistent/config',
        SVC_BASE_URL: s.api,
        ...env,
      },
    });
    expect(r.exitCode, r.stderr).toBe(0);
    const files = [...r.stderr.matchAll(/^loaded file:\/\/(.+)$/gm)].map((m) =>
      relative(ROOT, decodeURIComponent(m[1]!)),
    );
    return { files: new Set(files), stdout: r.stdout };
  }
  const outsideBundle = (files: Set<string>) =>
    [...files].filter((f) => !f.startsWith('dist/cli/') && f !== 'bin/svc.js');
  const bytes = (files: Set<string>) => [...files].reduce((n, f) => n + statSync(join(ROOT, f)).size, 0);
  /** The files of a run holding the MCP SDK (its server class, kept by name in the bundle). */
  const sdk = (files: Set<string>) =>
    [...files].filter((f) => readFileSync(join(ROOT, f), 'utf8').includes('McpServer'));

  let version: Set<string>;
  it("reads the bundle's root alone for `svc --version`: no command tree, no module of node_modules", async () => {
    const r = await loads(['--version']);
    expect(r.stdout).toMatch(/^\d+\.\d+\.\d+$/);
    version = r.files;
    expect(version).toContain('dist/cli/svc.js');
    expect(outsideBundle(version)).toEqual([]);
    // Not even commander and the root's options: the version alone (src/main.ts).
    expect(bytes(version)).toBeLessThan(10_000);
    expect([...version].some((f) => readFileSync(join(ROOT, f), 'utf8').includes('CommanderError'))).toBe(false);
    expect(sdk(version)).toEqual([]);
  });

  it("sends an email with the bundle's chunks alone: nothing of node_modules (undici, zod) and nothing of the server", async () => {
    const r = await loads(
      [
        'emails',
        'send',
        '--from',
        'orders@example.test',
        '--to',
        'start@example.org',
        '--subject',
        'Start',
        '--text',
        'hi',
      ],
      { SVC_API_KEY: s.seed!.api_key_test },
    );
    expect(r.stdout).toMatch(/^msg_\w+\tqueued$/);
    expect(outsideBundle(r.files)).toEqual([]);
    expect(sdk(r.files)).toEqual([]);
    // The root, then the emails command's wiring, the context and the client with the contract.
    expect([...version].filter((f) => !r.files.has(f))).toEqual([]);
    expect(r.files.size).toBeGreaterThan(version.size + 2);
  });

  it('lists events and caught mail the same way', async () => {
    const events = await loads(['events', 'list', '--limit', '1'], { SVC_API_KEY: s.seed!.api_key_test });
    expect(events.stdout).toMatch(/^evt_/);
    expect(outsideBundle(events.files)).toEqual([]);
    const inbox = await loads(['inbox'], { SVC_ADMIN_TOKEN: s.ready.admin_token });
    expect(outsideBundle(inbox.files)).toEqual([]);
    expect(sdk(inbox.files)).toEqual([]);
  });

  it('runs `svc mcp` with the MCP SDK bundled: its chunk, nothing of node_modules; `svc mcp --help` reads no SDK', async () => {
    const help = await loads(['mcp', '--help']);
    expect(help.stdout).toContain('Usage: svc mcp');
    expect(sdk(help.files)).toEqual([]);
    // stdin closed at once: it starts, serves nothing, and ends.
    const mcp = await loads(['mcp'], { SVC_API_KEY: s.seed!.api_key_test, SVC_ADMIN_TOKEN: s.ready.admin_token });
    expect(mcp.stdout).toBe('');
    expect(outsideBundle(mcp.files)).toEqual([]);
    expect(sdk(mcp.files)).toHaveLength(1);
  });
});
