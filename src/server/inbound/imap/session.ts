// One IMAP connection (RFC 3501): its state (not authenticated, authenticated, selected, logout), the commands of each
// state, and the selected mailbox as a compact list: the UIDs in order (a message's sequence number is its index + 1),
// each one's id and read mark as last told to the client, and the \Deleted marks of this session. Bodies are read one
// message at a time from core (core/mailbox.ts) when a FETCH or SEARCH needs them, never kept.
import { isLoopbackHost } from '../../../lib/loopback.js';
import type { Logger } from '../../../lib/log.js';
import { ServiceError } from '../../core/errors.js';
import type { Mailbox, MailboxEntry, MailboxFolder, MailboxOwner } from '../../core/mailbox.js';
import { type FetchItem, fetchResponse, needsSource, parseFetchItems, setsSeen } from './fetch.js';
import {
  CommandReader,
  tagOf,
  decodeMailboxName,
  encodeMailboxName,
  imapString,
  inSet,
  parseSequenceSet,
  type ReaderEvent,
  type SequenceSet,
  ImapSyntaxError,
  Tokens,
  tokenize,
} from './parser.js';
import { CharsetError, matcher, needsSource as searchNeedsSource, parseSearch } from './search.js';

/** What a session needs of its connection (server.ts). */
export interface SessionIo {
  /** Writes bytes; false when the socket's buffer is full (then wait for drain()). */
  write(data: string | Buffer): boolean;
  drain(): Promise<void>;
  /** Stops and resumes reading: a command is run whole before the next is read. */
  pause(): void;
  resume(): void;
  /** Turns the connection into TLS (after STARTTLS's OK). */
  startTls(): void;
  /** Ends the connection after what was written. */
  close(): void;
  readonly secure: boolean;
  readonly remoteAddress: string;
}

export interface SessionDeps {
  mailbox: Mailbox;
  log: Logger;
  isAdminToken(password: string): boolean;
}

/** The hierarchy delimiter of folder names. */
const DELIM = '/';
/** How long IDLE gathers changes before it reads the mailbox again and tells them. */
const IDLE_COALESCE_MS = 50;
/** How many FETCH responses are gathered before one write. */
const WRITE_BATCH = 64 * 1024;
const AUTH_HINT = 'the password must be an API key of a workspace (any username) or the admin token';

type State = 'none' | 'auth' | 'selected' | 'logout';

/** The states a command may be given in (RFC 3501 section 6). */
const COMMANDS: Record<string, State[]> = {
  CAPABILITY: ['none', 'auth', 'selected'],
  NOOP: ['none', 'auth', 'selected'],
  LOGOUT: ['none', 'auth', 'selected'],
  ID: ['none', 'auth', 'selected'],
  STARTTLS: ['none'],
  LOGIN: ['none'],
  AUTHENTICATE: ['none'],
  SELECT: ['auth', 'selected'],
  EXAMINE: ['auth', 'selected'],
  CREATE: ['auth', 'selected'],
  DELETE: ['auth', 'selected'],
  RENAME: ['auth', 'selected'],
  SUBSCRIBE: ['auth', 'selected'],
  UNSUBSCRIBE: ['auth', 'selected'],
  LIST: ['auth', 'selected'],
  LSUB: ['auth', 'selected'],
  NAMESPACE: ['auth', 'selected'],
  STATUS: ['auth', 'selected'],
  APPEND: ['auth', 'selected'],
  IDLE: ['auth', 'selected'],
  CHECK: ['selected'],
  CLOSE: ['selected'],
  UNSELECT: ['selected'],
  EXPUNGE: ['selected'],
  SEARCH: ['selected'],
  FETCH: ['selected'],
  STORE: ['selected'],
  COPY: ['selected'],
  UID: ['selected'],
};

/** A command's answer: the tagged status line's parts. */
class Answer extends Error {
  constructor(
    readonly status: 'NO' | 'BAD',
    text: string,
  ) {
    super(text);
  }
}
const no = (text: string) => new Answer('NO', text);
const bad = (text: string) => new Answer('BAD', text);

interface Selected {
  folder: MailboxFolder;
  readOnly: boolean;
  uids: number[];
  ids: string[];
  /** The read mark last told to the client, per message. */
  seen: Uint8Array;
  /** UIDs marked \Deleted in this session. */
  deleted: Set<number>;
  /** The highest UID the session has known (UIDs only grow): a message with a higher one is new. */
  lastUid: number;
}

