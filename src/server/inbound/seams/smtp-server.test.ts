// The smtp-server seam. Its fast path (smtp-server-fast.ts) replaces a method of smtp-server and mirrors another: these
// tests hold it to the library it was written against (the pinned version, the text of both methods, the library still
// waiting where the sink does not), show that a conversation reads the same on both paths, and that the seam takes the
// library's own connections by itself when the library is not the one pinned.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { AddressInfo, Socket } from 'node:net';
import { SMTPServer } from 'smtp-server';
import { SMTPConnection } from 'smtp-server/lib/smtp-connection.js';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { connect as tlsConnect } from 'node:tls';
import { smtpTalk, smtpTalkOn, type SmtpTalk } from '../../../../test/helpers/smtp.js';
import { makeCertificate } from '../tls.js';
import { stockForced } from '../../seams/choose.js';
import { SMTP_SERVER_PINNED, connectionsPath, selectConnections } from './smtp-server.js';
import { useSinkConnections } from './smtp-server-fast.js';

const oneLine = (f: { toString(): string }) => f.toString().replace(/\s+/g, ' ');

describe('smtp-server as smtp-server-fast.ts knows it', () => {
  it('is the version the seam pins, and package.json and the lock pin it exactly', () => {
    const installed = createRequire(import.meta.url)('smtp-server/package.json').version as string;
    // After an upgrade: run these tests against the new version, then move the seam's pin (or leave the stock path).
    expect(installed, 'the version smtp-server-fast.ts is written for').toBe(SMTP_SERVER_PINNED);
    const pkg = JSON.parse(readFileSync(new URL('../../../../package.json', import.meta.url), 'utf8'));
    expect(pkg.dependencies['smtp-server']).toBe(installed);
    const lock = JSON.parse(readFileSync(new URL('../../../../package-lock.json', import.meta.url), 'utf8'));
    expect(lock.packages[''].dependencies['smtp-server']).toBe(installed);
  });

  it('has the init() that smtp-server-fast.ts replaces: the connection limit, then a 100 ms timer before connectionReady()', () => {
    expect(oneLine(SMTPConnection.prototype.init)).toBe(
      oneLine(`init() {
        // Setup event handlers for the socket
        this._setListeners(() => {
            // Check that connection limit is not exceeded
            if (this._server.options.maxClients && this._server.connections.size > this._server.options.maxClients) {
                return this.send(421, this.name + ' Too many connected clients, try again in a moment', false);
            }
            // Keep a small delay for detecting early talkers
            let readyTimer = setTimeout(() => this.connectionReady(), 100);
            // Unref timer so connection init delay doesn't prevent process exit
            readyTimer.unref();
        });
    }`),
    );
  });

  it('has the onSecure() that smtp-server-fast.ts wraps: it calls back on a later turn, after which the TLS socket is read', () => {
    expect(oneLine(SMTPServer.prototype.onSecure)).toBe(
      oneLine(`onSecure(socket, session, callback) {
        setImmediate(callback);
    }`),
    );
  });

  it('has the connect() that smtp-server-fast.ts mirrors', () => {
    expect(oneLine(SMTPServer.prototype.connect)).toBe(
      oneLine(`connect(socket, socketOptions) {
        let connection = new SMTPConnection(this, socket, socketOptions);
        this.connections.add(connection);
        connection.on('error', err => this._onError(err));
        connection.on('connect', data => this._onClientConnect(data));
        connection.init();
    }`),
    );
  });
});

