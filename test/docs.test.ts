// The generated parts of docs/ (openapi.json, errors.md, commands.md) are committed; this regenerates them into a
// temporary directory from the built package and fails when the committed copies differ from the code.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ensureBuilt, ROOT } from './helpers/binary.js';

const GENERATED = ['openapi.json', 'errors.md', 'commands.md'];

describe('docs/', () => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-docs-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('holds the generated files as the code generates them', { timeout: 180_000 }, () => {
    ensureBuilt();
    execFileSync(process.execPath, [join(ROOT, 'scripts', 'docs.mjs'), dir], { cwd: ROOT, stdio: 'pipe' });
    for (const name of GENERATED) {
      const fresh = readFileSync(join(dir, name), 'utf8');
      let committed = '';
      try {
        committed = readFileSync(join(ROOT, 'docs', name), 'utf8');
      } catch {
        // missing: reported below as a difference
      }
      expect(
        committed,
        `docs/${name} is out of date: run \`npm run build && npm run docs\` and commit the result`,
      ).toBe(fresh);
    }
  });

  it('shows in the README the example test CI runs from the packed package (examples/testing/welcome.test.mjs)', () => {
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
    const block = /<!-- testing-example -->\n```js\n([\s\S]*?)```\n/.exec(readme)?.[1];
    expect(block, 'the README has a ```js block after <!-- testing-example -->').toBeDefined();
    expect(block).toBe(readFileSync(join(ROOT, 'examples', 'testing', 'welcome.test.mjs'), 'utf8'));
  });
});
