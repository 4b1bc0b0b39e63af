// svc inbox (list, --follow), inbox show and inbox wait against the real server: mail is sent through /v1 and
// delivered by the server's own worker, or handed to the SMTP sink by another program (nodemailer), and the commands
// read it back through the sandbox routes and the inbox's stream. Waits run on a local clock the test releases.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PassThrough, Readable } from 'node:stream';
import nodemailer from 'nodemailer';
import type Mail from 'nodemailer/lib/mailer/index.js';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { listOf } from '../../src/contract/common.js';
import { CaughtMessage, CaughtMessageSummary } from '../../src/contract/inbox.js';
import { inboxListRun, type InboxListOptions } from '../../src/cli/commands/inbox/list.js';
import { inboxShowRun } from '../../src/cli/commands/inbox/show.js';
import { inboxWaitRun, type InboxWaitOptions } from '../../src/cli/commands/inbox/wait.js';
import type { Run } from '../../src/cli/command.js';
import { createContext, type WallClock, type GlobalOptions } from '../../src/cli/context.js';
import { EXIT, reportError } from '../../src/cli/errors.js';
import { createIO } from '../../src/cli/io.js';
import { ROOT } from '../helpers/binary.js';
import { manyParts } from '../helpers/mime.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { tempDirs } from './helpers.js';

/** A command run against a server, its output watched as it comes (for the commands that keep running). */
async function command(
  s: TestServer,
  o: {
    configDir: string;
    tty?: boolean;
    json?: boolean;
    clock?: WallClock;
    env?: Record<string, string>;
    interrupt?: AbortSignal;
  },
) {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  // A terminal says how wide it is; the spinner is drawn only on one that does.
  if (o.tty) Object.assign(stderr, { columns: 80 });
  const bytes: Buffer[] = [];
  let err = '';
  const waiters: { test: () => boolean; done: () => void }[] = [];
  const check = () => {
    for (const w of [...waiters]) {
      if (w.test()) {
        waiters.splice(waiters.indexOf(w), 1);
        w.done();
      }
    }
  };
  stdout.on('data', (d: Buffer) => {
    bytes.push(d);
    check();
  });
  stderr.on('data', (d: Buffer) => {
    err += d.toString();
    check();
  });
  const io = await createIO({
    stdin: Readable.from([]),
    stdout,
    stderr,
    stdinIsTTY: Boolean(o.tty),
    stdoutIsTTY: Boolean(o.tty),
    stderrIsTTY: Boolean(o.tty),
    env: {
      SVC_CONFIG_DIR: o.configDir,
      SVC_CREDENTIAL_STORE: 'file',
      SVC_BASE_URL: s.api,
      SVC_ADMIN_TOKEN: s.adminToken,
      SVC_RUNTIME_DIR: join(o.configDir, 'run'),
      ...o.env,
    },
    interrupt: o.interrupt && (() => o.interrupt!),
  });
  const globals: GlobalOptions = { retries: 0, json: o.json };
  const ctx = createContext({ io, globals, clock: o.clock });
  const out = () => Buffer.concat(bytes).toString('utf8');
  return {
    stdout: out,
    bytes: () => Buffer.concat(bytes),
    stderr: () => err,
    /** Resolves once the output so far satisfies `test` (what a person would see appear). */
    until: (test: (o: { stdout: string; stderr: string }) => boolean) =>
      new Promise<void>((done) => {
        waiters.push({ test: () => test({ stdout: out(), stderr: err }), done });
        check();
      }),
    async run<O>(work: Run<O>, opts: O, name = 'svc inbox'): Promise<number> {
      try {
        await work(ctx, opts);
        return EXIT.ok;
      } catch (e) {
        return reportError(io, e, { command: name, json: ctx.json });
      }
    },
  };
}

/**
 * A local clock far ahead of the service's (a manual service clock stays where it was while days pass), whose waits
 * end only when the test says so. `waiting` resolves when the command starts to wait, with how long it means to.
 */
