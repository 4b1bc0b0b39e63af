// The IMAP server end to end: a real sandbox catching mail, the IMAP server over its core, and real clients —
// imapflow, Python's imaplib (STARTTLS included), neomutt — and a raw socket for what clients hide.
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import type { Socket } from 'node:net';
import { networkInterfaces, tmpdir } from 'node:os';
import { connect as tlsConnect } from 'node:tls';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { ImapFlow } from 'imapflow';
import nodemailer from 'nodemailer';
import type Mail from 'nodemailer/lib/mailer/index.js';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/lib/log.js';
import { createImapServer } from '../../src/server/inbound/imap/server.js';
import { isLoopbackHost } from '../../src/lib/loopback.js';
import type { MailboxServer } from '../../src/server/inbound/mailbox-server.js';
import { imapTalk, imapTalkOn } from '../helpers/imap.js';
import { prng } from '../helpers/prng.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { createKey, newTenant } from '../helpers/tenants.js';

const run = promisify(execFile);
/** imapflow answers false for what it could not get: a test wants the thing. */
function must<T>(v: T | false | undefined): T {
  if (v === false || v === undefined) throw new Error('imapflow got nothing');
  return v;
}

describe('IMAP', () => {
  let s: TestServer;
  let imap: MailboxServer;
  let port: number;
  let key: string;
  const clients: ImapFlow[] = [];

  beforeAll(async () => {
    s = await startTestServer();
    key = s.seed!.api_key_test;
    imap = createImapServer(
      { mailbox: s.core.mailbox, log: silentLogger, isAdminToken: (p) => p === s.adminToken },
      { tls: s.smtpTls },
    );
    port = await imap.listen(0, '127.0.0.1');
  });
  afterAll(async () => {
    for (const c of clients) c.close();
    await imap?.close();
    await s?.close();
  });
  beforeEach(async () => {
    expect((await s.admin('DELETE', '/sandbox/messages')).status).toBe(204);
  });

  const client = async (pass: string, extra: Record<string, unknown> = {}) => {
    const c = new ImapFlow({
      host: '127.0.0.1',
      port,
      secure: false,
      doSTARTTLS: false,
      auth: { user: 'anyone', pass },
      logger: false,
      ...extra,
    } as ConstructorParameters<typeof ImapFlow>[0]);
    clients.push(c);
    await c.connect();
    return c;
  };
  const v1 = async (body: Record<string, unknown>, token = key) => {
    const r = await s.call('POST', '/v1/emails', {
      token,
      body: { from: 'Shop <orders@example.test>', to: 'bob@example.test', ...body },
    });
    expect(r.status, r.text).toBe(202);
    await s.settle();
    return r.body.id as string;
  };
  const smtp = async (mail: Mail.Options) => {
    const t = nodemailer.createTransport({ host: '127.0.0.1', port: s.smtpPort, secure: false, ignoreTLS: true });
    try {
      await t.sendMail({ from: 'Alice <alice@example.test>', to: 'bob@example.test', ...mail });
    } finally {
      t.close();
    }
  };
  const caught = async () => (await s.admin('GET', '/sandbox/messages')).body.data as any[];

  it('lists INBOX, fetches envelope, body structure and source, and searches, for an API key', async () => {
    await v1({ subject: 'Order 1 shipped', text: 'Your parcel is on its way.' });
    await v1({ subject: 'Order 2 receipt', html: '<p>Thanks for <b>ordering</b></p>', text: 'Thanks for ordering' });
    const c = await client(key);
    const boxes = await c.list();
    expect(boxes.map((b) => b.path)).toEqual(['INBOX']);
    const box = await c.mailboxOpen('INBOX');
    expect(box.exists).toBe(2);
    expect(Number(box.uidValidity)).toBeGreaterThan(0);
    const msgs = [];
    for await (const m of c.fetch('1:*', { envelope: true, bodyStructure: true, source: true, flags: true, uid: true }))
      msgs.push(m);
    expect(msgs.map((m) => m.envelope?.subject)).toEqual(['Order 1 shipped', 'Order 2 receipt']);
    expect(msgs[0]!.envelope?.from?.[0]).toMatchObject({ name: 'Shop', address: 'orders@example.test' });
    expect(msgs[0]!.envelope?.to?.[0]?.address).toBe('bob@example.test');
    expect(msgs[1]!.bodyStructure?.type).toBe('multipart/alternative');
    expect(msgs[1]!.bodyStructure?.childNodes?.map((n) => n.type)).toEqual(['text/plain', 'text/html']);
    expect(msgs[0]!.source?.toString()).toContain('Your parcel is on its way.');
    expect(msgs[0]!.uid).toBeLessThan(msgs[1]!.uid);
    // source: true is BODY.PEEK[]: nothing was marked read.
    expect(msgs.every((m) => !m.flags?.has('\\Seen'))).toBe(true);
    expect(await c.search({ subject: 'receipt' })).toEqual([2]);
    expect(await c.search({ body: 'parcel' })).toEqual([1]);
    expect(await c.search({ from: 'orders@example.test' })).toEqual([1, 2]);
    expect(await c.search({ or: [{ subject: 'shipped' }, { body: 'ordering' }] })).toEqual([1, 2]);
    expect(await c.search({ not: { subject: 'shipped' } })).toEqual([2]);
    expect(await c.search({ uid: `${msgs[1]!.uid}` }, { uid: true })).toEqual([msgs[1]!.uid]);
    const today = new Date();
    expect(await c.search({ since: new Date(today.getTime() - 2 * 86400_000) })).toEqual([1, 2]);
    expect(await c.search({ before: new Date('2000-01-01') })).toEqual([]);
    await c.logout();
  });

  it('gives the admin every message and one folder per workspace; fetches the parts of a multipart message', async () => {
    await v1({ subject: 'from the workspace', text: 'hi' });
    await smtp({
      subject: 'Report =?',
      text: 'See the attached report.',
      html: '<p>See the attached report.</p>',
      attachments: [{ filename: 'report.csv', content: 'a,b\n1,2\n' }],
    });
    const c = await client(s.adminToken);
    const boxes = (await c.list()).map((b) => b.path);
    expect(boxes[0]).toBe('INBOX');
    const ws = await s.admin('GET', '/sandbox/messages');
    const wsName = ws.body.data.find((m: any) => m.subject === 'from the workspace').workspace.name as string;
    expect(boxes).toContain(wsName);
    const st = must(await c.status(wsName, { messages: true, unseen: true, uidNext: true }));
    expect(st.messages).toBe(1);
    expect(st.unseen).toBe(1);
    await c.mailboxOpen('INBOX');
    const m = must(await c.fetchOne('*', { bodyStructure: true, envelope: true }));
    expect(m.envelope?.subject).toBe('Report =?');
    const bs = m.bodyStructure!;
    expect(bs.type).toBe('multipart/mixed');
    const att = bs.childNodes!.find((n: { disposition?: string }) => n.disposition === 'attachment')!;
    expect(att.dispositionParameters?.filename).toBe('report.csv');
    const { content } = await c.download('*', att.part);
    const chunks: Buffer[] = [];
    for await (const ch of must(content)) chunks.push(ch as Buffer);
    expect(Buffer.concat(chunks).toString()).toBe('a,b\n1,2\n');
    // Headers by name, and a partial body.
    const h = must(await c.fetchOne('*', { headers: ['subject', 'from'] }));
    // The fields asked for, in the message's order, and the blank line that ends a header block.
    expect(h.headers?.toString()).toBe('From: Alice <alice@example.test>\r\nSubject: Report =?\r\n\r\n');
    await c.logout();
  });

  it('\\Seen both ways: a body read marks it read on the page, and the page’s mark shows in FETCH FLAGS', async () => {
    await v1({ subject: 'one', text: 'one' });
    await v1({ subject: 'two', text: 'two' });
    // BODY[TEXT] (not PEEK) marks message 1 read, and says so with the body.
    const t = await imapTalk(port);
    await t.until(/^\* OK/);
    await t.cmd('a', `LOGIN u ${key}`);
    await t.cmd('b', 'SELECT INBOX');
    expect(await t.cmd('c', 'FETCH 1 BODY.PEEK[TEXT]')).not.toMatch(/Seen/);
    expect(await t.cmd('d', 'FETCH 1 BODY[TEXT]')).toMatch(
      /^\* 1 FETCH \(BODY\[TEXT\] \{\d+\}\r\none.*FLAGS \(\\Seen\)\)\r\nd OK/ms,
    );
    t.destroy();
    const one = (await caught()).find((m) => m.subject === 'one');
    const read = await s.admin('GET', `/sandbox/messages/${one.id}`);
    expect(read.body.read).toBe(true);
    // Marked read on the page (the API), seen by the client.
    const c = await client(key);
    await c.mailboxOpen('INBOX');
    const two = (await caught()).find((m) => m.subject === 'two');
    const r = await s.admin('POST', `/sandbox/messages/${two.id}/read`);
    expect(r.status, r.text).toBe(200);
    const flags = [];
    for await (const m of c.fetch('1:*', { flags: true })) flags.push([...(m.flags ?? [])]);
    expect(flags).toEqual([['\\Seen'], ['\\Seen']]);
    // And back: \Seen removed in the client is unread on the page.
    await c.messageFlagsRemove('1:2', ['\\Seen']);
    for (const m of await caught()) expect((await s.admin('GET', `/sandbox/messages/${m.id}`)).body.read).toBe(false);
    expect(await c.search({ seen: false })).toEqual([1, 2]);
    await c.messageFlagsAdd('2', ['\\Seen']);
    expect(await c.search({ seen: true })).toEqual([2]);
    await c.logout();
  });

  it('\\Deleted and EXPUNGE remove the message from the sandbox; another session hears of it on NOOP', async () => {
    await v1({ subject: 'keep', text: 'a' });
    await v1({ subject: 'drop', text: 'b' });
    await v1({ subject: 'keep too', text: 'c' });
    const watcher = await client(key);
    await watcher.mailboxOpen('INBOX');
    const c = await client(key);
    await c.mailboxOpen('INBOX');
    expect(await c.messageDelete('2')).toBe(true);
    expect((await caught()).map((m) => m.subject).sort()).toEqual(['keep', 'keep too']);
    const left = [];
    for await (const m of c.fetch('1:*', { envelope: true })) left.push(m.envelope?.subject);
    expect(left).toEqual(['keep', 'keep too']);
    const expunged = new Promise<number>((resolve) => watcher.once('expunge', (e: { seq: number }) => resolve(e.seq)));
    await watcher.noop();
    expect(await expunged).toBe(2);
    expect(watcher.mailbox && (watcher.mailbox as { exists: number }).exists).toBe(2);
    await c.logout();
    await watcher.logout();
  });

  it('IDLE tells of a message caught after it began', async () => {
    await v1({ subject: 'before', text: 'x' });
    const c = await client(key);
    await c.mailboxOpen('INBOX');
    const exists = new Promise<number>((resolve) => c.on('exists', (e: { count: number }) => resolve(e.count)));
    const idling = c.idle();
    // imapflow sends IDLE as soon as it is idle; wait for the server's "+" before mail arrives.
    await new Promise<void>((resolve) => {
      const check = () => ((c as unknown as { idling: boolean }).idling ? resolve() : setImmediate(check));
      check();
    });
    await v1({ subject: 'after', text: 'y' });
    expect(await exists).toBe(2);
    const m = must(await c.fetchOne('2', { envelope: true }));
    expect(m.envelope?.subject).toBe('after');
    await c.logout();
    await idling.catch(() => undefined);
  });

  it('keeps workspaces apart: a key of another workspace sees none of this one’s mail', async () => {
    await v1({ subject: 'mine', text: 'x' });
    const other = await newTenant(s, 'imapiso');
    const otherKey = (await createKey(s, other.token, { scopes: ['emails:send'] })).key as string;
    const c = await client(otherKey);
    expect((await c.list()).map((b) => b.path)).toEqual(['INBOX']);
    const box = await c.mailboxOpen('INBOX');
    expect(box.exists).toBe(0);
    expect(await c.search({ all: true })).toEqual([]);
    await c.logout();
  });

  it('imapflow upgrades with STARTTLS, trusting the certificate svc made', async () => {
    await v1({ subject: 'over tls', text: 'x' });
    const c = await client(key, {
      doSTARTTLS: true,
      tls: { ca: [s.smtpTls.cert], checkServerIdentity: () => undefined },
    });
    expect((c as unknown as { secureConnection: boolean }).secureConnection).toBe(true);
    await c.mailboxOpen('INBOX');
    expect(must(await c.fetchOne('1', { envelope: true })).envelope?.subject).toBe('over tls');
    await c.logout();
  });

  it('refuses a wrong password, naming what it must be', async () => {
    const t = await imapTalk(port);
    await t.until(/^\* OK/);
    const r = await t.cmd('a1', 'LOGIN someone "not-a-key"');
    expect(r).toMatch(/^a1 NO \[AUTHENTICATIONFAILED\] .*API key of a workspace.*admin token/m);
    const r2 = await t.cmd('a2', `AUTHENTICATE PLAIN ${Buffer.from(`\0u\0${key}`).toString('base64')}`);
    expect(r2).toMatch(/^a2 OK/m);
    t.destroy();
  });

  it("Python's imaplib: LOGIN, SELECT, SEARCH, FETCH, STORE, EXPUNGE, and STARTTLS", async () => {
    await v1({ subject: 'py one', text: 'first body' });
    await v1({ subject: 'py two', text: 'second body' });
    const script = join(tmpdir(), `imap-${process.pid}.py`);
    writeFileSync(
      script,
      `
import imaplib, ssl, sys, json
port, password = int(sys.argv[1]), sys.argv[2]
out = {}
m = imaplib.IMAP4('127.0.0.1', port)
ctx = ssl.create_default_context(); ctx.check_hostname = False; ctx.verify_mode = ssl.CERT_NONE
out['starttls'] = m.starttls(ssl_context=ctx)[0]
out['caps_after_tls'] = 'STARTTLS' in m.capabilities
out['login'] = m.login('user', password)[0]
typ, data = m.select('INBOX')
out['exists'] = data[0].decode()
typ, data = m.search(None, 'SUBJECT', '"py two"')
out['search'] = data[0].decode()
typ, data = m.fetch('2', '(BODY.PEEK[HEADER.FIELDS (SUBJECT)] RFC822.SIZE)')
out['fetch'] = data[0][1].decode()
typ, data = m.uid('SEARCH', None, 'ALL')
uids = data[0].decode().split()
out['uids'] = len(uids)
typ, data = m.store('1', '+FLAGS', '(\\\\Deleted)')
out['store'] = data[0].decode()
typ, data = m.expunge()
out['expunge'] = [d.decode() for d in data]
typ, data = m.search(None, 'ALL')
out['after'] = data[0].decode()
m.close()
out['logout'] = m.logout()[0]
print(json.dumps(out))
`,
    );
    const { stdout } = await run('python3', [script, String(port), key]);
    const out = JSON.parse(stdout);
    expect(out).toMatchObject({
      starttls: 'OK',
      caps_after_tls: false,
      login: 'OK',
      exists: '2',
      search: '2',
      uids: 2,
      expunge: ['1'],
      after: '1',
      logout: 'BYE',
    });
    expect(out.fetch).toBe('Subject: py two\r\n\r\n');
    expect(out.store).toBe('1 (FLAGS (\\Deleted))');
    expect((await caught()).map((m) => m.subject)).toEqual(['py two']);
  });
  it('neomutt (in a pseudo-terminal) lists the mailbox, pipes a message out, and deletes one', async () => {
    await v1({ subject: 'hello neomutt', text: 'read me in a terminal' });
    await v1({ subject: 'delete me', text: 'x' });
    const dir = mkdtempSync(join(tmpdir(), 'imap-neomutt-'));
    const piped = join(dir, 'piped.eml');
    const settings = [
      'set imap_user=anyone',
      `imap_pass=${key}`,
      'ssl_starttls=no ssl_force_tls=no imap_passive=yes mail_check=0 header_cache= message_cachedir= wait_key=no delete=yes',
    ].join(' ');
    const keys = `<pipe-message>cat > ${piped}<enter><next-entry><delete-message><sync-mailbox><exit>`;
    const cmd = `neomutt -F /dev/null -n -e '${settings}' -f imap://127.0.0.1:${port}/INBOX -e 'push "${keys}"'`;
    // neomutt needs a terminal: script(1) gives it one.
    // In the test's directory: whatever neomutt writes beside it (a cache) goes with it.
    await run('script', ['-qfc', cmd, '/dev/null'], {
      cwd: dir,
      env: { ...process.env, TERM: 'xterm' },
      timeout: 30_000,
    });
    expect(readFileSync(piped, 'utf8')).toMatch(/^Subject: hello neomutt\r?$/m);
    expect((await caught()).map((m) => m.subject)).toEqual(['hello neomutt']);
    rmSync(dir, { recursive: true, force: true });
  });
});

