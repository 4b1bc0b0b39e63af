// Mail clients on the real binary: `svc serve` names its POP3 and IMAP listeners in the ready line, `svc mailbox`
// prints the settings a client wants, and Python's imaplib and poplib log in with them as printed and read the mail
// the sink caught — a workspace's key its own mail, the admin token all of it. The protocols in depth:
// test/integration/pop3.test.ts and imap.test.ts.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, clientEnv, ensureBuilt, killAll, ROOT, serve, stop, type Served } from '../helpers/binary.js';

/** Logs in over IMAP and POP3 as a mail client does, and prints what each lists: subjects, one per line. */
const PYTHON = `
import imaplib, poplib, sys, email
host, imap_port, pop3_port, user, password = sys.argv[1:6]
imap = imaplib.IMAP4(host, int(imap_port))
imap.login(user, password)
imap.select('INBOX', readonly=True)
_, ids = imap.search(None, 'ALL')
for n in ids[0].split():
    _, data = imap.fetch(n, '(BODY.PEEK[HEADER.FIELDS (SUBJECT)])')
    print('imap', email.message_from_bytes(data[0][1])['Subject'])
imap.logout()
pop = poplib.POP3(host, int(pop3_port))
pop.user(user)
pop.pass_(password)
count, _ = pop.stat()
for n in range(1, count + 1):
    _, lines, _ = pop.top(n, 0)
    print('pop3', email.message_from_bytes(b'\\r\\n'.join(lines))['Subject'])
pop.quit()
`;

describe('svc serve for mail clients, and svc mailbox', () => {
  let s: Served;
  let home: string;

  beforeAll(async () => {
    ensureBuilt();
    home = mkdtempSync(join(tmpdir(), 'svc-mailbox-'));
    s = await serve(['--memory', '--clock', 'manual'], { SVC_RUNTIME_DIR: join(home, 'run') });
    // One message from the seeded workspace's key through the API, and one from an app that only speaks to the sink.
    const sent = await fetch(`${s.ready.api}/emails`, {
      method: 'POST',
      headers: { authorization: `Bearer ${s.ready.seed!.api_key_test}`, 'content-type': 'application/json' },
      body: JSON.stringify({ from: 'hi@example.test', to: 'ada@example.org', subject: 'from the API', text: 'Hi' }),
    });
    expect(sent.status).toBe(202);
    const nodemailer = (await import('nodemailer')).default;
    const sink = new URL(s.ready.smtp.replace(/^smtp:/, 'http:'));
    await nodemailer
      .createTransport({ host: sink.hostname, port: Number(sink.port) })
      .sendMail({ from: 'app@example.net', to: 'bo@example.org', subject: 'from an app', text: 'Hello' });
    // Both caught (the API's message is delivered by the workers at once: it is due now).
    for (let i = 0; i < 100; i++) {
      const listed = await fetch(`${s.origin}/sandbox/messages`, {
        headers: { authorization: `Bearer ${s.ready.admin_token}` },
      }).then((r) => r.json() as Promise<{ data: unknown[] }>);
      if (listed.data.length === 2) break;
      await new Promise((r) => setTimeout(r, 50));
    }
  }, 120_000);
  afterAll(async () => {
    if (s) await stop(s);
    killAll();
    rmSync(home, { recursive: true, force: true });
  });

  const svc = (args: string[], extra: Record<string, string> = {}) =>
    execa(process.execPath, [BIN, ...args], {
      env: clientEnv(home, s, extra),
      extendEnv: false,
      reject: false,
      cwd: ROOT,
    });
  const python = (h: string, imap: number, pop3: number, user: string, password: string) =>
    execa('python3', ['-c', PYTHON, h, String(imap), String(pop3), user, password], { reject: false });

  it('names both listeners in the ready line', () => {
    expect(s.ready.pop3).toMatch(/^pop3:\/\/127\.0\.0\.1:\d+$/);
    expect(s.ready.imap).toMatch(/^imap:\/\/127\.0\.0\.1:\d+$/);
  });

  it("prints the settings with the run's API key; a client logged in with them reads that workspace's mail", async () => {
    const r = await svc(['mailbox', '--json'], { SVC_API_KEY: s.ready.seed!.api_key_test! });
    expect(r.exitCode, r.stderr).toBe(0);
    const settings = JSON.parse(r.stdout);
    expect(settings).toEqual({
      host: '127.0.0.1',
      imap_port: Number(new URL(s.ready.imap!).port),
      pop3_port: Number(new URL(s.ready.pop3!).port),
      username: 'svc',
      password: s.ready.seed!.api_key_test,
      sees: 'workspace',
      ca_cert: null,
    });
    const read = await python(
      settings.host,
      settings.imap_port,
      settings.pop3_port,
      settings.username,
      settings.password,
    );
    expect(read.exitCode, read.stderr).toBe(0);
    expect(read.stdout.split('\n')).toEqual(['imap from the API', 'pop3 from the API']);
  });

  it('with --admin, the admin token: every message, the anonymous app mail too', async () => {
    const r = await svc(['mailbox', '--admin']);
    expect(r.exitCode, r.stderr).toBe(0);
    // Piped: label<TAB>value lines.
    const rows = Object.fromEntries(r.stdout.split('\n').map((l) => l.split('\t') as [string, string]));
    expect(rows).toMatchObject({ host: '127.0.0.1', username: 'svc', password: s.ready.admin_token });
    const read = await python(rows.host!, Number(rows['imap port']), Number(rows['pop3 port']), 'me', rows.password!);
    expect(read.exitCode, read.stderr).toBe(0);
    expect(read.stdout.split('\n').sort()).toEqual([
      'imap from an app',
      'imap from the API',
      'pop3 from an app',
      'pop3 from the API',
    ]);
  });

  it('without a server there, says how to start one (exit 1)', async () => {
    const r = await svc(['mailbox'], { SVC_BASE_URL: 'http://127.0.0.1:9/v1' });
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toContain('no local svc serve with IMAP or POP3 is registered for http://127.0.0.1:9/v1');
    expect(r.stderr).toContain('start one with `svc serve`');
  });
});
