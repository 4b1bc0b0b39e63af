// One POP3 conversation (RFC 1939, with CAPA and RFC 2449's extensions, AUTH PLAIN of RFC 5034, STLS of RFC 2595 and
// RFC 3206's response codes): the AUTHORIZATION state until a login, the TRANSACTION state on a snapshot of the
// maildrop taken at the login (the numbers of its messages hold for the session), the UPDATE state at QUIT, which
// removes the messages DELE marked. Commands are taken one at a time, in order (PIPELINING): while one is answered (a
// login, a message written out) the socket is paused, so a pipelining client's input waits in the kernel.
import type { Socket } from 'node:net';
import { type SecureContext, TLSSocket } from 'node:tls';
import type { Logger } from '../../../lib/log.js';
import { ServiceError } from '../../core/errors.js';
import type { Mailbox, MailboxEntry, MailboxOwner } from '../../core/mailbox.js';
import { isLoopbackHost } from '../../../lib/loopback.js';
import { dotStuffer, lineReader, MAX_COMMAND_LINE, messageNumber, topOf } from './wire.js';

export interface SessionContext {
  mailbox: Mailbox;
  log: Logger;
  isAdminToken(password: string): boolean;
  secureContext: SecureContext;
  idleTimeoutMs: number;
}

/** A message of the session's maildrop: its entry at login, and whether DELE marked it. */
interface Message {
  entry: MailboxEntry;
  deleted: boolean;
}

type State = 'authorization' | 'transaction' | 'update';

/** How much of a message is handed to the socket at once: a big one is written as the client reads it. */
const WRITE_PIECE = 64 * 1024;
/** How long a closing connection may take to take its last bytes before it is cut. */
const CLOSE_GRACE_MS = 5_000;

const GREETING =
  '+OK svc POP3 server ready: log in with any username and, as the password, an API key of a workspace or the admin token';
const BAD_PASSWORD =
  '-ERR [AUTH] Wrong password: it must be an API key of a workspace of this service (svc_…, its mail) or the admin token (all mail); the username may be anything';

const TRANSACTION_ONLY = new Set(['STAT', 'LIST', 'RETR', 'DELE', 'NOOP', 'RSET', 'TOP', 'UIDL']);
const AUTHORIZATION_ONLY = new Set(['USER', 'PASS', 'AUTH', 'STLS', 'APOP']);

/** Text a client sent, safe to echo in a reply: printable ASCII, cut short. */
const shown = (s: string) => s.replace(/[^\x21-\x7e]/g, '?').slice(0, 20);

export class Pop3Session {
  private socket: Socket;
  private readonly reader = lineReader();
  private state: State = 'authorization';
  private tls = false;
  private busy = false;
  private closed = false;
  /** The username USER gave, awaiting PASS. */
  private user: string | null = null;
  /** Set while AUTH PLAIN waits for its response line. */
  private awaitingSasl = false;
  private messages: Message[] = [];
  private readonly timer: NodeJS.Timeout;
  private readonly ip: string;

  constructor(
    socket: Socket,
    private readonly ctx: SessionContext,
    /** Called once the session is over (its last line said, or the connection gone): its slot is free. */
    private readonly onEnd: () => void,
  ) {
    this.socket = socket;
    this.ip = socket.remoteAddress ?? '';
    socket.setNoDelay(true);
    this.timer = setTimeout(() => this.idle(), ctx.idleTimeoutMs);
    this.timer.unref();
    this.attach(socket);
    this.reply(GREETING);
  }

  /** Ends the session from the server's side (the server is closing). */
  shutdown(): void {
    if (this.busy) {
      this.destroy();
      return;
    }
    this.finish('-ERR [SYS/TEMP] The server is shutting down');
  }

  private attach(socket: Socket): void {
    socket.on('data', (chunk: Buffer) => this.received(chunk));
    // A reset or a failed TLS handshake: the connection is over, as `close` tells.
    socket.on('error', (err) => this.ctx.log.debug('pop3 connection error', { ip: this.ip, error: err.message }));
    socket.once('close', () => this.destroy());
  }

  private received(chunk: Buffer): void {
    this.timer.refresh();
    this.reader.push(chunk);
    this.pump();
  }

