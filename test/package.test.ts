// The package as npm packs it: every relative link of every Markdown file it ships leads to a file it ships (and to a
// heading there, when it names one). And the size `npm run test:package` reports of a fresh install of it
// (scripts/installed-size.mjs): what it counts, and the limit that fails it.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, posix } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ROOT } from './helpers/binary.js';
import { headingSlugs, relativeLinks } from './helpers/markdown.js';

describe('the packed package', () => {
  it('links, from every Markdown file it ships, only to files and headings it ships', { timeout: 60_000 }, () => {
    // What `npm pack` puts in the tarball (package.json's `files`, and README.md), without building first.
    const [pack] = JSON.parse(
      execFileSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: ROOT, encoding: 'utf8' }),
    ) as [{ files: { path: string }[] }];
    const shipped = new Set(pack.files.map((f) => f.path));
    const docs = [...shipped].filter((f) => f.endsWith('.md'));
    expect(docs).toEqual(expect.arrayContaining(['README.md', 'docs/testing.md', 'docs/checks.md']));
    const broken: string[] = [];
    for (const doc of docs) {
      for (const link of relativeLinks(readFileSync(join(ROOT, doc), 'utf8'))) {
        const [path = '', anchor] = link.split('#');
        const target = path ? posix.normalize(posix.join(posix.dirname(doc), decodeURI(path))) : doc;
        if (!shipped.has(target)) broken.push(`${doc} links to ${link}, which the package does not hold`);
        else if (anchor && target.endsWith('.md')) {
          if (!headingSlugs(readFileSync(join(ROOT, target), 'utf8')).includes(anchor))
            broken.push(`${doc} links to ${link}: ${target} has no such heading`);
        }
      }
    }
    expect(broken).toEqual([]);
  });
});

describe('the installed size (scripts/installed-size.mjs)', () => {
  // A node_modules as npm lays one out: packages, a scoped one, one nested in another, .bin and npm's own file.
  const dir = mkdtempSync(join(tmpdir(), 'svc-installed-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const modules = join(dir, 'node_modules');
  const pkg = (path: string, bytes: number) => {
    mkdirSync(join(modules, path), { recursive: true });
    writeFileSync(join(modules, path, 'package.json'), '{}');
    writeFileSync(join(modules, path, 'index.js'), Buffer.alloc(bytes, 'x'));
  };
  pkg('big', 1_500_000);
  pkg('@scope/small', 400_000);
  pkg('big/node_modules/nested', 200_000);
  mkdirSync(join(modules, '.bin'));
  symlinkSync('../big/index.js', join(modules, '.bin', 'big'));
  writeFileSync(join(modules, '.package-lock.json'), '{}');
  const measure = (limitMb: number) =>
    spawnSync(process.execPath, [join(ROOT, 'scripts', 'installed-size.mjs'), modules, String(limitMb)], {
      encoding: 'utf8',
    });

  it('prints the bytes installed, the packages, and the largest, each without the packages nested in it', () => {
    const r = measure(3);
    expect(r.status).toBe(0);
    expect(r.stdout.split('\n')).toEqual([
      'installed: 2.1 MB in 3 packages (limit 3 MB)',
      'the ten largest:',
      '    1.5 MB  big',
      '    0.4 MB  @scope/small',
      '    0.2 MB  big/node_modules/nested',
      '',
    ]);
  });

  it('fails above its limit, saying so', () => {
    const r = measure(2);
    expect(r.status).toBe(1);
    expect(r.stdout).toContain('installed: 2.1 MB in 3 packages (limit 2 MB)');
    expect(r.stderr.trim()).toBe('the install is 2.1 MB, over the limit of 2 MB');
  });
});