describe("the sink's connections", () => {
  const cleanup: (() => Promise<void> | void)[] = [];
  afterEach(async () => {
    vi.useRealTimers();
    for (const f of cleanup.splice(0).reverse()) await f();
  });

  /**
   * Connects to `server` and resolves once the server has set the connection up: smtp-server hands an accepted socket
   * to connect() on the next turn (setImmediate), so a setImmediate queued after the accept runs after it.
   */
  async function connectTo(server: SMTPServer): Promise<SmtpTalk> {
    const accepted = new Promise<void>((resolve) => server.server.once('connection', () => setImmediate(resolve)));
    const talk = await smtpTalk((server.server.address() as AddressInfo).port);
    cleanup.push(() => talk.destroy());
    await accepted;
    return talk;
  }

  async function listening(server: SMTPServer): Promise<SMTPServer> {
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    cleanup.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
    return server;
  }

  /**
   * A server as smtp-server makes it, or (`prompt`) as the seam's fast path changes it; counts the messages it takes. With
   * `tls`, it offers STARTTLS with that certificate, or (`secure`) speaks TLS from the start.
   */
  async function start(
    prompt: boolean,
    tls?: { cert: Buffer; key: Buffer; secure?: boolean },
  ): Promise<{ server: SMTPServer; taken: () => number }> {
    let taken = 0;
    const server = new SMTPServer({
      authOptional: true,
      ...(tls ? { cert: tls.cert, key: tls.key, secure: Boolean(tls.secure) } : {}),
      disabledCommands: tls ? ['AUTH'] : ['STARTTLS', 'AUTH'],
      disableReverseLookup: true,
      logger: false,
      // As the sink answers them: at once.
      onConnect: (_session, callback) => callback(),
      onMailFrom: (_address, _session, callback) => callback(),
      onRcptTo: (_address, _session, callback) => callback(),
      onData(stream, _session, callback) {
        stream.resume();
        stream.on('end', () => {
          taken++;
          callback();
        });
      },
    });
    if (prompt) useSinkConnections(server, SMTPConnection);
    return { server: await listening(server), taken: () => taken };
  }

  /**
   * A whole conversation with `server`, each command written once the reply before it is in (a client that waits for
   * the greeting), the MAIL, RCPT and DATA of a message pipelined; over TLS after STARTTLS when given the `ca`. Every
   * reply, in order.
   */
  async function conversation(server: SMTPServer, ca?: Buffer): Promise<string[]> {
    let talk = await connectTo(server);
    const replies: string[] = [];
    const say = async (command: string, answers = 1) => {
      talk.write(command);
      for (let i = 0; i < answers; i++) replies.push(await talk.reply());
    };
    replies.push(await talk.reply());
    await say('EHLO client.example.test\r\n');
    if (ca) {
      await say('STARTTLS\r\n');
      talk.socket.removeAllListeners('data');
      talk = await new Promise<SmtpTalk>((resolve, reject) => {
        const socket = tlsConnect({ socket: talk.socket, ca, servername: 'localhost' }, () =>
          resolve(smtpTalkOn(socket)),
        );
        socket.once('error', reject);
      });
      cleanup.push(() => talk.destroy());
      await say('EHLO client.example.test\r\n');
    }
    for (const subject of ['one', 'two']) {
      await say('MAIL FROM:<alice@example.test>\r\nRCPT TO:<bob@example.test>\r\nDATA\r\n', 3);
      await say(`From: alice@example.test\r\nSubject: ${subject}\r\n\r\nHello.\r\n.\r\n`);
    }
    await say('RSET\r\n');
    await say('NOOP\r\n');
    await say('VRFY bob\r\n');
    await say('FROB\r\n');
    await say('MAIL FROM:alice\r\n');
    await say('QUIT\r\n');
    await talk.closed;
    return replies;
  }

  it('read the same on both paths: a conversation with the fast path is, reply for reply, the library’s own', async () => {
    const fast = await start(true);
    const stock = await start(false);
    const replies = await conversation(fast.server);
    expect(replies.map((r) => r.slice(0, 3))).toEqual([
      '220',
      '250',
      ...['250', '250', '354', '250'],
      ...['250', '250', '354', '250'],
      '250',
      '250',
      '252',
      '500',
      '501',
      '221',
    ]);
    expect(replies).toEqual(await conversation(stock.server));
    expect([fast.taken(), stock.taken()]).toEqual([2, 2]);

    const { cert, key } = await makeCertificate(Date.now());
    const fastTls = await start(true, { cert, key });
    const stockTls = await start(false, { cert, key });
    const overTls = await conversation(fastTls.server, cert);
    expect(overTls.slice(0, 4).map((r) => r.slice(0, 3))).toEqual(['220', '250', '220', '250']);
    expect(overTls).toEqual(await conversation(stockTls.server, cert));
  });

  it('the library waits for a 100 ms timer before it greets, and answers a client that talks first with 421', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const { server } = await start(false);

    const patient = await connectTo(server);
    expect(vi.getTimerCount()).toBe(1);
    const greeting = patient.reply();
    vi.advanceTimersByTime(100);
    expect(await greeting).toMatch(/^220 /);

    const early = await connectTo(server);
    early.write('EHLO client.example.test\r\n');
    expect(await early.reply()).toMatch(/^421 .*You talk too soon/);
  });

  it('useSinkConnections makes it greet at once, with no timer to wait for, and answers a client that talks first in order', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const { server, taken } = await start(true);

    const patient = await connectTo(server);
    expect(vi.getTimerCount()).toBe(0);
    expect(await patient.reply()).toMatch(/^220 /);
    patient.write('EHLO client.example.test\r\n');
    expect(await patient.reply()).toMatch(/^250[- ]/);

    // The whole conversation in the first write, before reading anything: caught like any pipelining client's.
    const early = await connectTo(server);
    early.write(
      'EHLO client.example.test\r\nMAIL FROM:<alice@example.test>\r\nRCPT TO:<bob@example.test>\r\nDATA\r\n' +
        'From: alice@example.test\r\nTo: bob@example.test\r\nSubject: in one breath\r\n\r\nHello.\r\n.\r\nQUIT\r\n',
    );
    const codes: string[] = [];
    for (let i = 0; i < 7; i++) codes.push((await early.reply()).slice(0, 3));
    expect(codes).toEqual(['220', '250', '250', '250', '354', '250', '221']);
    await early.closed;
    expect(taken()).toBe(1);
    // Nothing was left to greet a second time.
    vi.advanceTimersByTime(1000);
    patient.write('NOOP\r\n');
    expect(await patient.reply()).toMatch(/^250 /);
  });

  it('answer the commands of one read in one write', async () => {
    const { server } = await start(true);
    const talk = await connectTo(server);
    expect(await talk.reply()).toMatch(/^220 /);
    talk.write('EHLO client.example.test\r\n');
    await talk.reply();

    // What the connection's socket is asked to write, write by write.
    const socket = [...server.connections][0]!._socket;
    const writes: string[][] = [];
    const [write, writev] = [socket._write, socket._writev!];
    socket._write = function (chunk, encoding, cb) {
      writes.push([String(chunk)]);
      return write.call(this, chunk, encoding, cb);
    };
    socket._writev = function (chunks, cb) {
      writes.push(chunks.map((c) => String(c.chunk)));
      return writev.call(this, chunks, cb);
    };
    talk.write('MAIL FROM:<alice@example.test>\r\nRCPT TO:<bob@example.test>\r\nDATA\r\n');
    const codes = [
      (await talk.reply()).slice(0, 3),
      (await talk.reply()).slice(0, 3),
      (await talk.reply()).slice(0, 3),
    ];
    expect(codes).toEqual(['250', '250', '354']);
    expect(writes).toHaveLength(1);
    expect(writes[0]!.join('')).toMatch(/^250 .*\r\n250 .*\r\n354 .*\r\n$/);
  });

  /** What the server side of a connection is asked to write from now on, write by write. */
  function writesOf(socket: Socket): string[][] {
    const writes: string[][] = [];
    const [write, writev] = [socket._write, socket._writev!];
    socket._write = function (chunk, encoding, cb) {
      writes.push([String(chunk)]);
      return write.call(this, chunk, encoding, cb);
    };
    socket._writev = function (chunks, cb) {
      writes.push(chunks.map((c) => String(c.chunk)));
      return writev.call(this, chunks, cb);
    };
    return writes;
  }

  it('over TLS too: a STARTTLS session, and an implicit TLS one that is greeted at once, answer the commands of one read in one write', async () => {
    const { cert, key } = await makeCertificate(Date.now());
    const pipelined = 'MAIL FROM:<alice@example.test>\r\nRCPT TO:<bob@example.test>\r\nDATA\r\n';

    const starttls = await start(true, { cert, key });
    const plain = await connectTo(starttls.server);
    expect(await plain.reply()).toMatch(/^220 /);
    plain.write('EHLO client.example.test\r\n');
    expect(await plain.reply()).toMatch(/^250[- ]STARTTLS\r$/m);
    plain.write('STARTTLS\r\n');
    expect(await plain.reply()).toMatch(/^220 /);
    plain.socket.removeAllListeners('data');
    const upgraded = await new Promise<SmtpTalk>((resolve, reject) => {
      const socket = tlsConnect({ socket: plain.socket, ca: cert, servername: 'localhost' }, () =>
        resolve(smtpTalkOn(socket)),
      );
      socket.once('error', reject);
    });
    cleanup.push(() => upgraded.destroy());
    upgraded.write('EHLO client.example.test\r\n');
    expect(await upgraded.reply()).toMatch(/^250[- ]/);
    const afterStarttls = writesOf([...starttls.server.connections][0]!._socket);
    upgraded.write(pipelined);
    const codes = [
      (await upgraded.reply()).slice(0, 3),
      (await upgraded.reply()).slice(0, 3),
      (await upgraded.reply()).slice(0, 3),
    ];
    expect(codes).toEqual(['250', '250', '354']);
    expect(afterStarttls).toHaveLength(1);

    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const implicit = await start(true, { cert, key, secure: true });
    const port = (implicit.server.server.address() as AddressInfo).port;
    const secure = await new Promise<SmtpTalk>((resolve, reject) => {
      const socket = tlsConnect({ host: '127.0.0.1', port, ca: cert, servername: 'localhost' }, () =>
        resolve(smtpTalkOn(socket)),
      );
      socket.once('error', reject);
    });
    cleanup.push(() => secure.destroy());
    // No 100 ms timer between the handshake and the greeting.
    expect(await secure.reply()).toMatch(/^220 /);
    expect(vi.getTimerCount()).toBe(0);
    secure.write('EHLO client.example.test\r\n');
    await secure.reply();
    const overTls = writesOf([...implicit.server.connections][0]!._socket);
    secure.write(pipelined);
    const more = [
      (await secure.reply()).slice(0, 3),
      (await secure.reply()).slice(0, 3),
      (await secure.reply()).slice(0, 3),
    ];
    expect(more).toEqual(['250', '250', '354']);
    expect(overTls).toHaveLength(1);
    secure.write('Subject: over TLS\r\n\r\nHello.\r\n.\r\n');
    expect(await secure.reply()).toMatch(/^250 /);
    expect(implicit.taken()).toBe(1);
  });
});

