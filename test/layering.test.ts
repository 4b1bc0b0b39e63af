// The layering rules of .dependency-cruiser.cjs (ARCHITECTURE.md, "Who imports what") each catch what they are for: in
// a copy of src/, one import that breaks each rule is planted (a type-only import where one will do: those count
// too), and dependency-cruiser must name every rule at its plant — and nothing else, so the tree itself keeps them.
import { spawnSync } from 'node:child_process';
import { appendFileSync, cpSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ROOT } from './helpers/binary.js';

/** A breach of one rule: a new file `from` holding `code`, or `code` appended to the existing file `from`. */
interface Plant {
  from: string;
  code: string;
  append?: boolean;
}

const PLANTS: Record<string, Plant[]> = {
  'client-cli-not-server': [
    {
      from: 'src/client/planted.ts',
      code: "import type { Core } from '../server/core/index.js';\nexport type P = Core;\n",
    },
  ],
  'server-not-client': [
    {
      from: 'src/server/dns/planted.ts',
      code: "import type { Client } from '../../client/index.js';\nexport type P = Client;\n",
    },
  ],
  'shared-below-the-sides': [
    {
      from: 'src/contract/planted.ts',
      code: "import type { Client } from '../client/index.js';\nexport type P = Client;\n",
    },
    {
      from: 'src/lib/planted.ts',
      code: "import type { Core } from '../server/core/index.js';\nexport type P = Core;\n",
    },
  ],
  'mcp-sdk-in-svc-mcp-only': [
    {
      from: 'src/cli/planted.ts',
      code: "import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';\nexport type P = McpServer;\n",
    },
  ],
  'core-imports-store-lib-contract': [
    {
      from: 'src/server/core/planted.ts',
      code: "import type { Reply } from '../http/handlers.js';\nexport type P = Reply;\n",
    },
  ],
  'store-imports-nothing-above': [
    {
      from: 'src/server/store/planted.ts',
      code: "import type { ExpectedRecord } from '../core/rules/domain-records.js';\nexport type P = ExpectedRecord;\n",
    },
  ],
  'stores-behind-core': [
    {
      from: 'src/server/backend.ts',
      code: "import type { EmailStore } from './store/emails.js';\nexport type Planted = EmailStore;\n",
      append: true,
    },
    {
      from: 'src/server/index.ts',
      code: "import type { JobStore } from './store/jobs.js';\nexport type Planted = JobStore;\n",
      append: true,
    },
  ],
  'edges-call-core': [
    {
      from: 'src/server/checks/planted.ts',
      code: "import type { Sink } from '../inbound/sink.js';\nexport type P = Sink;\n",
    },
    {
      from: 'src/server/inbox-page/planted.ts',
      code: "import type { ServeOptions } from '../index.js';\nexport type P = ServeOptions;\n",
    },
  ],
  'outbound-side-for-workers': [
    {
      from: 'src/server/http/planted-outbound.ts',
      code: "import type { Sender } from '../outbound/sender.js';\nexport type P = Sender;\n",
    },
  ],
  'no-circular': [
    { from: 'src/lib/planted-a.ts', code: "import { b } from './planted-b.js';\nexport const a = () => b;\n" },
    { from: 'src/lib/planted-b.ts', code: "import { a } from './planted-a.js';\nexport const b = () => a;\n" },
  ],
};

interface Violation {
  from: string;
  to: string;
  rule: { name: string };
}

describe('the layering rules', () => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-layering-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('each name the import planted against them, and the tree breaks none', { timeout: 120_000 }, () => {
    const config = createRequire(import.meta.url)(join(ROOT, '.dependency-cruiser.cjs')) as {
      forbidden: { name: string }[];
    };
    const rules = config.forbidden.map((r) => r.name);
    // A rule without a plant would be checked by nothing here.
    expect(Object.keys(PLANTS).sort()).toEqual([...rules].sort());

    cpSync(join(ROOT, 'src'), join(dir, 'src'), { recursive: true, filter: (p) => !p.endsWith('.test.ts') });
    for (const file of ['.dependency-cruiser.cjs', 'tsconfig.json', 'package.json']) {
      cpSync(join(ROOT, file), join(dir, file));
    }
    symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'), 'dir');
    for (const plant of Object.values(PLANTS).flat()) {
      (plant.append ? appendFileSync : writeFileSync)(join(dir, plant.from), plant.code);
    }

    const run = spawnSync(
      join(ROOT, 'node_modules', '.bin', 'depcruise'),
      ['src', '--config', '.dependency-cruiser.cjs', '--output-type', 'json'],
      { cwd: dir, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 },
    );
    // The JSON output leaves the exit code at 0: the violations it lists are the verdict.
    expect(run.stdout, run.stderr).toMatch(/^\{/);
    const violations = (JSON.parse(run.stdout) as { summary: { violations: Violation[] } }).summary.violations;

    for (const [rule, plants] of Object.entries(PLANTS)) {
      const named = violations.filter((v) => v.rule.name === rule).map((v) => v.from);
      expect(named, `${rule} did not catch its plant`).toContain(plants[0]!.from);
    }
    const planted = new Set(Object.values(PLANTS).flatMap((ps) => ps.map((p) => p.from)));
    const elsewhere = violations.filter((v) => !planted.has(v.from)).map((v) => `${v.rule.name}: ${v.from} → ${v.to}`);
    expect(elsewhere, 'the tree itself breaks a rule').toEqual([]);
  });
});
