// svc-mail/playwright under @playwright/test (test/playwright/): each worker starts a sandbox of its own, the tests
// check the inbox fixture from inside, and this file reads the run's JSON report: every test passed but the one that
// fails on purpose, whose caught mail (subjects, codes, links; the HTML) is attached to each of its attempts, each
// attempt with an address of its own.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/binary.js';

const CLI = join(ROOT, 'node_modules', '@playwright', 'test', 'cli.js');

interface Attachment {
  name: string;
  contentType: string;
  body?: string;
}
interface Result {
  status: string;
  retry: number;
  attachments: Attachment[];
}
interface Suite {
  specs?: { title: string; tests: { results: Result[] }[] }[];
  suites?: Suite[];
}

const specs = (s: Suite): NonNullable<Suite['specs']> => [...(s.specs ?? []), ...(s.suites ?? []).flatMap(specs)];
const text = (a: Attachment | undefined) => Buffer.from(a?.body ?? '', 'base64').toString('utf8');

describe('svc-mail/playwright', () => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-pw-fixture-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('gives each test an inbox of its own, and attaches a failed test’s mail', { timeout: 240_000 }, async () => {
    const report = join(dir, 'report.json');
    const env: NodeJS.ProcessEnv = { ...process.env, PLAYWRIGHT_JSON_OUTPUT_FILE: report };
    delete env.SVC_BASE_URL; // each worker starts its own sandbox
    delete env.SVC_ADMIN_TOKEN;
    const args = [CLI, 'test', '-c', 'test/playwright', '--workers', '2', '--reporter', 'json', '--output', dir];
    const run = spawn(process.execPath, args, { cwd: ROOT, env, stdio: ['ignore', 'ignore', 'pipe'] });
    let err = '';
    run.stderr.on('data', (b: Buffer) => (err += b));
    const code = await new Promise<number | null>((resolve) => run.on('exit', resolve));
    expect(code, err).toBe(1); // the test that fails on purpose

    const all = specs(JSON.parse(readFileSync(report, 'utf8')) as Suite);
    const outcome = Object.fromEntries(all.map((s) => [s.title, s.tests[0]!.results.map((r) => r.status)]));
    expect(outcome, err).toEqual({
      'the address is the test’s own: plus-addressed, per retry; waitFor takes only its mail': ['passed'],
      'newAddress: waitFor watches every address of the test, a Bcc too': ['passed'],
      'clear deletes the test’s messages and no other': ['passed'],
      'open shows the message’s HTML as its reader sees it: no script runs': ['passed'],
      'fails on purpose: the caught mail goes into the report': ['failed', 'failed'],
    });
    // No mail attached to a test that passed.
    for (const s of all.filter((s) => !s.title.startsWith('fails')))
      expect(s.tests[0]!.results[0]!.attachments.filter((a) => a.name.includes('mail'))).toEqual([]);

    const failed = all.find((s) => s.title.startsWith('fails'))!.tests[0]!.results;
    const addresses = failed.map((r) => {
      const caught = JSON.parse(text(r.attachments.find((a) => a.name === 'caught mail'))) as {
        addresses: string[];
        messages: { to: string[]; subject: string; code: string; links: { role: string; url: string }[] }[];
      };
      expect(caught.messages).toEqual([
        expect.objectContaining({
          to: caught.addresses,
          subject: 'Confirm your email',
          code: '731904',
          links: [expect.objectContaining({ role: 'action', url: 'https://shop.example/confirm?t=abc' })],
        }),
      ]);
      const html = r.attachments.find((a) => a.name === 'mail 1.html');
      expect(html?.contentType).toBe('text/html');
      expect(text(html)).toContain('Your code is <b>731904</b>');
      return caught.addresses[0];
    });
    expect(addresses).toEqual([
      expect.stringMatching(/^test\+[0-9a-f]{10}-0@example\.org$/),
      expect.stringMatching(/^test\+[0-9a-f]{10}-1@example\.org$/),
    ]);
    expect(addresses[0]!.replace('-0@', '-1@')).toBe(addresses[1]);
  });
});
