// `svc inbox check` with the built binary against the real server: the findings as a CI script reads them (piped,
// --json), the exit code --fail-on gives it, and the summary and table a person sees in a terminal.
import { readFileSync } from 'node:fs';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pty from '@lydell/node-pty';
import { execa } from 'execa';
import nodemailer from 'nodemailer';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MessageChecks } from '../../src/contract/checks.js';
import { ANSI, BIN, ensureBuilt, ROOT } from '../helpers/binary.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

const fixture = (name: string) => readFileSync(new URL(`../../fixtures/checks/${name}`, import.meta.url), 'utf8');
const partition = <T>(xs: T[], p: (x: T) => boolean): [T[], T[]] => [xs.filter(p), xs.filter((x) => !p(x))];

describe('svc inbox check', { timeout: 120_000 }, () => {
  let s: TestServer;
  let home: string;
  /** A receipt sent through /v1 (nothing worse than notices), and mail another program dropped (not authenticated). */
  let receipt: string;
  let dropped: string;

  beforeAll(async () => {
    ensureBuilt();
    home = mkdtempSync(join(tmpdir(), 'svc-check-'));
    s = await startTestServer();
    const sent = await s.call('POST', '/v1/emails', {
      token: s.ready.seed!.api_key_test!,
      body: {
        from: 'The Shop <orders@example.test>',
        to: 'ada@example.org',
        subject: 'Your receipt',
        html: fixture('receipt.html'),
        text: fixture('receipt.txt'),
      },
    });
    expect(sent.status).toBe(202);
    await s.settle();
    receipt = (await s.admin('GET', '/sandbox/messages?limit=1')).body.data[0].id;
    const t = nodemailer.createTransport({ host: '127.0.0.1', port: s.smtpPort, secure: false, ignoreTLS: true });
    await t.sendMail({
      from: 'Deals <deals@other.test>',
      to: 'ada@example.org',
      subject: 'Weekend sale',
      html: fixture('promo-no-alt.html'),
    });
    t.close();
    dropped = (await s.admin('GET', '/sandbox/messages?limit=1')).body.data[0].id;
  }, 120_000);
  afterAll(async () => {
    await s.close();
    rmSync(home, { recursive: true, force: true });
  });

  const env = () => ({
    PATH: process.env.PATH!,
    HOME: home,
    SVC_CONFIG_DIR: join(home, 'config'),
    SVC_BASE_URL: s.api,
    SVC_ADMIN_TOKEN: s.adminToken,
    SVC_CREDENTIAL_STORE: 'file',
  });
  const svc = (args: string[]) =>
    execa(process.execPath, [BIN, 'inbox', 'check', ...args], {
      env: env(),
      extendEnv: false,
      reject: false,
      cwd: ROOT,
    });

  it('piped: one tab-separated line per finding and per skipped check, the summary on stderr, exit 0 without errors', async () => {
    const r = await svc([receipt]);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stderr).toMatch(
      new RegExp(`^${receipt}: 0 errors, 0 warnings, \\d+ notices; HTML compatibility \\d+/100$`),
    );
    // A check that could not run is a line of its own, told apart by its first field (never a severity), with why.
    const [skipped, lines] = partition(r.stdout.split('\n'), (l) => l.startsWith('skipped\t'));
    expect(skipped).toContainEqual(
      expect.stringMatching(/^skipped\tspam\t-\t-\tNo spamd: start svc serve with --spamd HOST:PORT [^\t]+\t-$/),
    );
    const report = MessageChecks.parse(JSON.parse((await svc([receipt, '--json'])).stdout));
    expect(skipped.map((l) => l.split('\t')[1])).toEqual(
      report.checks.filter((c) => c.status === 'skipped').map((c) => c.id),
    );
    expect(lines.length).toBeGreaterThan(3);
    for (const line of lines) {
      const [severity, check, rule, where] = line.split('\t');
      expect(line.split('\t')).toHaveLength(6);
      expect(severity).toBe('notice');
      expect(check).toBe('html-compatibility');
      expect(rule).toMatch(/^(css|html)-/);
      expect(where).toMatch(/^(\d+:\d+|-)$/);
    }
  });

  it('exits 1 when a finding at or above --fail-on exists, and says how many', async () => {
    expect((await svc([receipt, '--fail-on', 'warning'])).exitCode).toBe(0);
    const notices = await svc([receipt, '--fail-on', 'notice']);
    expect(notices.exitCode).toBe(1);
    const count = notices.stdout.split('\n').filter((l) => !l.startsWith('skipped\t')).length;
    expect(notices.stderr).toContain(`${receipt} has ${count} findings at or above notice (--fail-on notice)`);

    const failed = await svc([dropped]);
    expect(failed.exitCode).toBe(1);
    expect(failed.stdout).toMatch(/^error\tauthentication\tnot-authenticated\t-\tNeither SPF nor DKIM passes\t/m);
    expect(failed.stdout).toMatch(/^warning\tcontent\timg-alt-missing\t11:48\t/m);
    expect(failed.stderr).toContain(`${dropped} has 1 finding at or above error (--fail-on error)`);
  });

  it('--json prints the report alone, and still exits by --fail-on', async () => {
    const r = await svc([dropped, '--json']);
    expect(r.exitCode).toBe(1);
    const report = MessageChecks.parse(JSON.parse(r.stdout));
    expect(report.message_id).toBe(dropped);
    expect(report.summary.errors).toBe(1);
  });

  it('refuses a severity it does not know', async () => {
    const r = await svc([receipt, '--fail-on', 'fatal']);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toMatch(/--fail-on.*fatal.*error, warning, notice/s);
  });

  it('on a terminal: the summary, each check, and the findings as a table', async () => {
    const term = pty.spawn(process.execPath, [BIN, 'inbox', 'check', dropped], {
      name: 'xterm-256color',
      cols: 160,
      rows: 80,
      cwd: ROOT,
      env: env(),
    });
    let raw = '';
    term.onData((d) => (raw += d));
    const code = await new Promise<number>((resolve) => term.onExit(({ exitCode }) => resolve(exitCode)));
    const lines = raw.replace(ANSI, '').split(/\r?\n/);
    expect(code).toBe(1);
    expect(lines[0]).toMatch(
      new RegExp(`^${dropped}  1 error, \\d+ warnings, \\d+ notices; HTML compatibility \\d+/100`),
    );
    expect(lines).toContainEqual(expect.stringMatching(/^authentication +error +spf none, dkim none, dmarc none$/));
    expect(lines).toContainEqual(expect.stringMatching(/^spam +skipped +No spamd: start svc serve with --spamd/));
    expect(lines).toContainEqual(expect.stringMatching(/^SEVERITY +CHECK +RULE +WHERE +FINDING +DETAIL$/));
    expect(lines).toContainEqual(
      expect.stringMatching(/^warning +content +img-alt-missing +11:48 +An image without alt text/),
    );
  });
});