  /** Answers the complete lines read, one command at a time. */
  private pump(): void {
    while (!this.busy && !this.closed) {
      const line = this.reader.next();
      if (line === null) break;
      let answer: void | Promise<void>;
      try {
        answer = this.command(line);
      } catch (err) {
        this.fault(err);
        continue;
      }
      // A client pipelining commands without reading their answers: read no more until it has taken them.
      if (!answer && this.socket.writableNeedDrain) answer = this.drained().then(() => {});
      if (answer) {
        this.busy = true;
        this.socket.pause();
        answer
          .catch((err: unknown) => this.fault(err))
          .finally(() => {
            this.busy = false;
            if (this.closed) return;
            this.socket.resume();
            this.pump();
          });
      }
    }
    if (!this.closed && this.reader.overflow()) {
      this.finish('-ERR Line too long: no line end within 16 KiB; closing the connection');
    }
  }

  /** A fault of ours while answering a command: said, logged, and the session goes on. */
  private fault(err: unknown): void {
    this.ctx.log.error('pop3 command failed', { ip: this.ip, error: (err as Error).message });
    this.reply('-ERR [SYS/TEMP] The server could not answer this command; try again');
  }

  private command(line: string): void | Promise<void> {
    if (this.awaitingSasl) {
      this.awaitingSasl = false;
      return this.saslResponse(line);
    }
    if (line.length + 2 > MAX_COMMAND_LINE) {
      return this.reply(`-ERR Command line too long: at most ${MAX_COMMAND_LINE} octets, CRLF included (RFC 2449)`);
    }
    const space = line.indexOf(' ');
    const keyword = (space === -1 ? line : line.slice(0, space)).toUpperCase();
    const rest = space === -1 ? '' : line.slice(space + 1);
    const args = rest === '' ? [] : rest.split(' ');

    if (this.state === 'authorization' && TRANSACTION_ONLY.has(keyword)) {
      return this.reply(`-ERR ${keyword} needs a login first: USER and PASS, or AUTH PLAIN`);
    }
    if (this.state === 'transaction' && AUTHORIZATION_ONLY.has(keyword)) {
      return this.reply(`-ERR ${keyword} is only valid before login; this session is logged in`);
    }
    switch (keyword) {
      case 'CAPA':
        return this.capa(args);
      case 'QUIT':
        return args.length ? this.noArguments('QUIT') : this.quit();
      case 'USER':
        return this.userCommand(rest);
      case 'PASS':
        return this.pass(rest);
      case 'AUTH':
        return this.auth(args);
      case 'STLS':
        return args.length ? this.noArguments('STLS') : this.stls();
      case 'APOP':
        return this.reply('-ERR APOP is not supported: use USER and PASS, or AUTH PLAIN');
      case 'STAT':
        return args.length ? this.noArguments('STAT') : this.stat();
      case 'LIST':
      case 'UIDL':
        return this.list(keyword, args);
      case 'RETR':
        return this.retr(args);
      case 'TOP':
        return this.top(args);
      case 'DELE':
        return this.dele(args);
      case 'NOOP':
        return args.length ? this.noArguments('NOOP') : this.reply('+OK');
      case 'RSET':
        return args.length ? this.noArguments('RSET') : this.rset();
      default:
        return this.reply(
          keyword === '' ? '-ERR Empty command' : `-ERR Unknown command: ${shown(keyword)} (CAPA lists what is taken)`,
        );
    }
  }

  private noArguments(keyword: string): void {
    this.reply(`-ERR ${keyword} takes no arguments`);
  }

  // --- AUTHORIZATION

  /** Whether a password may be sent now: over TLS, or from this machine (docs/mailbox.md). */
  private plaintextAllowed(): boolean {
    return this.tls || isLoopbackHost(this.ip);
  }

  private capa(args: string[]): void {
    if (args.length) {
      this.noArguments('CAPA');
      return;
    }
    const lines = ['TOP', 'UIDL', 'RESP-CODES', 'AUTH-RESP-CODE', 'PIPELINING'];
    if (this.state === 'authorization') {
      if (this.plaintextAllowed()) lines.push('USER', 'SASL PLAIN');
      if (!this.tls) lines.push('STLS');
    }
    lines.push('IMPLEMENTATION svc-mail');
    this.multiline('+OK Capability list follows', lines);
  }