export class ImapSession {
  private state: State = 'none';
  private owner: MailboxOwner | null = null;
  private sel: Selected | null = null;
  private readonly reader: CommandReader;
  private queue: ReaderEvent[] = [];
  private running = false;
  /** Waiting for the line after `+`: AUTHENTICATE's response, or IDLE's DONE. */
  private mode: null | { kind: 'authenticate'; tag: string } | { kind: 'idle'; tag: string; stop: () => void } = null;
  /** The sync under way, which a DONE or the next command waits for. */
  private syncing: Promise<void> = Promise.resolve();

  constructor(
    private readonly deps: SessionDeps,
    private readonly io: SessionIo,
  ) {
    this.reader = new CommandReader((head) => {
      if (/^\S+ +APPEND /i.test(head))
        return { status: 'NO', text: 'APPEND is not supported: the mailboxes hold caught mail only' };
      return null;
    });
  }

  /** The greeting. */
  start(): void {
    this.write(`* OK [CAPABILITY ${this.capabilities()}] svc IMAP4rev1 server ready\r\n`);
  }

  /** Bytes from the client. */
  onData(chunk: Buffer): void {
    if (this.state === 'logout') return;
    this.queue.push(...this.reader.push(chunk));
    void this.run();
  }

  /** The connection closed. */
  onClose(): void {
    this.state = 'logout';
    this.queue = [];
    if (this.mode?.kind === 'idle') this.mode.stop();
    this.mode = null;
  }

  private write(data: string | Buffer): boolean {
    return this.io.write(data);
  }
  private async send(data: string | Buffer): Promise<void> {
    if (!this.write(data)) await this.io.drain();
  }

  private capabilities(): string {
    const caps = ['IMAP4rev1', 'LITERAL+', 'SASL-IR', 'ID', 'IDLE', 'NAMESPACE', 'UIDPLUS', 'UNSELECT'];
    if (this.state === 'none') {
      if (!this.io.secure) caps.push('STARTTLS');
      caps.push(this.passwordTaken() ? 'AUTH=PLAIN' : 'LOGINDISABLED');
    }
    return caps.join(' ');
  }

  /**
   * Whether a password may be sent now: over TLS, or in the clear from this machine (a local sandbox, whose clients
   * are told to use no TLS); from another address only after STARTTLS, as POP3 does (docs/mailbox.md).
   */
  private passwordTaken(): boolean {
    return this.io.secure || isLoopbackHost(this.io.remoteAddress);
  }

  private requireTls(): void {
    if (!this.passwordTaken()) {
      throw no('[PRIVACYREQUIRED] Issue STARTTLS first: a password is taken in the clear from this machine only');
    }
  }

  private async run(): Promise<void> {
    if (this.running) return;
    this.running = true;
    this.io.pause();
    try {
      while (this.queue.length > 0 && this.state !== 'logout') {
        // A client that sends commands but reads no answers waits here, rather than its answers piling up in memory.
        await this.io.drain();
        const ev = this.queue.shift()!;
        if (ev.type === 'continue') this.write('+ Ready for literal data\r\n');
        else if (ev.type === 'refuse') this.write(`${ev.tag} ${ev.status} ${ev.text}\r\n`);
        else {
          try {
            await this.handle(ev.data);
          } catch (err) {
            // handle() answers a command's own failures; this is the last guard, for the lines after "+".
            this.deps.log.error('imap session failed', { error: err instanceof Error ? err.message : String(err) });
            this.write('* NO [SERVERBUG] The server failed on that line; try again\r\n');
          }
        }
      }
    } finally {
      this.running = false;
      if (this.state !== 'logout') this.io.resume();
    }
  }