describe('svc inbox check on messages whose checks cannot all finish', { timeout: 120_000 }, () => {
  let s: TestServer;
  let home: string;
  beforeAll(async () => {
    ensureBuilt();
    home = mkdtempSync(join(tmpdir(), 'svc-check-'));
    s = await startTestServer({ checksDeadlineMs: 1000 });
  }, 120_000);
  afterAll(async () => {
    await s.close();
    rmSync(home, { recursive: true, force: true });
  });

  /** Sends through /v1 from the seeded domain (so it authenticates) and returns the caught message's id. */
  async function sent(html: string): Promise<string> {
    const r = await s.call('POST', '/v1/emails', {
      token: s.ready.seed!.api_key_test!,
      body: { from: 'The Shop <orders@example.test>', to: 'ada@example.org', subject: 'Offers', html, text: 'Offers' },
    });
    expect(r.status, r.text).toBe(202);
    await s.settle();
    return (await s.admin('GET', '/sandbox/messages?limit=1')).body.data[0].id;
  }
  const svc = (args: string[]) =>
    execa(process.execPath, [BIN, 'inbox', 'check', ...args], {
      env: {
        PATH: process.env.PATH!,
        HOME: home,
        SVC_CONFIG_DIR: join(home, 'config'),
        SVC_BASE_URL: s.api,
        SVC_ADMIN_TOKEN: s.adminToken,
        SVC_CREDENTIAL_STORE: 'file',
      },
      extendEnv: false,
      reject: false,
      cwd: ROOT,
    });

  it('fails HTML nested 80,000 deep by default, at the place it gets too deep', async () => {
    const id = await sent(`<html lang="en"><body>\n${'<div>'.repeat(20_000)}${'<i>'.repeat(60_000)}</body></html>`);
    const r = await svc([id]);
    expect(r.exitCode, r.stderr).toBe(1);
    expect(r.stdout).toMatch(/^error\tcontent\thtml-nesting-deep\t2:2551\tElements nested more than 512 deep\t/m);
    expect(r.stdout).not.toMatch(/Maximum call stack/);
  });

  it('fails a message its checks ran out of time on with --fail-on warning', async () => {
    const id = await sent(
      `<!doctype html><html lang="en"><head><title>Offers</title></head><body>${`${'<div>'.repeat(100)}x${'</div>'.repeat(100)}`.repeat(600)}</body></html>`,
    );
    const r = await svc([id, '--fail-on', 'warning']);
    expect(r.exitCode, r.stderr).toBe(1);
    expect(r.stdout).toMatch(/^warning\tcontent\tcheck-timeout\t-\tThe check did not finish in time\t/m);
    expect(r.stderr).toContain('at or above warning (--fail-on warning)');
  });
});
