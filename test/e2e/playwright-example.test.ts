// examples/playwright/ as CI runs it: `playwright test` with four workers, its webServer starting `svc serve --seed`
// (the built binary) and the example app, the tests driving Debian's Chromium (CHROMIUM_PATH) through
// svc-mail/playwright, which the example imports by the package's own name. Free ports, and a runtime directory of
// its own, where the fixture finds the server's admin token by its URL.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT, ensureBuilt } from '../helpers/binary.js';
import { freePort } from '../helpers/spamd.js';

const EXAMPLE = join(ROOT, 'examples', 'playwright');
const CLI = join(ROOT, 'node_modules', '@playwright', 'test', 'cli.js');

interface JsonReport {
  stats: { expected: number; unexpected: number; flaky: number; skipped: number; duration: number };
}

describe('examples/playwright', () => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-playwright-'));
  beforeAll(() => ensureBuilt(), 180_000);
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('signs up in four parallel workers: the code from the mail, then its link', { timeout: 240_000 }, async () => {
    const chromium = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
    expect(existsSync(chromium), `the example needs Chromium at ${chromium} (apt-get install chromium)`).toBe(true);
    const report = join(dir, 'report.json');
    const args = [CLI, 'test', '--workers', '4', '--reporter', 'list,json', '--output', join(dir, 'results')];
    const run = spawn(process.execPath, args, {
      cwd: EXAMPLE,
      env: {
        ...process.env,
        CI: '1', // no server reused, no test.only; a retry would show as flaky below
        SVC_PORT: String(await freePort()),
        APP_PORT: String(await freePort()),
        SVC_RUNTIME_DIR: join(dir, 'run'),
        PLAYWRIGHT_JSON_OUTPUT_FILE: report,
        PLAYWRIGHT_JSON_OUTPUT_NAME: report,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    run.stdout.on('data', (b: Buffer) => (out += b));
    run.stderr.on('data', (b: Buffer) => (out += b));
    const code = await new Promise<number | null>((resolve) => run.on('exit', resolve));
    expect(code, out).toBe(0);
    const { stats } = JSON.parse(readFileSync(report, 'utf8')) as JsonReport;
    const { expected, unexpected, flaky, skipped } = stats;
    expect({ expected, unexpected, flaky, skipped }, out).toEqual({ expected: 7, unexpected: 0, flaky: 0, skipped: 0 });
  });
});