  private async handle(data: Buffer): Promise<void> {
    if (this.mode?.kind === 'idle') return this.idleLine(data);
    if (this.mode?.kind === 'authenticate') return this.authenticateLine(this.mode.tag, data);
    const tag = tagOf(data);
    try {
      if (tag === '*') {
        if (data.toString('latin1').trim() === '') return;
        throw bad('Invalid tag');
      }
      const tokens = new Tokens(tokenize(data));
      if (tokens.atom() !== tag) throw bad('Invalid tag');
      const nameTok = tokens.peek();
      if (nameTok?.t !== 'atom') throw bad('Missing command');
      const name = tokens.atom().toUpperCase();
      const states = COMMANDS[name];
      if (!states) throw bad(`Unknown command: ${name.slice(0, 40)}`);
      if (!states.includes(this.state)) {
        throw bad(
          this.state === 'none'
            ? `${name} needs you to log in first`
            : states.includes('selected') && !states.includes('auth')
              ? `${name} needs a selected mailbox (SELECT or EXAMINE first)`
              : `${name} is not valid once logged in`,
        );
      }
      await this.syncing;
      const done = await this.command(tag, name, tokens);
      if (done !== null) this.write(`${tag} OK ${done}\r\n`);
    } catch (err) {
      if (err instanceof Answer) this.write(`${tag} ${err.status} ${err.message}\r\n`);
      else if (err instanceof ImapSyntaxError) this.write(`${tag} BAD ${err.message}\r\n`);
      else if (err instanceof CharsetError)
        this.write(`${tag} NO [BADCHARSET (UTF-8 US-ASCII)] Unsupported charset\r\n`);
      else {
        this.deps.log.error('imap command failed', { error: err instanceof Error ? err.message : String(err) });
        this.write(`${tag} NO [SERVERBUG] The server failed this command; try again\r\n`);
      }
    }
  }

  /** Runs one command; returns the text of its tagged OK, or null when it answered itself. */
  private async command(tag: string, name: string, t: Tokens): Promise<string | null> {
    switch (name) {
      case 'CAPABILITY':
        t.end();
        this.write(`* CAPABILITY ${this.capabilities()}\r\n`);
        return 'CAPABILITY completed';
      case 'NOOP':
      case 'CHECK':
        t.end();
        if (this.sel) await this.sync();
        return `${name} completed`;
      case 'LOGOUT':
        t.end();
        this.write('* BYE Logging out\r\n');
        this.write(`${tag} OK LOGOUT completed\r\n`);
        this.logout();
        return null;
      case 'ID':
        this.write('* ID ("name" "svc" "vendor" "svc-mail")\r\n');
        return 'ID completed';
      case 'STARTTLS':
        t.end();
        if (this.io.secure) throw bad('TLS is already on');
        this.write(`${tag} OK Begin TLS negotiation now\r\n`);
        // Whatever the client sent after STARTTLS in the clear is dropped (RFC 3501 section 11.1).
        this.queue = [];
        this.reader.reset();
        this.io.startTls();
        return null;
      case 'LOGIN': {
        const user = t.astring();
        const password = t.astring();
        t.end();
        void user;
        this.requireTls();
        return this.login(password);
      }
      case 'AUTHENTICATE': {
        const mech = t.atom().toUpperCase();
        if (mech !== 'PLAIN') throw no('Only AUTH=PLAIN is supported');
        this.requireTls();
        const initial = t.done ? null : t.astring();
        t.end();
        if (initial === null) {
          this.mode = { kind: 'authenticate', tag };
          this.write('+ \r\n');
          return null;
        }
        return this.plain(initial);
      }
      case 'SELECT':
      case 'EXAMINE':
        return this.select(t, name === 'EXAMINE');
      case 'CREATE':
      case 'DELETE':
      case 'RENAME':
        throw no(`[CANNOT] ${name} is not supported: the folders are the workspaces`);
      case 'SUBSCRIBE':
      case 'UNSUBSCRIBE':
        t.astring();
        t.end();
        return `${name} completed`;
      case 'LIST':
      case 'LSUB':
        return this.list(t, name);
      case 'NAMESPACE':
        t.end();
        this.write(`* NAMESPACE (("" "${DELIM}")) NIL NIL\r\n`);
        return 'NAMESPACE completed';
      case 'STATUS':
        return this.status(t);
      case 'APPEND':
        throw no('APPEND is not supported: the mailboxes hold caught mail only');
      case 'IDLE':
        t.end();
        this.idle(tag);
        return null;
      case 'CLOSE':
      case 'UNSELECT':
        t.end();
        if (name === 'CLOSE' && !this.sel!.readOnly) await this.expunge(null, false);
        this.sel = null;
        this.state = 'auth';
        return `${name} completed`;
      case 'EXPUNGE':
        t.end();
        if (this.sel!.readOnly) throw no('[READ-ONLY] The mailbox is read-only (EXAMINE)');
        await this.expunge(null, true);
        return 'EXPUNGE completed';
      case 'SEARCH':
        return this.search(t, false);
      case 'FETCH':
        return this.fetch(t, false);
      case 'STORE':
        return this.store(t, false);
      case 'COPY':
        throw no('[CANNOT] COPY is not supported: the folders are the workspaces');
      case 'UID': {
        const sub = t.atom().toUpperCase();
        if (sub === 'FETCH') return this.fetch(t, true);
        if (sub === 'SEARCH') return this.search(t, true);
        if (sub === 'STORE') return this.store(t, true);
        if (sub === 'COPY') throw no('[CANNOT] COPY is not supported: the folders are the workspaces');
        if (sub === 'EXPUNGE') {
          const set = parseSequenceSet(t.atom());
          t.end();
          if (this.sel!.readOnly) throw no('[READ-ONLY] The mailbox is read-only (EXAMINE)');
          await this.expunge(set, true);
          return 'UID EXPUNGE completed';
        }
        throw bad(`Unknown UID command: ${sub.slice(0, 40)}`);
      }
    }
    throw bad('Unknown command');
  }

