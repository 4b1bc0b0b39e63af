// `svc inbox` with the built binary, as a CI script and a person run it: `svc serve --json` in the background on a
// fresh data directory, a send with the seed's test key, `svc inbox wait` for the code and the link; the list, a raw
// message byte for byte, and --follow until Ctrl-C.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import nodemailer from 'nodemailer';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MessageAccepted } from '../../src/contract/emails.js';
import { CaughtMessage, CaughtMessageSummary } from '../../src/contract/inbox.js';
import { BIN, ensureBuilt, killAll, ROOT, serve, stop, within, type Served } from '../helpers/binary.js';

describe('svc inbox (the built binary)', () => {
  let home: string;
  let s: Served;
  let env: Record<string, string>;
  /** What `svc serve --json` printed on stdout after its ready line. */
  let logs = '';
  beforeAll(async () => {
    ensureBuilt();
    home = mkdtempSync(join(tmpdir(), 'svc-e2e-inbox-'));
    // A fresh machine: the server's default data directory is where the client finds the admin token by itself.
    env = {
      PATH: process.env.PATH!,
      HOME: home,
      SVC_DATA_DIR: join(home, 'data'),
      SVC_CONFIG_DIR: join(home, 'config'),
    };
    s = await serve(['--json'], env);
    s.proc.stdout!.setEncoding('utf8').on('data', (d: string) => (logs += d));
  }, 120_000);
  afterAll(async () => {
    if (s) await stop(s);
    killAll();
    rmSync(home, { recursive: true, force: true });
  });

  const svc = (args: string[], extra: Record<string, string> = {}) =>
    execa(process.execPath, [BIN, ...args], {
      env: { ...env, SVC_BASE_URL: s.ready.api, ...extra },
      extendEnv: false,
      reject: false,
      cwd: ROOT,
    });
  const key = () => ({ SVC_API_KEY: s.ready.seed!.api_key_test! });

  it("as a CI script would: send with the seed's test key, then wait for the code, the link, the whole message", async () => {
    const sent = await svc(
      [
        'emails',
        'send',
        '--json',
        '--from',
        'Shop <orders@example.test>',
        '--to',
        'ci-user@example.org',
        '--subject',
        'Your sign-in code',
        '--text',
        'Your code is 482913. It expires in 10 minutes.',
      ],
      key(),
    );
    expect(sent.exitCode, sent.stderr).toBe(0);
    const accepted = MessageAccepted.parse(JSON.parse(sent.stdout));

    const code = await svc([
      'inbox',
      'wait',
      '--to',
      'ci-user@example.org',
      '--since',
      accepted.created_at,
      '--extract',
      'code',
    ]);
    expect(code.exitCode, code.stderr).toBe(0);
    expect(code.stdout).toBe('482913');

    // A second send, then a wait without --since: the message just caught, not the one the first wait returned.
    const again = await svc(
      [
        'emails',
        'send',
        '--json',
        '--from',
        'Shop <orders@example.test>',
        '--to',
        'ci-user@example.org',
        '--subject',
        'Your new sign-in code',
        '--text',
        'Your code is 775533.',
      ],
      key(),
    );
    expect(again.exitCode, again.stderr).toBe(0);
    const json = await svc(['--json', 'inbox', 'wait', '--to', 'ci-user@example.org', '--subject', 'SIGN-IN']);
    expect(json.exitCode, json.stderr).toBe(0);
    expect(CaughtMessage.parse(JSON.parse(json.stdout))).toMatchObject({
      subject: 'Your new sign-in code',
      message_id: MessageAccepted.parse(JSON.parse(again.stdout)).id,
      claimed: true,
    });
    // With what a script (pytest, Go) came for, found as --extract finds it: no regex of its own needed.
    expect(JSON.parse(json.stdout)).toMatchObject({ code: '775533', codes: ['775533'], links: [], link: null });

    // Started before the mail is sent, it takes the next message without --since. Its one line on stderr (for the
    // CI log) comes once nothing can be missed any more.
    const waiting = svc(['inbox', 'wait', '--to', 'ci-user@example.org', '--extract', 'link', '--timeout', '1m']);
    await new Promise<void>((resolve) =>
      waiting.stderr!.on(
        'data',
        (d: Buffer) => d.toString().includes('Waiting up to 1m for a message to ci-user@example.org') && resolve(),
      ),
    );
    const reset = await svc(
      [
        'emails',
        'send',
        '--from',
        'orders@example.test',
        '--to',
        'ci-user@example.org',
        '--subject',
        'Reset',
        '--text',
        'Reset it at https://app.example.com/reset?token=abc.',
      ],
      key(),
    );
    expect(reset.exitCode, reset.stderr).toBe(0);
    const link = await waiting;
    expect(link.exitCode, link.stderr).toBe(0);
    expect(link.stdout).toBe('https://app.example.com/reset?token=abc');

    // The ready line came first on stdout; the JSON logs after it.
    for (const line of logs.trim().split('\n'))
      expect(JSON.parse(line)).toMatchObject({ level: expect.any(String), msg: expect.any(String) });
  });

  it('exits 1 on timeout with a clear message, also when the mail came before the wait (--timeout 0 checks once)', async () => {
    const none = await svc(['inbox', 'wait', '--to', 'nobody@example.org', '--timeout', '0']);
    expect(none.exitCode).toBe(1);
    expect(none.stdout).toBe('');
    expect(none.stderr).toMatch(
      /^Waiting up to 0s for a message to nobody@example\.org .*\nerror: svc inbox wait: no message to nobody@example\.org arrived within 0s \(since .+Z\); hint: check the address, or wait longer with --timeout\n?$/,
    );

    const sent = await svc(
      ['emails', 'send', '--from', 'orders@example.test', '--to', 'late@example.org', '--text', 'Your code is 111222'],
      key(),
    );
    expect(sent.exitCode, sent.stderr).toBe(0);
    // Once it is caught (a wait from the epoch returns it)…
    expect(
      (
        await svc([
          'inbox',
          'wait',
          '--to',
          'late@example.org',
          '--since',
          new Date(0).toISOString(),
          '--extract',
          'code',
        ])
      ).stdout,
    ).toBe('111222');
    // …a later wait, in another process, does not take it again, and says why.
    const late = await svc(['inbox', 'wait', '--to', 'late@example.org', '--timeout', '0', '--extract', 'code']);
    expect(late.exitCode).toBe(1);
    expect(late.stderr).toMatch(
      /no message to late@example\.org arrived within 0s .*hint: the latest one, eml_\w+, came at .+, and an earlier wait returned it: see it with `svc inbox show eml_\w+`/,
    );
  });

  it('an app sends over SMTP, then a script waits: each wait, a process of its own, takes the next message in order', async () => {
    const port = Number(new URL(s.ready.smtp.replace(/^smtp:/, 'http:')).port);
    const app = nodemailer.createTransport({ host: '127.0.0.1', port, secure: false, ignoreTLS: true });
    try {
      // Caught before sendMail resolves: the wait that follows finds it there.
      await app.sendMail({ from: 'app@example.net', to: 'seq@example.org', subject: 'One', text: 'Code 100100' });
      const first = await svc(['inbox', 'wait', '--to', 'seq@example.org', '--extract', 'code', '--timeout', '10s']);
      expect([first.exitCode, first.stdout, first.stderr]).toEqual([0, '100100', '']);
      await app.sendMail({ from: 'app@example.net', to: 'seq@example.org', subject: 'Two', text: 'Code 200200' });
      await app.sendMail({ from: 'app@example.net', to: 'seq@example.org', subject: 'Three', text: 'Code 300300' });
      const second = await svc(['inbox', 'wait', '--to', 'seq@example.org', '--extract', 'code', '--timeout', '10s']);
      const third = await svc(['inbox', 'wait', '--to', 'seq@example.org', '--extract', 'code', '--timeout', '10s']);
      expect([second.stdout, third.stdout]).toEqual(['200200', '300300']);
    } finally {
      app.close();
    }
  });

  it('lists caught mail (tab-separated when piped), and shows a raw message byte for byte', async () => {
    const source = readFileSync(join(ROOT, 'fixtures/mail/dkim/8bit-body.eml'));
    const port = Number(new URL(s.ready.smtp.replace(/^smtp:/, 'http:')).port);
    const t = nodemailer.createTransport({ host: '127.0.0.1', port, secure: false, ignoreTLS: true });
    await t.sendMail({ envelope: { from: 'orders@example.test', to: ['ada@dest.example'] }, raw: source });
    t.close();

    const list = await svc(['inbox', '--to', 'ada@dest.example']);
    expect(list.exitCode, list.stderr).toBe(0);
    const [id, , from, to, subject, status] = list.stdout.split('\t');
    expect([from, to, subject, status]).toEqual([
      '"Shop" <orders@example.test>',
      'ada@dest.example',
      '8-bit body',
      '-',
    ]);

    const raw = await execa(process.execPath, [BIN, 'inbox', 'show', id!, '--raw'], {
      env: { ...env, SVC_BASE_URL: s.ready.api },
      extendEnv: false,
      reject: false,
      cwd: ROOT,
      encoding: 'buffer',
      stripFinalNewline: false,
    });
    expect(raw.exitCode).toBe(0);
    expect(Buffer.from(raw.stdout).subarray(0, source.length).equals(source)).toBe(true);
    const stored = Buffer.from(
      await (
        await fetch(`${s.origin}/sandbox/messages/${id}/raw`, {
          headers: { authorization: `Bearer ${s.ready.admin_token}` },
        })
      ).arrayBuffer(),
    );
    expect(Buffer.from(raw.stdout).equals(stored)).toBe(true);
  });

  it('shows the control characters of a mail as symbols, piped or not: none reaches the terminal', async () => {
    const port = Number(new URL(s.ready.smtp.replace(/^smtp:/, 'http:')).port);
    const t = nodemailer.createTransport({ host: '127.0.0.1', port, secure: false, ignoreTLS: true });
    // A screen cleared, a colour, a hyperlink that hides its target (OSC 8), a C1 control sequence introducer.
    const link = '\u001b]8;;https://evil.example/\u0007Your bank\u001b]8;;\u0007';
    await t.sendMail({
      from: 'Sneaky <sneaky@example.net>',
      to: 'esc@example.org',
      subject: `Hi\u001b[2J${link}`,
      text: `line one\u001b[2J\u001b[31mred\u009b1m\r\nline two\tafter a tab\r\n${link}\r\n`,
    });
    t.close();

    const list = await svc(['inbox', '--to', 'esc@example.org']);
    expect(list.exitCode, list.stderr).toBe(0);
    const [id, , , , subject] = list.stdout.split('\t');
    expect(subject).toBe('Hi␛[2J␛]8;;https://evil.example/␇Your bank␛]8;;␇');

    const shown = await svc(['inbox', 'show', id!]);
    expect(shown.exitCode, shown.stderr).toBe(0);
    expect(shown.stdout).toContain('subject\tHi␛[2J␛]8;;https://evil.example/␇Your bank␛]8;;␇');
    expect(shown.stdout).toContain(
      'line one␛[2J␛[31mred<U+009B>1m\nline two\tafter a tab\n␛]8;;https://evil.example/␇Your bank',
    );
    for (const out of [list.stdout, shown.stdout]) expect(out).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/);
    // --json and --raw are data for programs: they stay exactly as the server has them.
    const json = await svc(['inbox', 'show', id!, '--json']);
    expect(JSON.parse(json.stdout).subject).toBe(`Hi\u001b[2J${link}`);
  });

  it('--follow prints each new message as it arrives and ends with exit 0 on Ctrl-C (SIGINT)', async () => {
    const follow = svc(['--json', 'inbox', '--follow', '--to', 'follow@example.org', '--limit', '1']);
    let out = '';
    let err = '';
    follow.stderr!.on('data', (d: Buffer) => (err += d.toString()));
    const waiters: (() => void)[] = [];
    follow.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      for (const w of waiters) w();
    });
    const seen = (text: string) =>
      within(
        10_000,
        new Promise<void>((resolve) => {
          const check = () => out.includes(text) && resolve();
          waiters.push(check);
          check();
        }),
        `${text} on stdout (stdout: ${out}; stderr: ${err})`,
      );
    // Mail already there is printed first, once the stream is open: after it, nothing new can be missed.
    const first = await svc(
      [
        'emails',
        'send',
        '--from',
        'orders@example.test',
        '--to',
        'follow@example.org',
        '--subject',
        'Before',
        '--text',
        'x',
      ],
      key(),
    );
    expect(first.exitCode).toBe(0);
    // (Sent before --follow started or after: either way it shows, from the listing or from the stream.)
    await seen('"Before"');
    await svc(
      [
        'emails',
        'send',
        '--from',
        'orders@example.test',
        '--to',
        'someone-else@example.org',
        '--subject',
        'Not this',
        '--text',
        'x',
      ],
      key(),
    );
    await svc(
      [
        'emails',
        'send',
        '--from',
        'orders@example.test',
        '--to',
        'follow@example.org',
        '--subject',
        'After',
        '--text',
        'x',
      ],
      key(),
    );
    await seen('"After"');
    follow.kill('SIGINT');
    const done = await follow;
    expect(done.exitCode, done.stderr).toBe(0);
    const subjects = done.stdout
      .trim()
      .split('\n')
      .map((l) => CaughtMessageSummary.parse(JSON.parse(l)).subject);
    expect(subjects).toEqual(['Before', 'After']);
  });
});