describe('IMAP over a raw socket', () => {
  let s: TestServer;
  let imap: MailboxServer;
  let port: number;
  let key: string;
  const logged: string[] = [];
  const log = {
    debug: (m: string, f?: object) => void logged.push(m + JSON.stringify(f ?? {})),
    info: (m: string, f?: object) => void logged.push(m + JSON.stringify(f ?? {})),
    warn: (m: string, f?: object) => void logged.push(m + JSON.stringify(f ?? {})),
    error: (m: string, f?: object) => void logged.push(m + JSON.stringify(f ?? {})),
  };
  const servers: MailboxServer[] = [];
  const another = async (opts: { maxConnections?: number; idleTimeoutMs?: number }) => {
    const srv = createImapServer(
      { mailbox: s.core.mailbox, log: silentLogger, isAdminToken: (p) => p === s.adminToken },
      { tls: s.smtpTls, ...opts },
    );
    servers.push(srv);
    return srv.listen(0, '127.0.0.1');
  };
  const session = async (p = port) => {
    const t = await imapTalk(p);
    await t.until(/^\* OK/);
    return t;
  };

  beforeAll(async () => {
    s = await startTestServer();
    key = s.seed!.api_key_test;
    imap = createImapServer(
      { mailbox: s.core.mailbox, log, isAdminToken: (p) => p === s.adminToken },
      { tls: s.smtpTls },
    );
    port = await imap.listen(0, '127.0.0.1');
    const r = await s.call('POST', '/v1/emails', {
      token: key,
      body: { from: 'Shop <orders@example.test>', to: 'bob@example.test', subject: 'raw one', text: 'hello raw' },
    });
    expect(r.status, r.text).toBe(202);
    await s.settle();
  });
  afterAll(async () => {
    for (const x of servers) await x.close();
    await imap?.close();
    await s?.close();
  });

  it('greets with its capabilities; answers unknown commands, bad syntax and wrong states with BAD, and goes on', async () => {
    const t = await imapTalk(port);
    expect(await t.until(/^\* OK/)).toMatch(/^\* OK \[CAPABILITY IMAP4rev1 .*IDLE.*UIDPLUS.*STARTTLS AUTH=PLAIN\] /);
    expect(await t.cmd('a1', 'FROBNICATE')).toMatch(/^a1 BAD Unknown command/m);
    expect(await t.cmd('a2', 'FETCH 1 FLAGS')).toMatch(/^a2 BAD FETCH needs you to log in first/m);
    expect(await t.cmd('a3', 'SELECT INBOX')).toMatch(/^a3 BAD /m);
    t.write(')))\r\n');
    expect(await t.until(/^\* BAD/)).toMatch(/Invalid tag/);
    expect(await t.cmd('a4', 'LOGIN "unterminated')).toMatch(/^a4 BAD Line break inside a quoted string/m);
    // A password as a synchronizing literal: "+", then the bytes.
    t.write(`a5 LOGIN {4}\r\n`);
    expect(await t.until(/^\+ /)).toMatch(/^\+ /);
    t.write(`user {${key.length}}\r\n`);
    await t.until(/^\+ /);
    t.write(`${key}\r\n`);
    expect(await t.until(/^a5 /)).toMatch(/^a5 OK \[CAPABILITY [^\]]*\] Logged in/m);
    expect(await t.cmd('a6', 'LOGIN u p')).toMatch(/^a6 BAD LOGIN is not valid once logged in/m);
    expect(await t.cmd('a7', 'FETCH 1 FLAGS')).toMatch(/^a7 BAD FETCH needs a selected mailbox/m);
    expect(await t.cmd('a8', 'SELECT Nowhere')).toMatch(/^a8 NO \[NONEXISTENT\]/m);
    const sel = await t.cmd('a9', 'EXAMINE INBOX');
    expect(sel).toMatch(/^\* 1 EXISTS\r\n/m);
    expect(sel).toMatch(/^\* OK \[UIDVALIDITY \d+\]/m);
    expect(sel).toMatch(/^\* OK \[UIDNEXT \d+\]/m);
    expect(sel).toMatch(/^\* OK \[UNSEEN 1\]/m);
    expect(sel).toMatch(/^a9 OK \[READ-ONLY\]/m);
    expect(await t.cmd('b1', 'FETCH 5 FLAGS')).toMatch(/^b1 BAD Invalid message sequence number/m);
    expect(await t.cmd('b2', 'FETCH 1 (FLAGS FROB)')).toMatch(/^b2 BAD Unknown fetch item: FROB/m);
    expect(await t.cmd('b3', 'FETCH 0:1 FLAGS')).toMatch(/^b3 BAD /m);
    expect(await t.cmd('b4', 'STORE 1 +FLAGS (\\Seen)')).toMatch(/^b4 NO \[READ-ONLY\]/m);
    expect(await t.cmd('b5', 'SEARCH CHARSET KOI8-R ALL')).toMatch(/^b5 NO \[BADCHARSET/m);
    expect(await t.cmd('b6', 'SEARCH FROB')).toMatch(/^b6 BAD Unknown search key/m);
    // LITERAL+: the literal comes without waiting for "+".
    expect(await t.cmd('b7', 'SEARCH SUBJECT {3+}\r\nraw')).toMatch(/^\* SEARCH 1\r\nb7 OK/m);
    // EXAMINE's BODY[] leaves the message unread.
    const body = await t.cmd('b8', 'FETCH 1 (BODY[] BODY[HEADER.FIELDS.NOT (To From)]<0.8> RFC822.SIZE INTERNALDATE)');
    expect(body).toMatch(/BODY\[\] \{\d+\}\r\n/);
    expect(body).toMatch(/BODY\[HEADER\.FIELDS\.NOT \(TO FROM\)\]<0> \{8\}\r\n/);
    expect(body).toMatch(/INTERNALDATE "\d\d-[A-Z][a-z]{2}-\d{4} \d\d:\d\d:\d\d \+0000"/);
    expect(body).not.toMatch(/\\Seen/);
    expect(await t.cmd('b9', 'CREATE Foo')).toMatch(/^b9 NO \[CANNOT\]/m);
    expect(await t.cmd('b0', 'STARTTLS')).toMatch(/^b0 BAD STARTTLS is not valid once logged in/m);
    expect(await t.cmd('c1', 'APPEND INBOX {10}')).toMatch(/^c1 NO APPEND is not supported/m);
    expect(await t.cmd('c2', 'LOGOUT')).toMatch(/^\* BYE .*\r\nc2 OK/m);
    await t.closed;
    expect(logged.join('\n')).not.toContain(key);
  });

  it('takes the commands Thunderbird sends, in its lower case and order, AUTHENTICATE after "+" included', async () => {
    const t = await session();
    expect(await t.cmd('1', 'capability')).toMatch(/^1 OK/m);
    t.write('2 authenticate PLAIN\r\n');
    await t.until(/^\+ /);
    t.write(`${Buffer.from(`\0thunderbird\0${key}`).toString('base64')}\r\n`);
    expect(await t.until(/^2 /)).toMatch(/^2 OK/m);
    expect(await t.cmd('3', 'namespace')).toMatch(/^\* NAMESPACE \(\("" "\/"\)\) NIL NIL\r\n3 OK/m);
    expect(await t.cmd('4', 'lsub "" "*"')).toMatch(/^\* LSUB \(\\HasNoChildren\) "\/" "INBOX"\r\n4 OK/m);
    expect(await t.cmd('5', 'list "" "INBOX"')).toMatch(/^\* LIST \(\\HasNoChildren\) "\/" "INBOX"\r\n5 OK/m);
    expect(await t.cmd('6', 'select "INBOX"')).toMatch(/^6 OK \[READ-WRITE\]/m);
    const flags = await t.cmd('7', 'UID fetch 1:* (FLAGS)');
    const uid = Number(/^\* 1 FETCH \(UID (\d+) FLAGS/m.exec(flags)![1]);
    const fields =
      'From To Cc Bcc Subject Date Message-ID Priority X-Priority References Newsgroups In-Reply-To Content-Type Reply-To';
    const head = await t.cmd('8', `UID fetch ${uid} (UID RFC822.SIZE FLAGS BODY.PEEK[HEADER.FIELDS (${fields})])`);
    expect(head).toMatch(/Subject: raw one\r\n/);
    expect(head).toMatch(/RFC822\.SIZE \d+/);
    const body = await t.cmd('9', `UID fetch ${uid} (UID RFC822.SIZE BODY.PEEK[])`);
    expect(body).toMatch(/hello raw/);
    expect(await t.cmd('10', `UID store ${uid} +Flags (\\Seen)`)).toMatch(/FLAGS \(\\Seen\) UID \d+\)\r\n10 OK/);
    expect(await t.cmd('11', `UID store ${uid} -Flags (\\Seen)`)).toMatch(/FLAGS \(\) UID \d+\)\r\n11 OK/);
    t.write('12 IDLE\r\n');
    await t.until(/^\+ idling/);
    t.write('DONE\r\n');
    expect(await t.until(/^12 /)).toMatch(/^12 OK IDLE terminated/m);
    t.write('13 authenticate PLAIN\r\n');
    expect(await t.until(/^13 /)).toMatch(/^13 BAD AUTHENTICATE is not valid once logged in/m);
    expect(await t.cmd('14', 'logout')).toMatch(/^\* BYE/m);
  });

  it('answers an over-long line or literal BAD without keeping it, and takes the next command', async () => {
    const t = await session();
    t.write(`l1 NOOP ${'x'.repeat(70 * 1024)}\r\n`);
    expect(await t.until(/^l1 /)).toMatch(/^l1 BAD Command line too long/m);
    expect(await t.cmd('l2', 'NOOP')).toMatch(/^l2 OK/m);
    t.write('l3 LOGIN u {100000}\r\n');
    expect(await t.until(/^l3 /)).toMatch(/^l3 BAD Literal too large/m);
    t.write(`l4 LOGIN u {100000+}\r\n${'y'.repeat(100000)}\r\n`);
    expect(await t.until(/^l4 /)).toMatch(/^l4 BAD Literal too large/m);
    expect(await t.cmd('l5', 'CAPABILITY')).toMatch(/^\* CAPABILITY .*\r\nl5 OK/m);
    t.destroy();
  });

  it('says BYE to a client silent for too long, and to one past the connection limit', async () => {
    const quiet = await another({ idleTimeoutMs: 200 });
    const t = await session(quiet);
    expect(await t.closed).toMatch(/^\* BYE Autologout; idle for too long\r\n$/);
    const full = await another({ maxConnections: 1 });
    const first = await session(full);
    const second = await imapTalk(full);
    expect(await second.closed).toBe('* BYE Too many connections; try again later\r\n');
    expect(await first.cmd('n', 'NOOP')).toMatch(/^n OK/m);
    first.destroy();
  });

  it('renumbers on EXPUNGE: UID EXPUNGE removes only the UIDs named, EXPUNGE the rest marked', async () => {
    for (const n of [2, 3, 4, 5]) {
      const r = await s.call('POST', '/v1/emails', {
        token: key,
        body: { from: 'Shop <orders@example.test>', to: 'bob@example.test', subject: `raw ${n}`, text: `body ${n}` },
      });
      expect(r.status, r.text).toBe(202);
    }
    await s.settle();
    const t = await session();
    await t.cmd('a', `LOGIN u ${key}`);
    expect(await t.cmd('b', 'SELECT INBOX')).toMatch(/^\* 5 EXISTS/m);
    // .SILENT: no untagged FETCH.
    expect(await t.cmd('c', 'STORE 2,4 +FLAGS.SILENT (\\Deleted)')).toMatch(/^c OK/);
    const listed = await t.cmd('d', 'UID FETCH 1:* (FLAGS)');
    const uids = [...listed.matchAll(/^\* (\d) FETCH \(UID (\d+) FLAGS \(([^)]*)\)\)/gm)].map((m) => [
      Number(m[1]),
      Number(m[2]),
      m[3],
    ]);
    expect(uids.map(([seq, , flags]) => [seq, flags])).toEqual([
      [1, ''],
      [2, '\\Deleted'],
      [3, ''],
      [4, '\\Deleted'],
      [5, ''],
    ]);
    expect(await t.cmd('e', 'SEARCH DELETED')).toMatch(/^\* SEARCH 2 4\r\n/m);
    expect(await t.cmd('f', `UID EXPUNGE ${uids[3]![1]}`)).toMatch(/^\* 4 EXPUNGE\r\nf OK/m);
    expect(await t.cmd('g', 'EXPUNGE')).toMatch(/^\* 2 EXPUNGE\r\ng OK/m);
    const left = await t.cmd('h', 'FETCH 1:* (UID BODY.PEEK[HEADER.FIELDS (SUBJECT)])');
    expect([...left.matchAll(/Subject: (raw \w+)/g)].map((m) => m[1])).toEqual(['raw one', 'raw 3', 'raw 5']);
    expect(await t.cmd('j', `UID STORE ${uids[2]![1]} +FLAGS (\\Seen)`)).toMatch(
      new RegExp(`^\\* 2 FETCH \\(FLAGS \\(\\\\Seen\\) UID ${uids[2]![1]}\\)\r\nj OK`, 'm'),
    );
    // New mail shows on NOOP; a read mark set on the page too.
    const r = await s.call('POST', '/v1/emails', {
      token: key,
      body: { from: 'Shop <orders@example.test>', to: 'bob@example.test', subject: 'raw 6', text: 'body 6' },
    });
    expect(r.status, r.text).toBe(202);
    await s.settle();
    const first = (await s.admin('GET', '/sandbox/messages?q=subject:"raw one"')).body.data[0];
    expect((await s.admin('POST', `/sandbox/messages/${first.id}/read`)).status).toBe(200);
    const noop = await t.cmd('n', 'NOOP');
    expect(noop).toMatch(/^\* 1 FETCH \(FLAGS \(\\Seen\) UID \d+\)\r\n/m);
    expect(noop).toMatch(/^\* 4 EXISTS\r\n/m);
    expect(await t.cmd('k', 'CLOSE')).toMatch(/^k OK/);
    expect(await t.cmd('l', 'FETCH 1 FLAGS')).toMatch(/^l BAD/m);
    t.destroy();
    const subjects = (await s.admin('GET', '/sandbox/messages')).body.data.map((m: any) => m.subject).sort();
    expect(subjects).toEqual(['raw 3', 'raw 5', 'raw 6', 'raw one']);
  });

  it('answers every one of 400 random commands with its tag, and stays up (seeded fuzz)', async () => {
    const seed = 20261202;
    const r = prng(seed);
    const words = [
      'FETCH',
      'UID',
      'STORE',
      'SEARCH',
      'SELECT',
      'EXAMINE',
      'LIST',
      'LSUB',
      'STATUS',
      'NOOP',
      'CHECK',
      'EXPUNGE',
      'CAPABILITY',
      'COPY',
      'CREATE',
      'SUBSCRIBE',
      'NAMESPACE',
      'UNSELECT',
      'ID',
      'APPEND',
      'INBOX',
      '1',
      '*',
      '1:*',
      '2,4:7',
      '0',
      '99999999999',
      'BODY[',
      'BODY.PEEK[',
      ']',
      '<0.10>',
      '<5>',
      '(',
      ')',
      '"',
      '"x y"',
      '\\Seen',
      '\\Deleted',
      '+FLAGS',
      '-FLAGS.SILENT',
      'FLAGS',
      'HEADER.FIELDS',
      '(SUBJECT FROM)',
      'TEXT',
      'MIME',
      '1.2.3',
      'OR',
      'NOT',
      'SINCE',
      '1-Jan-2026',
      '31-Foo-99',
      'CHARSET',
      'UTF-8',
      'ENVELOPE',
      'BODYSTRUCTURE',
      'RFC822',
      'NIL',
      '{3}',
      '{2+}',
      '%',
      '""',
      '\\',
      'ALL',
      'FULL',
      'UNSEEN',
      'LARGER',
      'HEADER',
      'X-Foo',
      'MESSAGES',
    ];
    const t = await session();
    await t.cmd('a', `LOGIN u ${key}`);
    await t.cmd('b', 'SELECT INBOX');
    for (let i = 0; i < 400; i++) {
      const parts: string[] = [];
      for (let n = r.int(8); n >= 0; n--) {
        parts.push(
          r.chance(0.1)
            ? r
                .bytes(r.size(40))
                .toString('latin1')
                .replace(/[\r\n]/g, ' ')
            : r.pick(words),
        );
      }
      // A line may not end in a literal's announcement (the fuzz would have to send its bytes).
      const line = `f${i} ${parts.join(r.chance(0.9) ? ' ' : '')} x`;
      t.write(Buffer.from(`${line}\r\n`, 'latin1'));
      const answer = await t.until(new RegExp(`^f${i} (OK|NO|BAD)`));
      expect(answer, `seed ${seed}, command ${i}: ${line}`).toMatch(new RegExp(`^f${i} (OK|NO|BAD) .+\r\n$`, 'm'));
      // A command the server failed on would be a bug: every one is answered for what it is.
      expect(answer, `seed ${seed}, command ${i}: ${line}`).not.toMatch(/SERVERBUG/);
    }
    expect(await t.cmd('z', 'NOOP')).toMatch(/^z OK/m);
    t.destroy();
  });

  it('takes a password from another address only over TLS: LOGINDISABLED until STARTTLS', async () => {
    expect(['127.0.0.1', '127.9.8.7', '::1', '::ffff:127.0.0.1'].every(isLoopbackHost)).toBe(true);
    expect(['192.0.2.2', '::ffff:10.0.0.1', 'fd00::2', ''].some(isLoopbackHost)).toBe(false);
    const outside = Object.values(networkInterfaces())
      .flat()
      .find((a) => a && !a.internal && a.family === 'IPv4')?.address;
    // A machine with no address but loopback has no other address to come from.
    if (!outside) return;
    const wide = createImapServer(
      { mailbox: s.core.mailbox, log: silentLogger, isAdminToken: (p) => p === s.adminToken },
      { tls: s.smtpTls },
    );
    servers.push(wide);
    const p = await wide.listen(0, outside);
    const t = await imapTalk(p, outside);
    expect(await t.until(/^\* OK/)).toMatch(/STARTTLS LOGINDISABLED\]/);
    expect(await t.cmd('a', `LOGIN u ${key}`)).toMatch(/^a NO \[PRIVACYREQUIRED\] Issue STARTTLS first/m);
    expect(await t.cmd('b', 'AUTHENTICATE PLAIN')).toMatch(/^b NO \[PRIVACYREQUIRED\]/m);
    expect(await t.cmd('c', 'STARTTLS')).toMatch(/^c OK/m);
    const secure = tlsConnect({ socket: t.socket, rejectUnauthorized: false });
    await new Promise((resolve) => secure.once('secureConnect', resolve));
    const st = imapTalkOn(secure as unknown as Socket);
    expect(await st.cmd('d', 'CAPABILITY')).toMatch(/^\* CAPABILITY (?!.*STARTTLS).*AUTH=PLAIN\r\n/m);
    expect(await st.cmd('e', `LOGIN u ${key}`)).toMatch(/^e OK/m);
    st.destroy();
  });

  it('throttles failed logins from one address: NO [UNAVAILABLE]', async () => {
    const t = await session();
    let last = '';
    for (let i = 0; i < 31; i++) last = await t.cmd(`f${i}`, 'LOGIN u wrong');
    expect(last).toMatch(/^f30 NO \[UNAVAILABLE\] Too many failed logins from this address; try again in \d+ seconds/m);
    // The log says who was refused and why, never the password.
    expect(logged).toContain('imap login refused{"ip":"127.0.0.1","reason":"invalid_token"}');
    expect(logged).toContain('imap login refused{"ip":"127.0.0.1","reason":"rate_limited"}');
    expect(logged.join('\n')).not.toMatch(/wrong/);
    t.destroy();
  });

  it('answers NO [SERVERBUG] when the store fails under a command, and goes on', async () => {
    const gone = await startTestServer();
    const srv = createImapServer(
      { mailbox: gone.core.mailbox, log: silentLogger, isAdminToken: (p) => p === gone.adminToken },
      { tls: gone.smtpTls },
    );
    servers.push(srv);
    const t = await session(await srv.listen(0, '127.0.0.1'));
    expect(await t.cmd('a', `LOGIN u ${gone.adminToken}`)).toMatch(/^a OK/m);
    expect(await t.cmd('b', 'SELECT INBOX')).toMatch(/^b OK/m);
    // The sandbox closes its database under the session.
    await gone.close();
    expect(await t.cmd('c', 'NOOP')).toMatch(/^c NO \[SERVERBUG\] /m);
    expect(await t.cmd('d', 'CAPABILITY')).toMatch(/^d OK/m);
    t.destroy();
  });

  it('says BYE to every session when it closes', async () => {
    const p = await another({});
    const t = await session(p);
    await servers.pop()!.close();
    expect(await t.closed).toBe('* BYE Server shutting down\r\n');
  });
});