  private logout(): void {
    this.onClose();
    this.io.close();
  }

  // ---- logging in ----

  private async login(password: string): Promise<string> {
    try {
      this.owner = await this.deps.mailbox.login(password, this.io.remoteAddress, this.deps.isAdminToken);
    } catch (err) {
      if (!(err instanceof ServiceError)) throw err;
      this.deps.log.info('imap login refused', { ip: this.io.remoteAddress, reason: err.code });
      if (err.code === 'rate_limited') {
        const wait = err.extra.retryAfterSeconds;
        throw no(
          `[UNAVAILABLE] Too many failed logins from this address; try again${wait ? ` in ${wait} seconds` : ' later'}`,
        );
      }
      const why =
        err.code === 'invalid_token' || !err.detail ? 'Invalid password' : err.detail.replace(/[\r\n]+/g, ' ');
      throw no(`[AUTHENTICATIONFAILED] ${why}: ${AUTH_HINT}`);
    }
    this.state = 'auth';
    this.deps.log.info('imap login', {
      ip: this.io.remoteAddress,
      mailbox: this.owner.kind === 'admin' ? 'admin' : this.owner.workspaceId,
    });
    return `[CAPABILITY ${this.capabilities()}] Logged in`;
  }

  private plain(b64: string): Promise<string> {
    if (b64 === '*') throw bad('Authentication cancelled');
    const text = /^[A-Za-z0-9+/]*={0,2}$/.test(b64) ? Buffer.from(b64, 'base64').toString('utf8') : null;
    const parts = text?.split('\0');
    if (parts?.length !== 3) throw bad('Invalid SASL PLAIN response');
    return this.login(parts[2]!);
  }

  private async authenticateLine(tag: string, data: Buffer): Promise<void> {
    this.mode = null;
    try {
      const done = await this.plain(data.toString('latin1').trim());
      this.write(`${tag} OK ${done}\r\n`);
    } catch (err) {
      if (err instanceof Answer) this.write(`${tag} ${err.status} ${err.message}\r\n`);
      else throw err;
    }
  }

  // ---- mailboxes ----

  private folders(): MailboxFolder[] {
    return this.deps.mailbox.folders(this.owner!);
  }

  private folderNamed(name: string): MailboxFolder {
    const decoded = decodeMailboxName(name);
    const f = this.folders().find((x) => (x.name === 'INBOX' ? decoded.toUpperCase() === 'INBOX' : x.name === decoded));
    if (!f) throw no(`[NONEXISTENT] No mailbox named ${decoded.slice(0, 100)}`);
    return f;
  }

