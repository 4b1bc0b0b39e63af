// The POP3 server (src/server/inbound/pop3/) over real sockets against a real sandbox: Python's poplib for what a
// mail client does (STAT, LIST, UIDL, RETR, TOP, DELE and QUIT, STLS, AUTH PLAIN), the inbox API to see what it
// changed (the read mark, deletions), and a raw socket for what a client library never sends.
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect as tlsConnect } from 'node:tls';
import { promisify } from 'node:util';
import nodemailer from 'nodemailer';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/lib/log.js';
import { MAILBOX_PAGE } from '../../src/server/core/mailbox.js';
import type { MailboxServer, MailboxServerOptions } from '../../src/server/inbound/mailbox-server.js';
import { createPop3Server } from '../../src/server/inbound/pop3/server.js';
import { ingest } from '../../src/server/inbound/sink.js';
import { popTalk, popTalkOn, type PopTalk } from '../helpers/pop3.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { createKey, newTenant } from '../helpers/tenants.js';

const run = promisify(execFile);

let s: TestServer;
let pop: MailboxServer;
let port: number;

async function startPop3(o: Partial<MailboxServerOptions> = {}): Promise<{ server: MailboxServer; port: number }> {
  const server = createPop3Server(
    { mailbox: s.core.mailbox, log: silentLogger, isAdminToken: (p) => p === s.adminToken },
    { tls: s.smtpTls, ...o },
  );
  return { server, port: await server.listen(0, '127.0.0.1') };
}

/** A message caught by the sink, filed under the workspace of `key` (none: no workspace); resolves with its id. */
async function catchMail(subject: string, body: string, key?: string): Promise<string> {
  const t = nodemailer.createTransport({
    host: '127.0.0.1',
    port: s.smtpPort,
    secure: false,
    ignoreTLS: true,
    ...(key ? { auth: { user: 'app', pass: key } } : {}),
  });
  try {
    await t.sendMail({
      envelope: { from: 'alice@example.test', to: ['bob@example.test'] },
      raw: `From: alice@example.test\r\nTo: bob@example.test\r\nSubject: ${subject}\r\nMessage-ID: <${subject.replace(/\W/g, '-')}.${Math.random()}@example.test>\r\n\r\n${body}`,
    });
  } finally {
    t.close();
  }
  const r = await s.admin('GET', `/sandbox/messages?q=${encodeURIComponent(`subject:"${subject}"`)}`);
  expect(r.status, r.text).toBe(200);
  expect(r.body.data, `caught ${subject}`).toHaveLength(1);
  return r.body.data[0].id;
}

const messageOf = async (id: string) => (await s.admin('GET', `/sandbox/messages/${id}`)).body;
const allIds = async () =>
  ((await s.admin('GET', '/sandbox/messages?limit=100')).body.data as { id: string }[]).map((m) => m.id).sort();

/** A poplib script's JSON output; PORT, PASSWORD and CA (the server's certificate) are in its environment. */
async function python(script: string, password: string, popPort = port): Promise<any> {
  const { stdout } = await run('python3', ['-c', script], {
    env: { PATH: process.env.PATH!, PORT: String(popPort), PASSWORD: password, CA: s.smtpTls.cert.toString() },
  });
  return JSON.parse(stdout);
}

const PY_HEAD = `
import json, os, poplib, ssl, base64
def connect():
    return poplib.POP3('127.0.0.1', int(os.environ['PORT']), timeout=20)
def text(lines):
    return [l.decode('latin1') for l in lines]
out = {}
`;

/** Greeted and logged in with `password` over a raw socket. */
async function loggedIn(password: string, p = port): Promise<PopTalk> {
  const t = await popTalk(p);
  expect(await t.line()).toMatch(/^\+OK /);
  t.write(`USER anyone\r\nPASS ${password}\r\n`);
  expect(await t.line()).toMatch(/^\+OK /);
  expect(await t.line(), 'logged in').toMatch(/^\+OK Logged in/);
  return t;
}

beforeAll(async () => {
  s = await startTestServer();
  ({ server: pop, port } = await startPop3());
});
afterAll(async () => {
  await pop?.close();
  await s?.close();
});
beforeEach(async () => {
  expect((await s.admin('DELETE', '/sandbox/messages')).status).toBe(204);
});