describe('the choice of path', () => {
  const lib = { version: SMTP_SERVER_PINNED, SMTPConnection, SMTPServer };

  it('is the fast path for the smtp-server pinned, with every private part the fast path uses', () => {
    expect(selectConnections(lib, {})).toEqual({ path: 'fast', why: `smtp-server ${SMTP_SERVER_PINNED}, as pinned` });
  });

  it('is the stock path, by itself, for another version of smtp-server', () => {
    const choice = selectConnections({ ...lib, version: '3.22.0' }, {});
    expect(choice.path).toBe('stock');
    expect(choice.why).toMatch(/smtp-server 3\.22\.0 is installed; the fast path is written for 3\.21\.6/);
    expect(selectConnections({ ...lib, version: null }, {}).path).toBe('stock');
  });

  it('is the stock path, by itself, for the pinned version without a private part it uses', () => {
    // A connection class whose init() became something else, a server that lost a private method, no connection file.
    class Renamed extends SMTPConnection {}
    Object.defineProperty(Renamed.prototype, '_setListeners', { value: undefined });
    expect(selectConnections({ ...lib, SMTPConnection: Renamed }, {})).toMatchObject({
      path: 'stock',
      why: expect.stringMatching(/lacks SMTPConnection\.prototype\._setListeners$/),
    });
    class Quiet extends SMTPServer {}
    Object.defineProperty(Quiet.prototype, '_onClientConnect', { value: undefined });
    expect(selectConnections({ ...lib, SMTPServer: Quiet }, {}).why).toMatch(
      /SMTPServer\.prototype\._onClientConnect$/,
    );
    expect(selectConnections({ ...lib, SMTPConnection: undefined }, {}).why).toMatch(/lacks lib\/smtp-connection\.js$/);
    expect(selectConnections({ ...lib, SMTPConnection: {} }, {}).why).toMatch(/lacks SMTPConnection$/);
  });

  it('is the stock path whenever SVC_STOCK_SEAMS is set', () => {
    expect(selectConnections(lib, { SVC_STOCK_SEAMS: '1' })).toEqual({ path: 'stock', why: 'SVC_STOCK_SEAMS is set' });
    expect(selectConnections(lib, { SVC_STOCK_SEAMS: '0' }).path).toBe('fast');
  });

  it('in this process is the one its environment asks for', async () => {
    expect((await connectionsPath()).path).toBe(stockForced(process.env, ['smtp-server']) ? 'stock' : 'fast');
  });
});
