// The generated parts of docs/ (openapi.json, errors.md, commands.md) are committed; this regenerates them into a
// temporary directory from the built package and fails when the committed copies differ from the code. And what the
// hand-written docs say that the code decides: the tools of `svc mcp`, the package's name.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ensureBuilt, ROOT } from './helpers/binary.js';
import { headingSlugs } from './helpers/markdown.js';

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

  it('shows in docs/testing.md the example test CI runs from the packed package (examples/testing/welcome.test.mjs)', () => {
    const doc = readFileSync(join(ROOT, 'docs', 'testing.md'), 'utf8');
    const block = /<!-- testing-example -->\n```js\n([\s\S]*?)```\n/.exec(doc)?.[1];
    expect(block, 'docs/testing.md has a ```js block after <!-- testing-example -->').toBeDefined();
    expect(block).toBe(readFileSync(join(ROOT, 'examples', 'testing', 'welcome.test.mjs'), 'utf8'));
  });
});

describe('README.md', () => {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');

  it('is short enough for a newcomer to read', () => {
    expect(readme.split('\n').length).toBeLessThanOrEqual(150);
  });

  it('names only commands and flags that exist (as docs/commands.md has them)', () => {
    const sections = commandSections(readFileSync(join(ROOT, 'docs', 'commands.md'), 'utf8'));
    const shell = [...readme.matchAll(/```sh\n([\s\S]*?)```/g)].flatMap((m) => m[1]!.split('\n'));
    const inline = [...readme.matchAll(/`([^`\n]+)`/g)].map((m) => m[1]!);
    const uses = [...shell, ...inline].flatMap((text) =>
      [...text.replace(/#.*$/, '').matchAll(/(?:^|[\s($])svc ((?:[a-z][\w-]* ?)+)((?:[^|;&)]*)?)/g)].map((m) => ({
        text,
        words: m[1]!.trim().split(' '),
        rest: m[2] ?? '',
      })),
    );
    expect(uses.length).toBeGreaterThan(10);
    for (const use of uses) {
      // The longest run of words that names a command: `svc emails send --to …` is `svc emails send`.
      let name = '';
      for (let n = use.words.length; n > 0 && !name; n--) {
        const candidate = `svc ${use.words.slice(0, n).join(' ')}`;
        if (sections.has(candidate)) name = candidate;
      }
      expect(name, `the README runs \`${use.text}\`, which names no command`).not.toBe('');
      const help = sections.get(name)!;
      for (const flag of `${use.words.join(' ')} ${use.rest}`.match(/--[a-z][\w-]*/g) ?? []) {
        expect(help, `the README gives ${flag} to \`${name}\`, which has no such option`).toMatch(
          new RegExp(`${flag}(?![\\w-])`),
        );
      }
    }
  });

  it('links only to files and headings that exist', () => {
    const links = [...readme.matchAll(/\]\(([^)\s]+)\)/g)].map((m) => m[1]!).filter((l) => !/^[a-z]+:/.test(l));
    expect(links.length).toBeGreaterThan(5);
    for (const link of links) {
      const [file, anchor] = link.split('#') as [string, string | undefined];
      const text = readFileSync(join(ROOT, file), 'utf8');
      if (anchor) expect(headingSlugs(text), `${link}: no such heading`).toContain(anchor);
    }
  });
});

/** docs/commands.md's `## svc …` sections, by command: each one's `--help`. */
function commandSections(doc: string): Map<string, string> {
  const sections = new Map<string, string>();
  for (const part of doc.split(/^## /m).slice(1)) {
    const newline = part.indexOf('\n');
    sections.set(part.slice(0, newline).trim(), part.slice(newline));
  }
  return sections;
}

describe('svc mcp in the docs', () => {
  it("lists every tool of the code's table wherever the docs list them, and no other", async () => {
    const { tools } = await import('../src/cli/mcp/tools.js');
    const names = tools()
      .map((t) => t.name)
      .sort();
    expect(names.length).toBeGreaterThan(5);
    const listed = (text: string) => [...new Set(text.match(/\b[a-z]+(?:_[a-z]+)+\b/g) ?? [])].sort();
    const read = (name: string) => readFileSync(join(ROOT, 'docs', name), 'utf8');
    // command-line.md's sentence, testing.md's table of tools, and the --help of `svc mcp` (commands.md).
    const sentence = /Its tools are ([\s\S]*?); what each takes/.exec(read('command-line.md'))?.[1];
    const table = /Its tools:\n\n\| tool [\s\S]*?\n\n/.exec(read('testing.md'))?.[0];
    const help = /\nTools: ([\s\S]*?)\. The server/.exec(read('commands.md'))?.[1];
    for (const [where, text] of Object.entries({ 'command-line.md': sentence, 'testing.md': table, help })) {
      expect(text, `${where} lists the tools`).toBeDefined();
      const found =
        where === 'testing.md' ? [...text!.matchAll(/^\| `([a-z_]+)` \|/gm)].map((m) => m[1]!).sort() : listed(text!);
      expect(found, `the tools ${where} lists`).toEqual(names);
    }
  });
});

describe('the package in the docs', () => {
  it('is imported as svc-mail (svc is its command)', () => {
    const pages = ['README.md', ...readdirSync(join(ROOT, 'docs')).map((f) => `docs/${f}`)].filter((f) =>
      f.endsWith('.md'),
    );
    const wrong = pages.flatMap((page) =>
      [...readFileSync(join(ROOT, page), 'utf8').matchAll(/(?:from|of) [`'"]svc(?:\/[\w-]+)?[`'"]/g)].map(
        (m) => `${page}: ${m[0]}`,
      ),
    );
    expect(wrong).toEqual([]);
  });
});