describe("a mail client's session (Python's poplib)", () => {
  it('STAT, LIST, UIDL, TOP and RETR: numbers in the order caught, UIDL the inbox id, dot-stuffing undone by the client', async () => {
    const key = s.seed!.api_key_test;
    const first = await catchMail('First', 'Hello\r\n.leading dot\r\n..two dots\r\n.\r\nlast line\r\n', key);
    const second = await catchMail('Second', 'l1\r\nl2\r\nl3\r\n', key);
    const out = await python(
      `${PY_HEAD}
p = connect()
out['welcome'] = p.getwelcome().decode()
p.user('whoever')
p.pass_(os.environ['PASSWORD'])
out['stat'] = list(p.stat())
resp, lines, _ = p.list()
out['list'] = text(lines)
out['list1'] = p.list(2).decode()
out['uidl'] = text(p.uidl()[1])
out['uidl2'] = p.uidl(2).decode()
out['top'] = text(p.top(2, 1)[1])
out['retr'] = text(p.retr(1)[1])
out['quit'] = p.quit().decode()
print(json.dumps(out))
`,
      key,
    );
    expect(out.welcome).toMatch(/^\+OK svc POP3 server ready/);
    const sizes = [(await messageOf(first)).size, (await messageOf(second)).size];
    expect(out.stat).toEqual([2, sizes[0] + sizes[1]]);
    expect(out.list).toEqual([`1 ${sizes[0]}`, `2 ${sizes[1]}`]);
    expect(out.list1).toBe(`+OK 2 ${sizes[1]}`);
    expect(out.uidl).toEqual([`1 ${first}`, `2 ${second}`]);
    expect(out.uidl2).toBe(`+OK 2 ${second}`);
    expect(out.top.slice(-2)).toEqual(['', 'l1']);
    expect(out.top).toContain('Subject: Second');
    expect(out.top).not.toContain('l2');
    const body = out.retr.slice(out.retr.indexOf('') + 1);
    expect(body).toEqual(['Hello', '.leading dot', '..two dots', '.', 'last line']);
    expect(out.quit).toMatch(/^\+OK /);
  });

  it('RETR marks the message read on the inbox page; TOP does not', async () => {
    const key = s.seed!.api_key_test;
    const retrieved = await catchMail('Retrieved', 'body\r\n', key);
    const peeked = await catchMail('Peeked', 'body\r\n', key);
    await python(
      `${PY_HEAD}
p = connect()
p.user('u'); p.pass_(os.environ['PASSWORD'])
p.retr(1); p.top(2, 5)
p.quit()
print(json.dumps(out))
`,
      key,
    );
    expect((await messageOf(retrieved)).read).toBe(true);
    expect((await messageOf(peeked)).read).toBe(false);
  });

  it('DELE marks and QUIT removes; RSET unmarks; a session ending without QUIT removes nothing', async () => {
    const key = s.seed!.api_key_test;
    const a = await catchMail('A', 'a\r\n', key);
    const b = await catchMail('B', 'b\r\n', key);
    const c = await catchMail('C', 'c\r\n', key);
    const out = await python(
      `${PY_HEAD}
p = connect()
p.user('u'); p.pass_(os.environ['PASSWORD'])
p.dele(1)
p.rset()
p.dele(2)
try:
    p.retr(2)
except poplib.error_proto as e:
    out['retr_deleted'] = e.args[0].decode()
out['stat'] = list(p.stat())
out['list'] = text(p.list()[1])
# Without QUIT nothing goes.
q = connect()
q.user('u'); q.pass_(os.environ['PASSWORD'])
q.dele(3)
q.sock.close()
out['quit'] = p.quit().decode()
print(json.dumps(out))
`,
      key,
    );
    expect(out.retr_deleted).toBe('-ERR Message 2 is marked deleted');
    expect(out.stat[0]).toBe(2);
    expect(out.list.map((l: string) => l.split(' ')[0])).toEqual(['1', '3']);
    expect(out.quit).toBe('+OK Bye: 1 messages removed');
    expect(await allIds()).toEqual([a, c].sort());
    expect((await s.admin('GET', `/sandbox/messages/${b}`)).status).toBe(404);
  });

  it('STLS upgrades to TLS with the given certificate; CAPA then no longer offers STLS; USER/PASS over it', async () => {
    const key = s.seed!.api_key_test;
    await catchMail('Over TLS', 'secret\r\n', key);
    const out = await python(
      `${PY_HEAD}
p = connect()
out['capa_before'] = sorted(p.capa().keys())
ctx = ssl.create_default_context(cadata=os.environ['CA'])
ctx.check_hostname = False
out['stls'] = p.stls(context=ctx).decode()
out['cipher'] = p.sock.version()
out['capa_after'] = sorted(p.capa().keys())
p.user('u'); p.pass_(os.environ['PASSWORD'])
out['stat'] = list(p.stat())
p.quit()
print(json.dumps(out))
`,
      key,
    );
    expect(out.capa_before).toEqual(
      ['AUTH-RESP-CODE', 'IMPLEMENTATION', 'PIPELINING', 'RESP-CODES', 'SASL', 'STLS', 'TOP', 'UIDL', 'USER'].sort(),
    );
    expect(out.stls).toMatch(/^\+OK/);
    expect(out.cipher).toMatch(/^TLSv1\.[23]$/);
    expect(out.capa_after).not.toContain('STLS');
    expect(out.capa_after).toContain('USER');
    expect(out.stat[0]).toBe(1);
  });

  it('AUTH PLAIN, with an initial response and after an empty challenge; a wrong password is -ERR [AUTH] naming what it must be', async () => {
    const key = s.seed!.api_key_test;
    await catchMail('Plain', 'x\r\n', key);
    const out = await python(
      `${PY_HEAD}
def plain(pw):
    return base64.b64encode(b'\\0user\\0' + pw.encode()).decode()
p = connect()
try:
    p._shortcmd('AUTH PLAIN ' + plain('svc_test_wrong'))
except poplib.error_proto as e:
    out['wrong'] = e.args[0].decode()
out['initial'] = p._shortcmd('AUTH PLAIN ' + plain(os.environ['PASSWORD'])).decode()
out['stat'] = list(p.stat())
p.quit()
q = connect()
out['challenge'] = q._shortcmd('AUTH PLAIN').decode()
out['response'] = q._shortcmd(plain(os.environ['PASSWORD'])).decode()
q.quit()
print(json.dumps(out))
`,
      key,
    );
    expect(out.wrong).toMatch(/^-ERR \[AUTH\] .*API key of a workspace.*admin token/);
    expect(out.initial).toMatch(/^\+OK Logged in: 1 messages/);
    expect(out.stat[0]).toBe(1);
    expect(out.challenge).toBe('+ ');
    expect(out.response).toMatch(/^\+OK Logged in/);
  });

  it("a workspace's key sees its mail alone; the admin token sees every message", async () => {
    const other = await newTenant(s, 'pop3-b');
    const keyB = (await createKey(s, other.token, { scopes: ['emails:send'] })).key;
    const keyA = s.seed!.api_key_test;
    const ofA = await catchMail('Of A', 'a\r\n', keyA);
    const ofB = await catchMail('Of B', 'b\r\n', keyB);
    const ofNone = await catchMail('Of nobody', 'n\r\n');
    // One login after another, each password on a line of PASSWORD: the UIDL listing of each maildrop.
    const [ofKeyA, ofKeyB, all] = await python(
      `${PY_HEAD}
drops = []
for pw in os.environ['PASSWORD'].split('\\n'):
    p = connect()
    p.user('u'); p.pass_(pw)
    drops.append([l.decode().split(' ')[1] for l in p.uidl()[1]])
    p.quit()
print(json.dumps(drops))
`,
      [keyA, keyB, s.adminToken].join('\n'),
    );
    expect(ofKeyA).toEqual([ofA]);
    expect(ofKeyB).toEqual([ofB]);
    // The admin's maildrop is every caught message (the new tenant's sign-up mail too), in the order caught.
    expect(all).toEqual(await allIds());
    expect(all.filter((id: string) => [ofA, ofB, ofNone].includes(id))).toEqual([ofA, ofB, ofNone]);
  });

  it('mail sent through the API reaches the maildrop of the sending workspace once delivered', async () => {
    const r = await s.call('POST', '/v1/emails', {
      token: s.seed!.api_key_test,
      body: {
        from: `Shop <orders@${s.seed!.domain}>`,
        to: 'pop3-reader@example.test',
        subject: 'Via the API',
        text: 'Hi',
      },
    });
    expect(r.status, r.text).toBe(202);
    await s.settle();
    const out = await python(
      `${PY_HEAD}
p = connect()
p.user('u'); p.pass_(os.environ['PASSWORD'])
msg = b'\\r\\n'.join(p.retr(1)[1]).decode()
print(json.dumps({'subject': [l for l in msg.split('\\r\\n') if l.startswith('Subject:')]}))
p.quit()
`,
      s.seed!.api_key_test,
    );
    expect(out.subject).toEqual(['Subject: Via the API']);
  });
});