function heldClock(start = Date.parse('2099-01-01T00:00:00.000Z')) {
  let now = start;
  let expire: (() => void) | undefined;
  let started!: (ms: number) => void;
  const waiting = new Promise<number>((r) => (started = r));
  const clock: WallClock = {
    now: () => now,
    sleep(ms, signal) {
      started(ms);
      return new Promise<void>((resolve, reject) => {
        expire = () => {
          now += ms;
          resolve();
        };
        signal?.addEventListener('abort', () => reject(signal.reason), { once: true });
      });
    },
  };
  return { clock, waiting, expire: () => expire!() };
}

describe('svc inbox', () => {
  let s: TestServer;
  let configDir: string;
  const dirs = tempDirs();
  beforeAll(async () => {
    s = await startTestServer();
    configDir = dirs.make();
  });
  afterAll(async () => {
    await s.close();
    dirs.cleanup();
  });
  beforeEach(async () => {
    expect((await s.admin('DELETE', '/sandbox/messages')).status).toBe(204);
  });

  const cmd = (o: Omit<Parameters<typeof command>[1], 'configDir'> = {}) => command(s, { configDir, ...o });

  /** Sends through /v1 with the seeded test key; resolves once the message is caught. */
  async function send(to: string, subject: string, content: { text?: string; html?: string }) {
    const r = await s.call('POST', '/v1/emails', {
      token: s.seed!.api_key_test,
      body: { from: 'Shop <orders@example.test>', to, subject, ...content },
    });
    expect(r.status, r.text).toBe(202);
    await s.settle();
    return r.body.id as string;
  }

  /** Hands a message to the sink over SMTP as another program would (an envelope of its own, or raw bytes). */
  async function smtp(mail: Mail.Options) {
    const t = nodemailer.createTransport({ host: '127.0.0.1', port: s.smtpPort, secure: false, ignoreTLS: true });
    try {
      await t.sendMail(mail);
    } finally {
      t.close();
    }
  }

  const caught = async () => (await s.admin('GET', '/sandbox/messages?limit=100')).body.data as CaughtMessageSummary[];

  describe('svc inbox (the list)', () => {
    it('lists caught mail newest first: a table on a terminal, tab-separated piped, the API body with --json', async () => {
      const first = await send('ada@example.org', 'First order', { text: 'one' });
      const second = await send('bob@example.org', 'Second order', { text: 'two' });
      const [newest, oldest] = await caught();
      expect([newest!.message_id, oldest!.message_id]).toEqual([second, first]);

      const tty = await cmd({ tty: true, env: { NO_COLOR: '1' } });
      expect(await tty.run(inboxListRun, {})).toBe(0);
      expect(tty.stdout()).toMatch(/ID {2,}TIME {2,}FROM {2,}TO {2,}SUBJECT {2,}STATUS/);
      expect(tty.stdout().indexOf('Second order')).toBeLessThan(tty.stdout().indexOf('First order'));
      expect(tty.stdout()).not.toMatch(/\x1b\[/);

      const piped = await cmd();
      expect(await piped.run(inboxListRun, {})).toBe(0);
      const lines = piped
        .stdout()
        .trimEnd()
        .split('\n')
        .map((l) => l.split('\t'));
      expect(lines).toEqual([
        [
          newest!.id,
          newest!.received_at,
          '"Shop" <orders@example.test>',
          'bob@example.org',
          'Second order',
          newest!.status,
        ],
        [
          oldest!.id,
          oldest!.received_at,
          '"Shop" <orders@example.test>',
          'ada@example.org',
          'First order',
          oldest!.status,
        ],
      ]);
      expect(newest!.status).toMatch(/^(sent|delivered)$/);

      const json = await cmd({ json: true });
      expect(await json.run(inboxListRun, { limit: 1 })).toBe(0);
      const page = listOf(CaughtMessageSummary).parse(JSON.parse(json.stdout()));
      expect(page).toEqual({ data: [newest], has_more: true });
    });

    it('--to finds mail to an address in To, Cc or only the envelope (a Bcc), in any case', async () => {
      await send('someone@example.org', 'Not for Ada', { text: 'x' });
      await smtp({
        from: 'app@example.net',
        to: 'list@example.org',
        bcc: 'Ada@Example.org',
        subject: 'Bcc to Ada',
        text: 'hidden',
      });
      await smtp({
        from: 'app@example.net',
        to: 'x@example.org',
        cc: 'ada@example.org',
        subject: 'Cc to Ada',
        text: 'copy',
      });
      const c = await cmd();
      expect(await c.run(inboxListRun, { to: 'ADA@example.org' })).toBe(0);
      expect(
        c
          .stdout()
          .trimEnd()
          .split('\n')
          .map((l) => l.split('\t')[4]),
      ).toEqual(['Cc to Ada', 'Bcc to Ada']);
    });

    it('says so on a terminal when there is nothing, and needs the admin token (exit 4, saying where it comes from)', async () => {
      const tty = await cmd({ tty: true });
      expect(await tty.run(inboxListRun, {})).toBe(0);
      expect(tty.stdout()).toBe('');
      expect(tty.stderr()).toContain('Nothing yet.');

      const noToken = await cmd({ env: { SVC_ADMIN_TOKEN: '', SVC_DATA_DIR: join(dirs.make(), 'none') } });
      expect(await noToken.run(inboxListRun, {})).toBe(4);
      expect(noToken.stderr()).toMatch(
        /^error: svc inbox: no admin token for http:\/\/127\.0\.0\.1:\d+\/v1: no svc serve on this machine is registered at that address, .*; hint: start one with `svc serve`, or set SVC_ADMIN_TOKEN \(or pass --admin-token\)/,
      );
    });
  });

  describe('svc inbox --follow', () => {
    it('prints recent mail oldest first, then each new message as it arrives, until Ctrl-C (exit 0)', async () => {
      await send('ada@example.org', 'Already here', { text: 'old' });
      const stop = new AbortController();
      const c = await cmd({ interrupt: stop.signal });
      const done = c.run(inboxListRun, { follow: true } satisfies InboxListOptions);
      await c.until(({ stdout }) => stdout.includes('Already here'));

      await send('bob@example.org', 'Arrived later', { text: 'new' });
      await smtp({ from: 'app@example.net', to: 'carol@example.org', subject: 'From another program', text: 'hi' });
      await c.until(({ stdout }) => stdout.includes('From another program'));
      stop.abort(); // Ctrl-C
      expect(await done).toBe(0);
      const subjects = c
        .stdout()
        .trimEnd()
        .split('\n')
        .map((l) => l.split('\t')[4]);
      expect(subjects).toEqual(['Already here', 'Arrived later', 'From another program']);
    });

    it('with --to prints only mail to that address (a Bcc too); with --json one summary a line', async () => {
      const stop = new AbortController();
      const tty = await cmd({ json: true, tty: true, interrupt: stop.signal });
      const done = tty.run(inboxListRun, { follow: true, to: 'ada@example.org' });
      await tty.until(({ stderr }) => stderr.includes('Waiting for mail to ada@example.org'));
      await send('bob@example.org', 'For Bob', { text: 'b' });
      await smtp({
        from: 'app@example.net',
        to: 'list@example.org',
        bcc: 'ada@example.org',
        subject: 'Bcc for Ada',
        text: 'a',
      });
      await send('ada@example.org', 'For Ada', { text: 'a' });
      await tty.until(({ stdout }) => stdout.includes('"For Ada"'));
      stop.abort();
      expect(await done).toBe(0);
      const lines = tty
        .stdout()
        .trimEnd()
        .split('\n')
        .map((l) => CaughtMessageSummary.parse(JSON.parse(l)));
      expect(lines.map((m) => m.subject)).toEqual(['Bcc for Ada', 'For Ada']);
    });

    it('exits 1 saying the server stopped when the stream ends', async () => {
      const other = await startTestServer();
      const c = await command(other, { configDir, tty: true });
      const done = c.run(inboxListRun, { follow: true });
      await c.until(({ stderr }) => stderr.includes('Waiting for mail'));
      await other.close();
      expect(await done).toBe(1);
      expect(c.stderr()).toContain('the server ended the inbox stream: it stopped');
    });
  });

  describe('svc inbox show', () => {
    it('shows the fields and the text; --json is the API body, parsed with the contract', async () => {
      const id = await send('ada@example.org', 'Receipt 1042', {
        text: 'Thanks for order 1042.\n',
        html: '<p>Thanks</p>',
      });
      const [m] = await caught();

      const tty = await cmd({ tty: true, env: { NO_COLOR: '1' } });
      expect(await tty.run(inboxShowRun, { id: m!.id })).toBe(0);
      expect(tty.stdout()).toMatch(/^id +eml_\w+\nfrom +"Shop" <orders@example\.test>\nto +ada@example\.org\n/);
      expect(tty.stdout()).toMatch(new RegExp(`status +(sent|delivered) \\(${id}\\)`));
      expect(tty.stdout()).toMatch(/dkim +pass \(example\.test\)/);
      expect(tty.stdout()).toMatch(/\n\nThanks for order 1042\.\n$/);

      const piped = await cmd();
      expect(await piped.run(inboxShowRun, { id: m!.id })).toBe(0);
      expect(piped.stdout()).toContain('subject\tReceipt 1042\n');

      const json = await cmd({ json: true });
      expect(await json.run(inboxShowRun, { id: m!.id })).toBe(0);
      const body = CaughtMessage.parse(JSON.parse(json.stdout()));
      expect(body).toEqual(CaughtMessage.parse((await s.admin('GET', `/sandbox/messages/${m!.id}`)).body));
      expect(body.html).toContain('<p>Thanks</p>');
    });

    it('--raw prints the source byte for byte, also when it is not UTF-8', async () => {
      const source = readFileSync(join(ROOT, 'fixtures/mail/dkim/8bit-body.eml'));
      expect(source.toString('utf8')).toContain('\ufffd'); // not valid UTF-8: a text round trip would change it
      await smtp({ envelope: { from: 'orders@example.test', to: ['ada@dest.example'] }, raw: source });
      const [m] = await caught();
      const c = await cmd();
      expect(await c.run(inboxShowRun, { id: m!.id, raw: true })).toBe(0);
      const stored = Buffer.from(
        await (
          await fetch(`${s.origin}/sandbox/messages/${m!.id}/raw`, {
            headers: { authorization: `Bearer ${s.adminToken}` },
          })
        ).arrayBuffer(),
      );
      expect(c.bytes().equals(stored)).toBe(true);
      expect(c.bytes().subarray(0, source.length).equals(source)).toBe(true);
    });

    it('says on stderr what the view left out of a message past its limits, and how to get all of it', async () => {
      await smtp({
        envelope: { from: 'orders@example.test', to: ['ada@dest.example'] },
        raw: manyParts(600, 'Export rows'),
      });
      const [m] = await caught();
      const c = await cmd();
      expect(await c.run(inboxShowRun, { id: m!.id })).toBe(0);
      expect(c.stdout()).toMatch(/\n\nThe first part of 600\.\n$/);
      expect(c.stderr()).toBe(
        'The message has more than 500 MIME parts: the view shows the first 500 (the message itself and multipart containers count). The raw source has all of it.\n' +
          `The whole message: svc inbox show ${m!.id} --raw > ${m!.id}.eml\n`,
      );
    });

    it('exits 1 for an unknown id, naming the list command', async () => {
      const c = await cmd();
      expect(await c.run(inboxShowRun, { id: 'eml_000000000000000000000000' }, 'svc inbox show')).toBe(1);
      expect(c.stderr()).toMatch(
        /^error: svc inbox show: .*No caught message has this id; `svc inbox` lists them\. \[not_found, req_/,
      );
    });
  });

  describe('svc inbox wait', () => {
    /** Starts a wait; once it waits, runs `then` (mail arriving), then resolves with its exit code. */
    async function waitFor(
      o: InboxWaitOptions,
      then: (expire: () => void) => Promise<void>,
      io: { json?: boolean; tty?: boolean } = {},
    ) {
      const held = heldClock();
      const c = await cmd({ ...io, clock: held.clock });
      const done = c.run(inboxWaitRun, o, 'svc inbox wait');
      const ms = await Promise.race([
        held.waiting,
        done.then((code) => Promise.reject(new Error(`ended (${code}) before waiting: ${c.stderr()}`))),
      ]);
      await then(held.expire);
      return { code: await done, ms, c };
    }

    it('takes mail caught just before it started, once; then waits for the next message and prints its code', async () => {
      await send('ada@example.org', 'Your code', { text: 'Your code is 111111' });
      // Sent, then waited for: caught before the wait began, within its minute, so taken at once.
      const first = await cmd({ clock: heldClock().clock });
      expect(await first.run(inboxWaitRun, { to: 'ada@example.org', extract: 'code' })).toBe(0);
      expect([first.stdout(), first.stderr()]).toEqual(['111111\n', '']);
      // The next wait does not take it again: it waits.
      const { code, ms, c } = await waitFor({ to: 'ada@example.org', extract: 'code' }, async () => {
        await send('bob@example.org', 'Your code', { text: 'Your code is 222222' });
        await send('ada@example.org', 'Your code', { text: 'Your code is 482913' });
      });
      expect(code, c.stderr()).toBe(0);
      expect(c.stdout()).toBe('482913\n');
      expect(ms).toBe(30_000);
      expect(c.stderr()).toMatch(
        /^Waiting up to 30s for a message to ada@example\.org \(received since \d{4}-.+Z\)…\n$/,
      );
    });

    it('exits 1 saying the server stopped when it stops during the wait', async () => {
      const other = await startTestServer();
      const c = await command(other, { configDir });
      const done = c.run(inboxWaitRun, { to: 'nobody@example.org', timeout: 30_000 }, 'svc inbox wait');
      await c.until(({ stderr }) => stderr.includes('Waiting up to 30s'));
      // The held request goes out just after the line: of two requests sent after it, one after the other, the second
      // is answered once it is held.
      for (let i = 0; i < 2; i++) await other.admin('GET', '/sandbox/clock');
      await other.close();
      expect(await done).toBe(1);
      expect(c.stderr()).toContain(
        'error: svc inbox wait: the server stopped while waiting; hint: start it again with `svc serve`',
      );
    });

    it('--subject picks the first matching message (any case, a substring), and --extract link its action link', async () => {
      const { code, c } = await waitFor({ to: 'ada@example.org', subject: 'RESET', extract: 'link' }, async () => {
        await send('ada@example.org', 'Welcome aboard', { text: 'Start at https://app.example.com/welcome' });
        const html = '<p><a href="https://app.example.com/reset?t=1&amp;u=ada">Reset</a></p>';
        await smtp({ from: 'app@example.net', to: 'ada@example.org', subject: 'Reset your password', html });
      });
      expect(code, c.stderr()).toBe(0);
      expect(c.stdout()).toBe('https://app.example.com/reset?t=1&u=ada\n');
    });

    it('--link-text, --link-match and --code-pattern choose another link or code; each says what it did not find', async () => {
      const html =
        '<p><a href="https://app.example.com/view/1">View in browser</a></p><p>Your code is 482913, backup code AB-1234.</p>' +
        '<p><a href="https://app.example.com/invite/accept?t=1">Accept invitation</a></p>' +
        '<p><a href="https://app.example.com/unsubscribe">Unsubscribe</a></p>';
      const run = async (o: Omit<InboxWaitOptions, 'to'>) => {
        await send('ada@example.org', 'You are invited', { html });
        const c = await cmd({ clock: heldClock().clock });
        const exit = await c.run(inboxWaitRun, { to: 'ada@example.org', ...o }, 'svc inbox wait');
        return exit === 0 ? c.stdout() : c.stderr();
      };
      expect(await run({ extract: 'link', linkText: 'UNSUBSCRIBE' })).toBe('https://app.example.com/unsubscribe\n');
      expect(await run({ extract: 'link', linkMatch: '/view/' })).toBe('https://app.example.com/view/1\n');
      expect(await run({ extract: 'code', codePattern: /[A-Z]{2}-(\d{4})/ })).toBe('1234\n');
      expect(await run({ extract: 'link', linkText: 'Reset' })).toMatch(
        /^error: svc inbox wait: eml_\w+ arrived, but it has no link whose text contains "Reset"; hint: its links: "View in browser" https:\/\/app\.example\.com\/view\/1, "Accept invitation" https:\/\/app\.example\.com\/invite\/accept\?t=1, "Unsubscribe" https:\/\/app\.example\.com\/unsubscribe; choose one with --link-text or --link-match\n/,
      );
      expect(await run({ extract: 'code', codePattern: /\d{8}/ })).toMatch(
        /^error: svc inbox wait: eml_\w+ arrived, but it has no code that \/\\d\{8\}\/ matches; hint: see what it says with `svc inbox show eml_\w+`\n/,
      );
    });

    it('--extract code prints the code a person would type, not the first number of the mail', async () => {
      const mails: [string, string, string][] = [
        ['Your Acme order', 'Thanks for order #10423 (2 items).\nYour verification code is 482913.', '482913'],
        ['318604 is your Acme code', 'Hi Ada,\nSomeone is signing in to account 77812345.', '318604'],
        ['Your sign-in code', 'Acme Inc, 1200 Market Street, San Francisco, CA 94103\nYour code: 90 31 17', '903117'],
        ['Verify your phone', 'G-605112 is your Acme verification code.', '605112'],
      ];
      const printed = [];
      for (const [subject, text] of mails) {
        await send('ada@example.org', subject, { text });
        const c = await cmd({ clock: heldClock().clock });
        const exit = await c.run(inboxWaitRun, { to: 'ada@example.org', extract: 'code' }, 'svc inbox wait');
        printed.push(exit === 0 ? c.stdout().trim() : c.stderr());
      }
      expect(printed).toEqual(mails.map((m) => m[2]));
    });

    it("--extract link prints the real target of the mail's action, not the first link nor its tracking redirect", async () => {
      await send('ada@example.org', 'Confirm your email address', {
        html:
          '<p><a href="https://news.example.com/view/8812">View in browser</a></p>' +
          '<a href="https://example.com/"><img src="https://example.com/logo.png" alt="Acme"></a>' +
          '<p><a class="button" href="https://app.example.com/confirm?t=abc&amp;u=1">Confirm email</a></p>' +
          '<p><a href="https://app.example.com/unsubscribe?u=1">Unsubscribe</a></p>',
      });
      const c = await cmd({ clock: heldClock().clock });
      expect(await c.run(inboxWaitRun, { to: 'ada@example.org', extract: 'link' }, 'svc inbox wait')).toBe(0);
      expect(c.stdout()).toBe('https://app.example.com/confirm?t=abc&u=1\n');
    });

    it('takes mail to an envelope-only recipient (a Bcc), and prints the message with --json', async () => {
      const { code, c } = await waitFor(
        { to: 'ada@example.org' },
        async () => {
          await smtp({
            from: 'app@example.net',
            to: 'list@example.org',
            bcc: 'ada@example.org',
            subject: 'Digest',
            text: 'Hello list',
          });
        },
        { json: true },
      );
      expect(code, c.stderr()).toBe(0);
      const m = CaughtMessage.parse(JSON.parse(c.stdout()));
      expect(m).toMatchObject({
        subject: 'Digest',
        text: 'Hello list\n',
        envelope: { rcpt_to: ['list@example.org', 'ada@example.org'] },
      });
    });

    it('takes mail that arrived before it started the oldest first, one a wait, and --since narrows', async () => {
      await send('ada@example.org', 'Code one', { text: 'Your code is 101010' });
      await s.advance(10);
      const between = (await s.admin('GET', '/sandbox/clock')).body.now as string;
      await send('ada@example.org', 'Code two', { text: 'Your code is 202020' });
      await send('ada@example.org', 'Code three', { text: 'Your code is 303030' });
      const codes = [];
      for (const since of [between, undefined, undefined]) {
        const c = await cmd({ clock: heldClock().clock });
        expect(await c.run(inboxWaitRun, { to: 'ada@example.org', since, extract: 'code' })).toBe(0);
        expect(c.stderr()).toBe('');
        codes.push(c.stdout());
      }
      // Since `between`: not the first; then the oldest one left, then the last.
      expect(codes).toEqual(['202020\n', '101010\n', '303030\n']);
    });

    it('follows the service clock: a manual clock moved a day ahead still tells old mail from new', async () => {
      await send('ada@example.org', 'Old code', { text: 'Your code is 300000' });
      await s.advance(86_400);
      const { code, c } = await waitFor({ to: 'ada@example.org', extract: 'code' }, async () => {
        await send('ada@example.org', 'New code', { text: 'Your code is 300001' });
      });
      expect(code, c.stderr()).toBe(0);
      expect(c.stdout()).toBe('300001\n');
    });

    it('times out with exit 1 and a clear message, saying when matching mail came before the minute it looks back', async () => {
      const early = await send('ada@example.org', 'Your code', { text: 'Your code is 654321' });
      await s.advance(61);
      const { code, c } = await waitFor({ to: 'ada@example.org', timeout: 5_000, extract: 'code' }, async (expire) =>
        expire(),
      );
      expect(code).toBe(1);
      expect(c.stdout()).toBe('');
      const [m] = await caught();
      expect(m!.message_id).toBe(early);
      expect(c.stderr()).toMatch(
        new RegExp(
          `error: svc inbox wait: no message to ada@example\\.org arrived within 5s \\(since .+Z\\); hint: the latest one, ${m!.id}, came at .+Z, before the minute before the wait: take it with an earlier --since`,
        ),
      );
      // Taken by a wait, it is named as such.
      const taken = await cmd({ clock: heldClock().clock });
      expect(await taken.run(inboxWaitRun, { to: 'ada@example.org', since: m!.received_at })).toBe(0);
      const again = await waitFor({ to: 'ada@example.org', since: m!.received_at }, async (expire) => expire());
      expect(again.code).toBe(1);
      expect(again.c.stderr()).toContain(
        `hint: the latest one, ${m!.id}, came at ${m!.received_at}, and an earlier wait returned it: see it with \`svc inbox show ${m!.id}\``,
      );

      const none = await waitFor({ to: 'nobody@example.org', subject: 'code' }, async (expire) => expire(), {
        json: true,
      });
      expect(none.code).toBe(1);
      expect(JSON.parse(none.c.stdout()).error).toMatchObject({
        code: 'failed',
        title: expect.stringContaining(
          'no message to nobody@example.org with "code" in its subject arrived within 30s',
        ),
      });
      expect(none.c.stderr()).toContain('hint: check the address, or wait longer with --timeout');
    });

    it('exits 1 when the message has nothing to extract, naming it', async () => {
      const { code, c } = await waitFor({ to: 'ada@example.org', extract: 'code' }, async () => {
        await send('ada@example.org', 'Hello', { text: 'No digits here, only words.' });
      });
      expect(code).toBe(1);
      expect(c.stderr()).toMatch(
        /error: svc inbox wait: eml_\w+ arrived, but it has nothing that reads as a one-time code; hint: see what it says with `svc inbox show eml_\w+`, and say what its code looks like with --code-pattern/,
      );
    });

    it('shows a spinner on a terminal instead of the line, and prints the message for a person', async () => {
      const { code, c } = await waitFor(
        { to: 'ada@example.org' },
        async () => {
          await send('ada@example.org', 'Hi Ada', { text: 'Hello Ada' });
        },
        { tty: true },
      );
      expect(code, c.stderr()).toBe(0);
      expect(c.stderr()).toMatch(/[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] Waiting up to 30s for a message to ada@example\.org/);
      const screen = c.stdout().replace(/\x1b\[[0-9;]*m/g, '');
      expect(c.stdout()).toContain('\x1b[1msubject');
      expect(screen).toMatch(/\nsubject +Hi Ada\n/);
      expect(screen).toMatch(/\n\nHello Ada\n$/);
    });
  });
});