  private list(t: Tokens, name: string): string {
    const ref = decodeMailboxName(t.astring());
    const pattern = decodeMailboxName(t.astring());
    t.end();
    if (pattern === '') {
      this.write(`* ${name} (\\Noselect) "${DELIM}" ""\r\n`);
      return `${name} completed`;
    }
    const full = ref + pattern;
    const source = full
      .split('')
      .map((c) => (c === '*' ? '.*' : c === '%' ? `[^${DELIM}]*` : c.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')))
      .join('');
    for (const f of this.folders()) {
      const re = new RegExp(`^${source}$`, f.name === 'INBOX' ? 'i' : '');
      if (!re.test(f.name)) continue;
      const line = Buffer.concat([
        Buffer.from(`* ${name} (\\HasNoChildren) "${DELIM}" `),
        toBuf(imapString(encodeMailboxName(f.name))),
        Buffer.from('\r\n'),
      ]);
      this.write(line);
    }
    return `${name} completed`;
  }

  private status(t: Tokens): string {
    const rawName = t.astring();
    const folder = this.folderNamed(rawName);
    t.expect('(');
    const items: string[] = [];
    while (!t.take(')')) items.push(t.atom().toUpperCase());
    t.end();
    const mb = this.deps.mailbox;
    const st = mb.status(folder);
    const out: string[] = [];
    for (const it of items) {
      if (it === 'MESSAGES') out.push(`MESSAGES ${st.count}`);
      else if (it === 'RECENT') out.push('RECENT 0');
      else if (it === 'UIDNEXT') out.push(`UIDNEXT ${st.uidNext}`);
      else if (it === 'UIDVALIDITY') out.push(`UIDVALIDITY ${mb.uidValidity()}`);
      else if (it === 'UNSEEN') {
        let unseen = 0;
        for (const e of mb.entries(folder)) if (!e.seen) unseen++;
        out.push(`UNSEEN ${unseen}`);
      } else throw bad(`Unknown STATUS item: ${it.slice(0, 40)}`);
    }
    this.write(
      Buffer.concat([
        Buffer.from('* STATUS '),
        toBuf(imapString(encodeMailboxName(folder.name))),
        Buffer.from(` (${out.join(' ')})\r\n`),
      ]),
    );
    return 'STATUS completed';
  }

  private select(t: Tokens, readOnly: boolean): string {
    const name = t.astring();
    t.end();
    // A failed SELECT leaves no mailbox selected (RFC 3501 section 6.3.1).
    this.sel = null;
    this.state = 'auth';
    const folder = this.folderNamed(name);
    const mb = this.deps.mailbox;
    const uids: number[] = [];
    const ids: string[] = [];
    const seenList: number[] = [];
    for (const e of mb.entries(folder)) {
      uids.push(e.uid);
      ids.push(e.id);
      seenList.push(e.seen ? 1 : 0);
    }
    const st = mb.status(folder);
    this.sel = {
      folder,
      readOnly,
      uids,
      ids,
      seen: Uint8Array.from(seenList),
      deleted: new Set(),
      lastUid: uids[uids.length - 1] ?? 0,
    };
    this.state = 'selected';
    const firstUnseen = seenList.indexOf(0);
    this.write('* FLAGS (\\Seen \\Deleted)\r\n');
    this.write(`* OK [PERMANENTFLAGS (\\Seen \\Deleted)] \\Seen is the inbox page's read mark\r\n`);
    this.write(`* ${uids.length} EXISTS\r\n* 0 RECENT\r\n`);
    if (firstUnseen >= 0) this.write(`* OK [UNSEEN ${firstUnseen + 1}] First unseen message\r\n`);
    this.write(`* OK [UIDVALIDITY ${mb.uidValidity()}] UIDs valid\r\n`);
    this.write(`* OK [UIDNEXT ${st.uidNext}] Predicted next UID\r\n`);
    return `[${readOnly ? 'READ-ONLY' : 'READ-WRITE'}] ${readOnly ? 'EXAMINE' : 'SELECT'} completed`;
  }

  // ---- the selected mailbox ----

  /** The indices (0-based, ascending) a sequence set or UID set names. */
  private resolve(set: SequenceSet, uid: boolean): number[] {
    const s = this.sel!;
    const n = s.uids.length;
    if (n === 0) return [];
    const marks = new Uint8Array(n);
    const maxUid = s.uids[n - 1]!;
    for (const [a0, b0] of set) {
      if (uid) {
        const a = a0 === Number.POSITIVE_INFINITY ? maxUid : a0;
        const b = b0 === Number.POSITIVE_INFINITY ? maxUid : b0;
        const lo = Math.min(a, b);
        const hi = Math.max(a, b);
        for (let i = lowerBound(s.uids, lo); i < n && s.uids[i]! <= hi; i++) marks[i] = 1;
      } else {
        const a = a0 === Number.POSITIVE_INFINITY ? n : a0;
        const b = b0 === Number.POSITIVE_INFINITY ? n : b0;
        if (a > n || b > n) throw bad(`Invalid message sequence number: the mailbox has ${n} messages`);
        for (let i = Math.min(a, b) - 1; i < Math.max(a, b); i++) marks[i] = 1;
      }
    }
    const out: number[] = [];
    for (let i = 0; i < n; i++) if (marks[i]) out.push(i);
    return out;
  }

  /**
   * Calls `fn` for each of `indices` (ascending) with its entry as the store has it now (its read mark fresh), or null
   * when the message is gone; the store is read a page at a time.
   */
  private async walk(
    indices: number[],
    fn: (i: number, e: MailboxEntry | null) => void | Promise<void>,
  ): Promise<void> {
    const s = this.sel!;
    if (indices.length === 0) return;
    const uids = s.uids;
    const it = this.deps.mailbox.entries(s.folder, uids[indices[0]!]! - 1);
    let cur = it.next();
    for (const i of indices) {
      const uid = uids[i]!;
      while (!cur.done && cur.value.uid < uid) cur = it.next();
      if (!cur.done && cur.value.uid === uid) await fn(i, cur.value);
      else await fn(i, null);
      // A message marked read or removed inside fn would be read again by none: the cursor moves forward only.
    }
    it.return(undefined);
  }

  private flags(i: number, seen: boolean): string[] {
    const f: string[] = [];
    if (seen) f.push('\\Seen');
    if (this.sel!.deleted.has(this.sel!.uids[i]!)) f.push('\\Deleted');
    return f;
  }

  private async fetch(t: Tokens, uid: boolean): Promise<string> {
    const set = parseSequenceSet(t.atom());
    const items: FetchItem[] = parseFetchItems(t, uid);
    const s = this.sel!;
    const indices = this.resolve(set, uid);
    const withSource = needsSource(items);
    const marks = setsSeen(items) && !s.readOnly;
    const withFlags = items.some((x) => x.kind === 'FLAGS');
    let batch: Buffer[] = [];
    let batchSize = 0;
    let gone = 0;
    const flush = async () => {
      if (batch.length === 0) return;
      const b = batch.length === 1 ? batch[0]! : Buffer.concat(batch, batchSize);
      batch = [];
      batchSize = 0;
      await this.send(b);
    };
    await this.walk(indices, async (i, e) => {
      if (!e || s.uids[i] === undefined) {
        gone++;
        return;
      }
      const source = withSource ? this.deps.mailbox.source(e.id) : null;
      if (withSource && !source) {
        gone++;
        return;
      }
      let seen = e.seen;
      let its = items;
      if (marks && !seen) {
        try {
          this.deps.mailbox.setSeen(e.id, true);
          seen = true;
          // The flags changed: tell them with the body (RFC 3501 section 6.4.5).
          if (!withFlags) its = [...items, { kind: 'FLAGS' }];
        } catch (err) {
          if (!(err instanceof ServiceError)) throw err;
        }
      }
      s.seen[i] = seen ? 1 : 0;
      const res = fetchResponse(
        { seq: i + 1, uid: e.uid, size: e.size, receivedAt: e.receivedAt, flags: this.flags(i, seen), source },
        its,
      );
      batch.push(res);
      batchSize += res.length;
      // One body at a time: each is written (and the socket drained) before the next is read.
      if (withSource || batchSize >= WRITE_BATCH) await flush();
    });
    await flush();
    if (gone > 0) throw no('Some of the messages asked for were deleted meanwhile; NOOP tells which');
    return `${uid ? 'UID ' : ''}FETCH completed`;
  }

  private async store(t: Tokens, uid: boolean): Promise<string> {
    const set = parseSequenceSet(t.atom());
    const op = t.atom().toUpperCase();
    const m = /^([+-]?)FLAGS(\.SILENT)?$/.exec(op);
    if (!m) throw bad(`Invalid STORE operation: ${op.slice(0, 40)}`);
    const flags: string[] = [];
    if (t.take('(')) {
      while (!t.take(')')) flags.push(t.atom());
    } else {
      while (!t.done) flags.push(t.atom());
    }
    t.end();
    const s = this.sel!;
    if (s.readOnly) throw no('[READ-ONLY] The mailbox is read-only (EXAMINE)');
    const lower = flags.map((f) => f.toLowerCase());
    const hasSeen = lower.includes('\\seen');
    const hasDeleted = lower.includes('\\deleted');
    const mode = m[1] === '+' ? 'add' : m[1] === '-' ? 'remove' : 'set';
    const silent = Boolean(m[2]);
    const indices = this.resolve(set, uid);
    let batch: Buffer[] = [];
    await this.walk(indices, async (i, e) => {
      if (!e) return;
      let seen = e.seen;
      const want = mode === 'set' ? hasSeen : mode === 'add' ? (hasSeen ? true : seen) : hasSeen ? false : seen;
      if (want !== seen) {
        try {
          this.deps.mailbox.setSeen(e.id, want);
          seen = want;
        } catch (err) {
          if (!(err instanceof ServiceError)) throw err;
          return;
        }
      }
      if (mode === 'set' ? hasDeleted : hasDeleted && mode === 'add') s.deleted.add(e.uid);
      else if (mode === 'set' || (hasDeleted && mode === 'remove')) s.deleted.delete(e.uid);
      s.seen[i] = seen ? 1 : 0;
      if (!silent) {
        batch.push(
          Buffer.from(`* ${i + 1} FETCH (FLAGS (${this.flags(i, seen).join(' ')})${uid ? ` UID ${e.uid}` : ''})\r\n`),
        );
        if (batch.length >= 500) {
          await this.send(Buffer.concat(batch));
          batch = [];
        }
      }
    });
    if (batch.length) await this.send(Buffer.concat(batch));
    return `${uid ? 'UID ' : ''}STORE completed`;
  }

  private async search(t: Tokens, uid: boolean): Promise<string> {
    const key = parseSearch(t);
    const s = this.sel!;
    const n = s.uids.length;
    const match = matcher(key, n, s.uids[n - 1] ?? 0);
    const reads = searchNeedsSource(key);
    const found: number[] = [];
    const all = Array.from({ length: n }, (_, i) => i);
    let count = 0;
    await this.walk(all, async (i, e) => {
      if (!e) return;
      const hit = match({
        seq: i + 1,
        uid: e.uid,
        seen: e.seen,
        deleted: s.deleted.has(e.uid),
        size: e.size,
        receivedAt: e.receivedAt,
        source: () => this.deps.mailbox.source(e.id),
      });
      if (hit) found.push(uid ? e.uid : i + 1);
      // A search reading sources lets the other connections run between messages.
      if (reads && ++count % 100 === 0) await new Promise((r) => setImmediate(r));
    });
    const lines: string[] = [];
    for (let k = 0; k < found.length; k += 1000) lines.push(found.slice(k, k + 1000).join(' '));
    await this.send(`* SEARCH${found.length ? ` ${lines.join(' ')}` : ''}\r\n`);
    return `${uid ? 'UID ' : ''}SEARCH completed`;
  }

  /** Removes the messages marked \Deleted (of `set` UIDs, when given), telling `* n EXPUNGE` when `tell`. */
  private async expunge(set: SequenceSet | null, tell: boolean): Promise<void> {
    const s = this.sel!;
    if (s.deleted.size === 0) return;
    const keep = new Uint8Array(s.uids.length).fill(1);
    const lines: string[] = [];
    const maxUid = s.uids[s.uids.length - 1] ?? 0;
    for (let i = s.uids.length - 1; i >= 0; i--) {
      const u = s.uids[i]!;
      if (!s.deleted.has(u)) continue;
      if (set && !inSet(set, u, maxUid)) continue;
      try {
        this.deps.mailbox.remove(s.ids[i]!);
      } catch (err) {
        // Already gone (another client, the inbox page): it is expunged all the same.
        if (!(err instanceof ServiceError)) throw err;
      }
      s.deleted.delete(u);
      keep[i] = 0;
      lines.push(`* ${i + 1} EXPUNGE\r\n`);
    }
    this.compact(keep);
    if (tell && lines.length) await this.send(lines.join(''));
  }

  /** Drops the messages whose `keep` is 0 from the selected list. */
  private compact(keep: Uint8Array): void {
    const s = this.sel!;
    const uids: number[] = [];
    const ids: string[] = [];
    const seen: number[] = [];
    for (let i = 0; i < s.uids.length; i++) {
      if (!keep[i]) continue;
      uids.push(s.uids[i]!);
      ids.push(s.ids[i]!);
      seen.push(s.seen[i]!);
    }
    s.uids = uids;
    s.ids = ids;
    s.seen = Uint8Array.from(seen);
  }

  /**
   * Tells the client what changed in the selected mailbox since it last heard: messages deleted elsewhere
   * (`* n EXPUNGE`), read marks changed (`* n FETCH (FLAGS …)`), and new mail (`* n EXISTS`).
   */
  private sync(): Promise<void> {
    const run = this.syncing.then(() => this.syncNow());
    this.syncing = run.catch(() => undefined);
    return run;
  }

  private async syncNow(): Promise<void> {
    const s = this.sel;
    if (!s || this.state === 'logout') return;
    const fresh = new Map<number, boolean>();
    const added: MailboxEntry[] = [];
    for (const e of this.deps.mailbox.entries(s.folder)) {
      if (e.uid > s.lastUid) added.push(e);
      else fresh.set(e.uid, e.seen);
    }
    const out: string[] = [];
    const keep = new Uint8Array(s.uids.length).fill(1);
    let removed = false;
    for (let i = s.uids.length - 1; i >= 0; i--) {
      if (fresh.has(s.uids[i]!)) continue;
      keep[i] = 0;
      removed = true;
      s.deleted.delete(s.uids[i]!);
      out.push(`* ${i + 1} EXPUNGE\r\n`);
    }
    if (removed) this.compact(keep);
    for (let i = 0; i < s.uids.length; i++) {
      const seen = fresh.get(s.uids[i]!)!;
      if ((s.seen[i] === 1) === seen) continue;
      s.seen[i] = seen ? 1 : 0;
      out.push(`* ${i + 1} FETCH (FLAGS (${this.flags(i, seen).join(' ')}) UID ${s.uids[i]})\r\n`);
    }
    if (added.length) {
      const seen = Array.from(s.seen);
      for (const e of added) {
        s.uids.push(e.uid);
        s.ids.push(e.id);
        seen.push(e.seen ? 1 : 0);
        s.lastUid = Math.max(s.lastUid, e.uid);
      }
      s.seen = Uint8Array.from(seen);
      out.push(`* ${s.uids.length} EXISTS\r\n* 0 RECENT\r\n`);
    }
    if (out.length) await this.send(out.join(''));
  }

  // ---- IDLE ----

  private idle(tag: string): void {
    let timer: NodeJS.Timeout | null = null;
    const off = this.deps.mailbox.watch(() => {
      if (timer || !this.sel) return;
      // Changes that come together (a client marking a thousand messages read) make one update, not a thousand
      // reads of the mailbox's listing.
      timer = setTimeout(() => {
        timer = null;
        if (this.mode?.kind === 'idle') {
          this.sync().catch((err) => this.deps.log.error('imap idle update failed', { error: String(err) }));
        }
      }, IDLE_COALESCE_MS);
    });
    const stop = () => {
      off();
      if (timer) clearTimeout(timer);
      timer = null;
    };
    this.mode = { kind: 'idle', tag, stop };
    this.write('+ idling\r\n');
    // Mail caught between the last command and IDLE is told at once.
    if (this.sel) void this.sync().catch(() => undefined);
  }

  private async idleLine(data: Buffer): Promise<void> {
    const mode = this.mode as { kind: 'idle'; tag: string; stop: () => void };
    const line = data.toString('latin1').trim().toUpperCase();
    if (line !== 'DONE') {
      // Anything but DONE ends IDLE too; it is answered BAD.
      this.write(`* BAD Expected DONE to end IDLE\r\n`);
    }
    mode.stop();
    this.mode = null;
    await this.syncing;
    this.write(`${mode.tag} OK IDLE terminated\r\n`);
  }
}

function lowerBound(a: number[], x: number): number {
  let lo = 0;
  let hi = a.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (a[mid]! < x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

const toBuf = (v: string | Buffer): Buffer => (typeof v === 'string' ? Buffer.from(v) : v);