  private userCommand(name: string): void {
    if (!this.plaintextAllowed()) {
      this.refuseCleartext();
      return;
    }
    if (name === '') {
      this.reply('-ERR USER needs a username (any name will do)');
      return;
    }
    this.user = name;
    this.reply('+OK Now PASS with an API key of a workspace or the admin token');
  }

  private pass(password: string): void | Promise<void> {
    if (!this.plaintextAllowed()) return this.refuseCleartext();
    if (this.user === null) return this.reply('-ERR PASS must follow USER');
    this.user = null;
    return this.login(password);
  }

  private refuseCleartext(): void {
    this.reply('-ERR Passwords are taken over TLS only from another machine: issue STLS first');
  }

  private auth(args: string[]): void | Promise<void> {
    if (args.length === 0) return this.multiline('+OK SASL mechanisms follow', ['PLAIN']);
    if (args.length > 2) return this.reply('-ERR AUTH takes a mechanism and at most an initial response');
    if (args[0]!.toUpperCase() !== 'PLAIN') {
      return this.reply(`-ERR Unsupported SASL mechanism ${shown(args[0]!)}: only PLAIN is offered`);
    }
    if (!this.plaintextAllowed()) return this.refuseCleartext();
    if (args.length === 1) {
      // RFC 5034 section 4: an empty challenge, then the client's response on a line of its own.
      this.awaitingSasl = true;
      return this.write('+ \r\n');
    }
    return this.saslResponse(args[1]!);
  }

  /** AUTH PLAIN's response (RFC 4616): base64 of `authzid NUL authcid NUL password`, "*" to cancel. */
  private saslResponse(response: string): void | Promise<void> {
    if (response === '*') return this.reply('-ERR Authentication cancelled');
    const b64 = response === '=' ? '' : response;
    if (b64.length % 4 !== 0 || !/^[A-Za-z0-9+/]*={0,2}$/.test(b64)) {
      return this.reply('-ERR Malformed AUTH PLAIN response: it must be base64');
    }
    const parts = Buffer.from(b64, 'base64').toString('utf8').split('\0');
    if (parts.length !== 3) {
      return this.reply('-ERR Malformed AUTH PLAIN response: base64 of authorization id, NUL, username, NUL, password');
    }
    return this.login(parts[2]!);
  }

  private async login(password: string): Promise<void> {
    const { mailbox, log } = this.ctx;
    let owner: MailboxOwner;
    try {
      owner = await mailbox.login(password, this.ip, this.ctx.isAdminToken);
    } catch (err) {
      if (!(err instanceof ServiceError)) throw err;
      log.info('pop3 login refused', { ip: this.ip, reason: err.code });
      if (err.code === 'rate_limited') {
        return this.reply(
          `-ERR [SYS/TEMP] Too many failed logins from ${this.ip}; try again in ${err.extra.retryAfterSeconds ?? 60} seconds`,
        );
      }
      if (err.code === 'invalid_token' || err.code === 'api_key_required' || err.code === 'invalid_api_key') {
        return this.reply(BAD_PASSWORD);
      }
      // A key that may not be used here (its address allowlist, a suspended workspace): core says why.
      return this.reply(`-ERR [AUTH] ${err.detail ?? err.code}`);
    }
    if (this.closed) return;
    const folder = mailbox.folders(owner)[0]!;
    // The snapshot the session's message numbers refer to: the entries alone, never the messages' bytes.
    this.messages = Array.from(mailbox.entries(folder), (entry) => ({ entry, deleted: false }));
    this.state = 'transaction';
    const drop = owner.kind === 'admin' ? 'all mail' : owner.workspaceId;
    log.info('pop3 login', { ip: this.ip, maildrop: drop, messages: this.messages.length });
    const { count, octets } = this.totals();
    this.reply(`+OK Logged in: ${count} messages (${octets} octets) in the maildrop of ${drop}`);
  }

