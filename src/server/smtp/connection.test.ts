// connection.ts replaces a method of smtp-server and mirrors another. These tests hold it to the library it was written
// against: the pinned version, the text of both methods, and the library still waiting where the sink does not.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { AddressInfo, Socket } from 'node:net';
import { SMTPServer } from 'smtp-server';
import { SMTPConnection } from 'smtp-server/lib/smtp-connection.js';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { connect as tlsConnect } from 'node:tls';
import { smtpTalk, smtpTalkOn, type SmtpTalk } from '../../../test/helpers/smtp.js';
import { useSinkConnections } from './connection.js';
import { makeCertificate } from './tls.js';

const oneLine = (f: { toString(): string }) => f.toString().replace(/\s+/g, ' ');

describe('smtp-server as connection.ts knows it', () => {
  it('is the version package.json pins exactly', () => {
    const installed = createRequire(import.meta.url)('smtp-server/package.json').version as string;
    const pkg = JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8'));
    expect(pkg.dependencies['smtp-server']).toBe(installed);
    const lock = JSON.parse(readFileSync(new URL('../../../package-lock.json', import.meta.url), 'utf8'));
    expect(lock.packages[''].dependencies['smtp-server']).toBe(installed);
  });

  it('has the init() that connection.ts replaces: the connection limit, then a 100 ms timer before connectionReady()', () => {
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

  it('has the onSecure() that connection.ts wraps: it calls back on a later turn, after which the TLS socket is read', () => {
    expect(oneLine(SMTPServer.prototype.onSecure)).toBe(
      oneLine(`onSecure(socket, session, callback) {
        setImmediate(callback);
    }`),
    );
  });

  it('has the connect() that connection.ts mirrors', () => {
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
   * A server as smtp-server makes it, or (`prompt`) as connection.ts changes it; counts the messages it takes. With
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
    if (prompt) useSinkConnections(server);
    return { server: await listening(server), taken: () => taken };
  }

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
