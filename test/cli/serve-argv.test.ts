// argv → flags for what `svc serve` gained (--reset, --yes), through the real commander tree, and the usage errors
// (exit 2) that stop it before anything is touched.
import { describe, expect, it } from 'vitest';
import { buildProgram } from '../../src/cli/program.js';
import { parse } from './helpers.js';

describe('svc serve argv', () => {
  it('takes --reset and --yes', async () => {
    const program = await buildProgram({ runner: async () => {} });
    let flags: { reset?: boolean; yes?: boolean; dataDir?: string } = {};
    program.commands.find((c) => c.name() === 'serve')!.action((f: typeof flags) => void (flags = f));
    await program.parseAsync(['node', 'svc', 'serve', '--data-dir', '/tmp/x', '--reset', '--yes']);
    expect(flags).toMatchObject({ reset: true, yes: true, dataDir: '/tmp/x' });
    const tree = ((await parse('completion', 'bash')).opts as { tree: { path: string; options: { flag: string }[] }[] }).tree;
    expect(tree.find((t) => t.path === 'serve')!.options.map((o) => o.flag)).toEqual(expect.arrayContaining(['--reset', '--yes']));
  });

  it.each([
    [['serve', '--yes'], /--yes goes with --reset/],
    [['serve', '--reset', '--yes', '--memory'], /--reset empties a data directory; with --memory nothing is kept to reset/],
  ])('svc %j is a usage error (exit 2)', async (argv, message) => {
    const r = await parse(...argv);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(message);
  });
});