  private stls(): void {
    if (this.tls) {
      this.reply('-ERR Already using TLS');
      return;
    }
    this.reply('+OK Begin TLS negotiation');
    // Nothing the client sent in the clear after STLS may count as said over TLS (RFC 2595 section 3.1).
    this.reader.clear();
    const plain = this.socket;
    plain.removeAllListeners('data');
    plain.removeAllListeners('close');
    const secure = new TLSSocket(plain, { isServer: true, secureContext: this.ctx.secureContext });
    this.socket = secure;
    this.tls = true;
    this.attach(secure);
  }

  // --- TRANSACTION

  private totals(): { count: number; octets: number } {
    let count = 0;
    let octets = 0;
    for (const m of this.messages) {
      if (m.deleted) continue;
      count++;
      octets += m.entry.size;
    }
    return { count, octets };
  }

  /** The message an argument names, or the reply saying why it names none. */
  private message(arg: string | undefined): { n: number; m: Message } | { error: string } {
    const n = messageNumber(arg);
    if (n === null) return { error: `-ERR Invalid message number: ${shown(arg ?? '')}` };
    const m = this.messages[n - 1];
    if (!m) return { error: `-ERR No message ${n}: the maildrop has ${this.messages.length} messages` };
    if (m.deleted) return { error: `-ERR Message ${n} is marked deleted` };
    return { n, m };
  }

  private stat(): void {
    const { count, octets } = this.totals();
    this.reply(`+OK ${count} ${octets}`);
  }

  private list(keyword: 'LIST' | 'UIDL', args: string[]): void | Promise<void> {
    if (args.length > 1) return this.reply(`-ERR ${keyword} takes at most a message number`);
    // UIDL: the message's id (eml_…), the one the inbox page and the API show; never reused, here or in another
    // data directory, where seq numbers would start again at 1.
    const value = (m: Message) => (keyword === 'LIST' ? String(m.entry.size) : m.entry.id);
    if (args.length === 1) {
      const found = this.message(args[0]);
      if ('error' in found) return this.reply(found.error);
      return this.reply(`+OK ${found.n} ${value(found.m)}`);
    }
    const lines: string[] = [];
    this.messages.forEach((m, i) => {
      if (!m.deleted) lines.push(`${i + 1} ${value(m)}`);
    });
    const { count, octets } = this.totals();
    const head = keyword === 'LIST' ? `+OK ${count} messages (${octets} octets)` : `+OK ${count} messages`;
    return this.multilineAsync(head, lines);
  }

  private async retr(args: string[]): Promise<void> {
    if (args.length !== 1) return this.reply('-ERR RETR takes one message number');
    const found = this.message(args[0]);
    if ('error' in found) return this.reply(found.error);
    const raw = this.ctx.mailbox.source(found.m.entry.id);
    if (!raw) return this.gone(found.n, found.m);
    this.write(`+OK ${raw.length} octets\r\n`);
    if (!(await this.body(raw))) return;
    // RETR is reading the message: it shows read on the inbox page (TOP is not: a client peeking at headers has not).
    try {
      this.ctx.mailbox.setSeen(found.m.entry.id, true);
    } catch (err) {
      if (!(err instanceof ServiceError && err.code === 'not_found')) throw err;
    }
  }

  private async top(args: string[]): Promise<void> {
    if (args.length !== 2) return this.reply('-ERR TOP takes a message number and a number of lines');
    const found = this.message(args[0]);
    if ('error' in found) return this.reply(found.error);
    const lines = messageNumber(args[1]);
    if (lines === null) return this.reply(`-ERR Invalid number of lines: ${shown(args[1]!)}`);
    const raw = this.ctx.mailbox.source(found.m.entry.id);
    if (!raw) return this.gone(found.n, found.m);
    this.write('+OK Top of message follows\r\n');
    await this.body(topOf(raw, lines));
  }

  private gone(n: number, m: Message): void {
    this.reply(
      `-ERR Message ${n} (${m.entry.id}) is gone: it was deleted after this session began (on the inbox page or by another client)`,
    );
  }

  private dele(args: string[]): void {
    if (args.length !== 1) {
      this.reply('-ERR DELE takes one message number');
      return;
    }
    const found = this.message(args[0]);
    if ('error' in found) {
      this.reply(found.error);
      return;
    }
    found.m.deleted = true;
    this.reply(`+OK Message ${found.n} marked deleted; it is removed at QUIT`);
  }

