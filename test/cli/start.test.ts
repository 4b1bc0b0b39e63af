// Fast start, as a property of the source: what each entry point loads before any code runs (its static imports,
// followed through the tree). `svc --version` must load no more than commander and the wiring; a client command may
// load the client but never the server, SQLite, the SMTP stack, undici, or the native keyring before a secret is needed.
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/binary.js';

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
  it('loads only commander and the commands\' wiring for `svc --version` and `--help`', () => {
    const { files, packages } = staticGraph('src/main.ts');
    expect([...packages]).toEqual(['commander']);
    const loaded = [...files];
    expect(loaded.filter((f) => /^src\/(server|client|contract)\//.test(f))).toEqual([]);
    expect(loaded).toContain('src/cli/commands/emails/send.ts');
  });

  it('loads the client, the contract and zod for a client command — not undici — and nothing of the server', () => {
    const { files, packages } = staticGraph('src/cli/context.ts');
    const client = staticGraph('src/client/index.ts');
    const all = new Set([...packages, ...client.packages]);
    expect([...all].sort()).toEqual(['zod']);
    expect([...files, ...client.files].filter((f) => f.startsWith('src/server/'))).toEqual([]);
    // conf, the keyring, chalk, ora, cli-table3 and the prompts come with import() when a command needs them.
    const lazy = readFileSync(join(ROOT, 'src/cli/credentials.ts'), 'utf8') + readFileSync(join(ROOT, 'src/cli/config.ts'), 'utf8');
    expect(lazy).toContain("import('@napi-rs/keyring')");
    expect(lazy).toContain("import('conf')");
  });

  it('keeps the public library entry free of the command line and the server', () => {
    const { files, packages } = staticGraph('src/index.ts');
    expect([...packages].sort()).toEqual(['zod']);
    expect([...files].filter((f) => /^src\/(server|cli)\//.test(f))).toEqual([]);
  });
});