describe('neomutt, a terminal mail client', () => {
  /** Runs neomutt on the maildrop with `settings` and the keys `push`ed, in a terminal of its own (script(1)). */
  async function neomutt(settings: string, push: string): Promise<void> {
    const line = [
      'neomutt -n -F /dev/null',
      `-e ${shellQuote(`set pop_user=anyone; set pop_pass=${s.adminToken}; set header_cache=""; ${settings}`)}`,
      `-f pop://127.0.0.1:${port}/`,
      `-e ${shellQuote(`push "${push}"`)}`,
    ].join(' ');
    await run('script', ['-qec', line, '/dev/null'], {
      // Whatever neomutt writes beside it (a cache) goes to the system's temporary directory, not the checkout.
      cwd: tmpdir(),
      env: { PATH: process.env.PATH!, TERM: 'xterm' },
      timeout: 20_000,
    });
  }
  const shellQuote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

  it('over STLS with the given certificate: fetches every message (dot-stuffed lines intact) and deletes one', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'svc-pop3-'));
    try {
      writeFileSync(join(dir, 'cert.pem'), s.smtpTls.cert);
      await catchMail('Mutt one', 'first\r\n.dotted\r\n');
      await catchMail('Mutt two', 'second\r\n');
      const tls = `set ssl_starttls=yes; set ssl_force_tls=yes; set certificate_file=${dir}/cert.pem; set ssl_verify_host=no`;
      await neomutt(
        `${tls}; set confirmappend=no; set confirmcreate=no; set mbox_type=mbox`,
        `<tag-pattern>~A<enter><tag-prefix><copy-message>${dir}/got.mbox<enter><exit>`,
      );
      const mbox = readFileSync(join(dir, 'got.mbox'), 'latin1');
      expect(mbox.match(/^Subject: .*$/gm)).toEqual(['Subject: Mutt one', 'Subject: Mutt two']);
      expect(mbox).toMatch(/^first\n\.dotted\n/m);
      await neomutt(`${tls}; set delete=yes; set quit=yes`, '<delete-pattern>~s \\"Mutt one\\"<enter><quit>');
      const left = (await s.admin('GET', '/sandbox/messages')).body.data.map((m: { subject: string }) => m.subject);
      expect(left).toEqual(['Mutt two']);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('a raw conversation', () => {
  it('answers bad commands, wrong states, bad arguments and over-long lines with -ERR and goes on', async () => {
    const t = await popTalk(port);
    expect(await t.line()).toMatch(/^\+OK /);
    const say = async (cmd: string) => {
      t.write(`${cmd}\r\n`);
      return t.line();
    };
    expect(await say('FOO')).toMatch(/^-ERR Unknown command: FOO/);
    expect(await say('')).toBe('-ERR Empty command');
    expect(await say('STAT')).toMatch(/^-ERR STAT needs a login first/);
    expect(await say('RETR 1')).toMatch(/^-ERR RETR needs a login first/);
    expect(await say('NOOP')).toMatch(/^-ERR NOOP needs a login first/);
    expect(await say('PASS nothing')).toBe('-ERR PASS must follow USER');
    expect(await say(`USER ${'x'.repeat(300)}`)).toMatch(/^-ERR Command line too long: at most 255 octets/);
    expect(await say('AUTH CRAM-MD5')).toMatch(/^-ERR Unsupported SASL mechanism CRAM-MD5/);
    expect(await say('AUTH PLAIN !!!!')).toMatch(/^-ERR Malformed AUTH PLAIN response/);
    expect(await say(`AUTH PLAIN ${Buffer.from('no-nuls').toString('base64')}`)).toMatch(/^-ERR Malformed/);
    expect(await say('AUTH PLAIN')).toBe('+ ');
    expect(await say('*')).toBe('-ERR Authentication cancelled');
    expect(await say('AUTH')).toBe('+OK SASL mechanisms follow');
    expect(await t.body()).toEqual(['PLAIN']);
    expect(await say('APOP user digest')).toMatch(/^-ERR APOP is not supported/);
    expect(await say('USER anyone')).toMatch(/^\+OK /);
    expect(await say(`PASS ${s.seed!.api_key_test}`)).toMatch(/^\+OK Logged in: 0 messages/);
    expect(await say('USER again')).toMatch(/^-ERR USER is only valid before login/);
    expect(await say('STLS')).toMatch(/^-ERR STLS is only valid before login/);
    expect(await say('RETR')).toBe('-ERR RETR takes one message number');
    expect(await say('RETR 1')).toBe('-ERR No message 1: the maildrop has 0 messages');
    expect(await say('RETR x')).toBe('-ERR Invalid message number: x');
    expect(await say('LIST 0')).toBe('-ERR No message 0: the maildrop has 0 messages');
    expect(await say('LIST 1 2')).toBe('-ERR LIST takes at most a message number');
    expect(await say('TOP 1')).toMatch(/^-ERR TOP takes/);
    expect(await say('DELE')).toMatch(/^-ERR DELE takes/);
    expect(await say('STAT now')).toBe('-ERR STAT takes no arguments');
    expect(await say('noop')).toBe('+OK');
    expect(await say('STAT')).toBe('+OK 0 0');
    expect(await say('QUIT')).toBe('+OK Bye: 0 messages removed');
    await t.closed;
  });

  it('takes pipelined commands in order, a big message among them', async () => {
    const key = s.seed!.api_key_test;
    const line = `${'.'.repeat(1)}${'y'.repeat(76)}\r\n`;
    await catchMail('Big', line.repeat(20_000), key);
    await catchMail('Small', 'small\r\n', key);
    const t = await popTalk(port);
    expect(await t.line()).toMatch(/^\+OK /);
    t.write(`CAPA\r\nUSER u\r\nPASS ${key}\r\nRETR 1\r\nTOP 2 0\r\nSTAT\r\nQUIT\r\n`);
    expect(await t.line()).toBe('+OK Capability list follows');
    expect(await t.body()).toContain('PIPELINING');
    expect(await t.line()).toMatch(/^\+OK /);
    expect(await t.line()).toMatch(/^\+OK Logged in: 2 messages/);
    expect(await t.line()).toMatch(/^\+OK \d+ octets$/);
    const big = await t.body();
    const body = big.slice(big.indexOf('') + 1);
    expect(body).toHaveLength(20_000);
    expect(body.every((l) => l === `..${'y'.repeat(76)}`)).toBe(true);
    expect(await t.line()).toBe('+OK Top of message follows');
    expect((await t.body()).at(-1)).toBe('');
    expect(await t.line()).toMatch(/^\+OK 2 \d+$/);
    expect(await t.line()).toBe('+OK Bye: 0 messages removed');
    await t.closed;
  });

  it('a client pipelining commands faster than it reads their answers gets every answer, in order', async () => {
    const t = await loggedIn(s.seed!.api_key_test);
    const n = 200_000;
    const capa =
      '+OK Capability list follows\r\nTOP\r\nUIDL\r\nRESP-CODES\r\nAUTH-RESP-CODE\r\nPIPELINING\r\nIMPLEMENTATION svc-mail\r\n.\r\n';
    const stat = '+OK 0 0\r\n';
    // 20 MB of answers, counted as bytes. The server stops reading commands while its answers wait to be taken, so
    // what it holds stays small however much the client sends.
    t.socket.removeAllListeners('data');
    let got = 0;
    let tail = '';
    const all = new Promise<void>((resolve) => {
      t.socket.on('data', (d: Buffer) => {
        got += d.length;
        tail = (tail + d.toString('latin1')).slice(-capa.length - stat.length);
        if (got >= n * capa.length + stat.length) resolve();
      });
    });
    t.socket.write(Buffer.from(`${'CAPA\r\n'.repeat(n)}STAT\r\n`));
    await all;
    expect(got).toBe(n * capa.length + stat.length);
    expect(tail).toBe(capa + stat);
    t.destroy();
  });

  it('a maildrop of more messages than a page of core.mailbox: STAT, LIST and UIDL count and list every one', async () => {
    const total = MAILBOX_PAGE * 2 + 100;
    for (let i = 0; i < total; i++) {
      const raw = Buffer.from(`From: a@example.test\r\nTo: b@example.test\r\nSubject: n${i}\r\n\r\nbody ${i}\r\n`);
      await ingest({ inbox: s.core.inbox, log: silentLogger }, raw, {
        mailFrom: 'a@example.test',
        rcptTo: ['b@example.test'],
      });
    }
    const t = await loggedIn(s.adminToken);
    t.write('STAT\r\nLIST\r\nUIDL\r\nLIST 1100\r\nQUIT\r\n');
    expect(await t.line()).toMatch(new RegExp(`^\\+OK ${total} \\d+$`));
    expect(await t.line()).toMatch(new RegExp(`^\\+OK ${total} messages`));
    const list = await t.body();
    expect(list.map((l) => Number(l.split(' ')[0]))).toEqual(Array.from({ length: total }, (_, i) => i + 1));
    expect(await t.line()).toBe(`+OK ${total} messages`);
    const uidl = (await t.body()).map((l) => l.split(' ')[1]);
    expect(new Set(uidl).size).toBe(total);
    // The ids are in the order caught (they are time-ordered), and are the inbox's own.
    expect(uidl).toEqual([...uidl].sort());
    expect((await messageOf(uidl[1099]!)).subject).toBe('n1099');
    expect(await t.line()).toMatch(/^\+OK 1100 \d+$/);
    expect(await t.line()).toMatch(/^\+OK Bye/);
    t.destroy();
  });

  it('a message deleted by someone else meanwhile: RETR says it is gone; DELE of it and QUIT still succeed', async () => {
    const key = s.seed!.api_key_test;
    const gone = await catchMail('Gone soon', 'x\r\n', key);
    const other = await catchMail('Other', 'y\r\n', key);
    const t = await loggedIn(key);
    expect((await s.admin('DELETE', `/sandbox/messages/${gone}`)).status).toBe(204);
    t.write('LIST\r\n');
    expect(await t.line()).toMatch(/^\+OK 2 messages/);
    expect(await t.body()).toHaveLength(2);
    t.write('RETR 1\r\n');
    expect(await t.line()).toBe(
      `-ERR Message 1 (${gone}) is gone: it was deleted after this session began (on the inbox page or by another client)`,
    );
    t.write('TOP 1 0\r\n');
    expect(await t.line()).toMatch(/^-ERR Message 1 .* is gone/);
    t.write('DELE 1\r\nDELE 2\r\nQUIT\r\n');
    expect(await t.line()).toMatch(/^\+OK Message 1 marked deleted/);
    expect(await t.line()).toMatch(/^\+OK Message 2 marked deleted/);
    expect(await t.line()).toBe('+OK Bye: 1 messages removed');
    await t.closed;
    expect(await allIds()).toEqual([]);
    expect(other).toMatch(/^eml_/);
  });

  it('a line of megabytes without a line end is answered -ERR and the connection closed', async () => {
    const t = await popTalk(port);
    expect(await t.line()).toMatch(/^\+OK /);
    const junk = Buffer.alloc(1024 * 1024, 0x41);
    for (let i = 0; i < 4 && !t.socket.destroyed; i++) t.socket.write(junk);
    expect(await t.line()).toMatch(/^-ERR Line too long/);
    await t.closed;
  });

  it('STLS over a raw socket: the bytes sent in the clear after STLS are dropped, not taken as commands', async () => {
    const t = await popTalk(port);
    expect(await t.line()).toMatch(/^\+OK /);
    // A command injected behind STLS in the same write (the STARTTLS injection of RFC 2595 section 3.1's concern).
    t.write('STLS\r\nUSER injected\r\n');
    expect(await t.line()).toBe('+OK Begin TLS negotiation');
    t.socket.removeAllListeners('data');
    const secure = await new Promise<PopTalk>((resolve, reject) => {
      const socket = tlsConnect({ socket: t.socket, ca: s.smtpTls.cert, checkServerIdentity: () => undefined }, () =>
        resolve(popTalkOn(socket)),
      );
      socket.once('error', reject);
    });
    secure.write('PASS nothing\r\nSTLS\r\nQUIT\r\n');
    expect(await secure.line()).toBe('-ERR PASS must follow USER');
    expect(await secure.line()).toBe('-ERR Already using TLS');
    expect(await secure.line()).toBe('+OK Bye');
    secure.destroy();

    // A client that answers STLS with anything but a TLS handshake is disconnected; the server goes on.
    const bad = await popTalk(port);
    expect(await bad.line()).toMatch(/^\+OK /);
    bad.write('STLS\r\n');
    expect(await bad.line()).toBe('+OK Begin TLS negotiation');
    bad.write('NOOP\r\n');
    await bad.closed;
    const after = await popTalk(port);
    expect(await after.line()).toMatch(/^\+OK /);
    after.destroy();
  });
});

describe('limits', () => {
  it('a client silent for idleTimeoutMs is told -ERR and disconnected, logged in or not', async () => {
    const { server, port: p } = await startPop3({ idleTimeoutMs: 150 });
    try {
      const t = await popTalk(p);
      expect(await t.line()).toMatch(/^\+OK /);
      expect(await t.line()).toMatch(/^-ERR Autologout: no command for 150 ms; closing$/);
      await t.closed;
      const u = await loggedIn(s.seed!.api_key_test, p);
      expect(await u.line()).toMatch(/^-ERR Autologout/);
      await u.closed;
    } finally {
      await server.close();
    }
  });

  it('one connection over maxConnections is told -ERR [SYS/TEMP] and closed; the others go on', async () => {
    const { server, port: p } = await startPop3({ maxConnections: 2 });
    try {
      const a = await popTalk(p);
      const b = await popTalk(p);
      expect(await a.line()).toMatch(/^\+OK /);
      expect(await b.line()).toMatch(/^\+OK /);
      const c = await popTalk(p);
      expect(await c.line()).toMatch(/^-ERR \[SYS\/TEMP\] Too many connections \(at most 2\)/);
      await c.closed;
      a.write('QUIT\r\n');
      expect(await a.line()).toBe('+OK Bye');
      await a.closed;
      const d = await popTalk(p);
      expect(await d.line()).toMatch(/^\+OK /);
      b.write('NOOP\r\n');
      expect(await b.line()).toMatch(/^-ERR NOOP needs a login/);
      b.destroy();
      d.destroy();
    } finally {
      await server.close();
    }
  });

  it('after 30 failed logins from an address, the 31st — a right password too — is -ERR [SYS/TEMP] with the wait', async () => {
    // A sandbox of its own: the failed logins of 127.0.0.1 are counted across the server.
    const own = await startTestServer();
    const server = createPop3Server(
      { mailbox: own.core.mailbox, log: silentLogger, isAdminToken: (pw) => pw === own.adminToken },
      { tls: own.smtpTls },
    );
    try {
      const p = await server.listen(0, '127.0.0.1');
      const t = await popTalk(p);
      expect(await t.line()).toMatch(/^\+OK /);
      for (let i = 0; i < 30; i++) t.write(`USER u\r\nPASS svc_test_wrong${i}\r\n`);
      for (let i = 0; i < 30; i++) {
        expect(await t.line()).toMatch(/^\+OK /);
        expect(await t.line()).toMatch(/^-ERR \[AUTH\] /);
      }
      t.write(`USER u\r\nPASS ${own.seed!.api_key_test}\r\n`);
      expect(await t.line()).toMatch(/^\+OK /);
      expect(await t.line()).toMatch(
        /^-ERR \[SYS\/TEMP\] Too many failed logins from 127\.0\.0\.1; try again in \d+ seconds$/,
      );
      // The admin token is no failed login and is not throttled.
      t.write(`USER u\r\nPASS ${own.adminToken}\r\n`);
      expect(await t.line()).toMatch(/^\+OK /);
      expect(await t.line()).toMatch(/^\+OK Logged in/);
      t.destroy();
    } finally {
      await server.close();
      await own.close();
    }
  });
});