  private rset(): void {
    for (const m of this.messages) m.deleted = false;
    const { count, octets } = this.totals();
    this.reply(`+OK Maildrop has ${count} messages (${octets} octets)`);
  }

  private quit(): void {
    if (this.state === 'authorization') {
      this.finish('+OK Bye');
      return;
    }
    this.state = 'update';
    let removed = 0;
    let failed = 0;
    for (const m of this.messages) {
      if (!m.deleted) continue;
      try {
        this.ctx.mailbox.remove(m.entry.id);
        removed++;
      } catch (err) {
        // Already gone (deleted on the page, by another client, or pruned): what DELE asked for is done.
        if (err instanceof ServiceError && err.code === 'not_found') continue;
        failed++;
        this.ctx.log.error('pop3 could not remove a message', { id: m.entry.id, error: (err as Error).message });
      }
    }
    if (failed) {
      this.finish(`-ERR [SYS/TEMP] ${failed} of the messages marked deleted could not be removed`);
      return;
    }
    this.finish(`+OK Bye: ${removed} messages removed`);
  }

  // --- writing

  private write(text: string): void {
    if (!this.closed) this.socket.write(text, 'latin1');
  }

  private reply(line: string): void {
    this.write(`${line}\r\n`);
  }

  private multiline(head: string, lines: string[]): void {
    this.write(`${head}\r\n${lines.map((l) => `${l}\r\n`).join('')}.\r\n`);
  }

  /** A long listing (LIST or UIDL of a big maildrop), written as the client reads it. */
  private async multilineAsync(head: string, lines: string[]): Promise<void> {
    if (lines.length < 1000) return this.multiline(head, lines);
    this.write(`${head}\r\n`);
    for (let i = 0; i < lines.length; i += 1000) {
      const piece = `${lines
        .slice(i, i + 1000)
        .map((l) => `${l}\r\n`)
        .join('')}`;
      if (!(await this.send(Buffer.from(piece, 'latin1')))) return;
    }
    this.write('.\r\n');
  }

  /** A message's bytes as a multi-line body, dot-stuffed, a piece at a time; false if the connection ended. */
  private async body(raw: Buffer): Promise<boolean> {
    const stuffer = dotStuffer();
    for (let i = 0; i < raw.length; i += WRITE_PIECE) {
      if (!(await this.send(stuffer.push(raw.subarray(i, i + WRITE_PIECE))))) return false;
    }
    return this.send(stuffer.end());
  }

  /** Writes, waiting for the socket to drain when its buffer is full; false if the connection ended meanwhile. */
  private send(bytes: Buffer): Promise<boolean> {
    if (this.closed) return Promise.resolve(false);
    if (this.socket.write(bytes)) return Promise.resolve(true);
    return this.drained();
  }

  /** Resolves once the socket has written out what it holds: true, or false if the connection ended first. */
  private drained(): Promise<boolean> {
    const socket = this.socket;
    return new Promise((resolve) => {
      const done = () => {
        socket.off('drain', done);
        socket.off('close', done);
        // A client reading slowly is not idle.
        this.timer.refresh();
        resolve(!this.closed && !socket.destroyed);
      };
      socket.on('drain', done);
      socket.on('close', done);
    });
  }

  // --- ending

  private idle(): void {
    if (this.closed) return;
    this.ctx.log.info('pop3 client idle: disconnected', { ip: this.ip });
    if (this.busy) {
      this.destroy();
      return;
    }
    const ms = this.ctx.idleTimeoutMs;
    const silence = ms >= 1000 ? `${Math.round(ms / 1000)} seconds` : `${ms} ms`;
    this.finish(`-ERR Autologout: no command for ${silence}; closing`);
  }

  /** Says `line` and closes the connection once it is written (cut after a grace if the client does not take it). */
  private finish(line: string): void {
    if (this.closed) return;
    this.reply(line);
    this.closed = true;
    clearTimeout(this.timer);
    const socket = this.socket;
    socket.end();
    setTimeout(() => socket.destroy(), CLOSE_GRACE_MS).unref();
    this.onEnd();
  }

  private destroy(): void {
    const first = !this.closed;
    this.closed = true;
    clearTimeout(this.timer);
    this.socket.destroy();
    if (first) this.onEnd();
  }
}
