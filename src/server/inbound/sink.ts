// The SMTP sink: catches every message handed to it (by the service or any other program), parses its header block
// and stores it with its raw source through core's inbox before answering 250, so an accepted message is already
// readable.
import { SMTPServer, type SMTPServerAddress, type SMTPServerOptions, type SMTPServerSession } from 'smtp-server';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo, ListenOptions, Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gather } from '../../lib/gather.js';
import { isDiskFull } from '../../lib/disk-full.js';
import type { Logger } from '../../lib/log.js';
import { MAX_HEADER_BLOCK, headerBlock } from '../core/rules/caught-body.js';
import type { Inbox } from '../core/inbox.js';
import type { CaughtMail } from '../core/inbox-catch.js';
import type { Chaos, ChaosHit, SmtpStage } from '../core/chaos.js';
import { glanceBody, previewOf } from './body-text.js';
import { parseHeaders } from './headers.js';
import { headerReader } from './seams/mailparser.js';
import { useConnections } from './seams/smtp-server.js';
import { hop } from '../../lib/hops.js';

/** The sink's answer when it has no room to store a message. */
export const SINK_FULL_REPLY = 'Insufficient system storage: the disk holding the data is full; try again later';

/** The largest message the sink takes by default (`--max-message-size`): 50 MB. */
export const MAX_MESSAGE_BYTES = 50_000_000;
/** How long a whole DATA phase may take by default: from the 354 until the final dot. */
export const DATA_TIMEOUT_MS = 5 * 60_000;
/** How many SMTP connections may be open at once by default (`--smtp-max-connections`). */
export const MAX_CONNECTIONS = 100;

/**
 * Where caught mail is stored: core's inbox; the chaos rules that answer stages of a session on purpose; and whose
 * workspace an AUTH password is, when it is an API key of this server (its mail is filed under that workspace).
 */
export type SinkDeps = {
  log: Logger;
  inbox: Pick<Inbox, 'catch'>;
  chaos?: Pick<Chaos, 'smtp'>;
  workspaceOf?: (password: string) => string | null;
  /** Counts a connection on the sink's port (core/metrics.ts), open until the function it returns is called. */
  connectionOpened?: () => () => void;
};

/** A message the sink will not take, with the SMTP reply that says why. */
export class SinkRefusal extends Error {
  constructor(
    readonly responseCode: number,
    message: string,
  ) {
    super(message);
    this.name = 'SinkRefusal';
  }
}

/**
 * Parses and stores one message; returns the stored id (or null for a second copy of the service's own mail). A
 * header block over MAX_HEADER_BLOCK is refused (SinkRefusal, 552): mail readers refuse such a message (mailparser
 * does), so none of its views could show it.
 */
export async function ingest(
  deps: SinkDeps,
  raw: Buffer,
  envelope: CaughtMail['envelope'],
  workspaceId: string | null = null,
): Promise<string | null> {
  const block = headerBlock(raw);
  if (block.length > MAX_HEADER_BLOCK) {
    throw new SinkRefusal(
      552,
      `Message header block is ${block.length} bytes; this sink takes header blocks of at most ${MAX_HEADER_BLOCK} bytes (1 MiB)`,
    );
  }
  // Only the header block is parsed now (what the listing shows); the body when the message is first read.
  const parsed = await parseHeaders(raw, block, deps.log);
  // And a quick look at the body for the inbox's search, preview line and attachment marker (body-text.ts).
  const glance = glanceBody(raw, parsed.lines);
  return deps.inbox.catch({
    raw,
    envelope,
    messageIdHeader: parsed.messageId,
    from: parsed.from,
    to: parsed.to,
    cc: parsed.cc,
    subject: parsed.subject,
    headers: parsed.lines,
    signed: parsed.signed,
    preview: previewOf(glance.text),
    hasAttachments: glance.hasAttachments,
    text: glance.indexed,
    workspaceId,
  });
}

/**
 * The chaos rules' answers to the stages of SMTP sessions, as smtp-server takes a refusal: an Error with
 * `responseCode`. An `rcpt` rule answers every recipient of the message it falls on (one decision per mail
 * transaction, so a message is refused whole: the sink keeps one copy per Message-ID, and a message half taken
 * could never be delivered to the rest), and its `times` and `probability` count messages.
 */
function chaosReplies(deps: SinkDeps) {
  const rcpt = new WeakMap<object, ChaosHit | null>();
  const refusal = (stage: SmtpStage, hit: ChaosHit): Error | undefined => {
    const a = hit.action;
    if (!('code' in a)) return undefined;
    const text = a.message ?? (a.code < 500 ? 'try again later' : 'refused');
    deps.log.info('smtp chaos', { stage, chaos: `rule ${hit.index}: answered ${a.code}` });
    return Object.assign(new Error(`${text} (svc sandbox chaos rule ${hit.index})`), { responseCode: a.code });
  };
  return {
    answer(stage: SmtpStage, envelope?: object): Error | undefined {
      if (!deps.chaos) return undefined;
      let hit: ChaosHit | null;
      if (stage === 'rcpt' && envelope) {
        hit = rcpt.has(envelope) ? rcpt.get(envelope)! : deps.chaos.smtp(stage);
        rcpt.set(envelope, hit);
      } else {
        hit = deps.chaos.smtp(stage);
      }
      return hit ? refusal(stage, hit) : undefined;
    },
  };
}

export interface Sink {
  listen(port: number, host: string): Promise<number>;
  /** Whether the sink is taking connections. */
  listening(): boolean;
  close(): Promise<void>;
}

/** The sink, with the way in of the service's own deliveries. */
export interface CatchingSink extends Sink {
  /**
   * The local socket (a named pipe on Windows) the service's own deliveries come in on, once the sink listens: outside
   * the connection limit, which counts the clients on the port alone, and in a directory only this user may enter.
   */
  ownPath(): string;
  /** Loads the header parser (mailparser) the first message caught would, ahead of it. */
  warm(): void;
}

/**
 * Keeps smtp-server's parser from losing its place in whole messages a client pipelines one after another (RFC 2920:
 * MAIL, RCPT, DATA, the message, MAIL, … in one write). The parser takes up what follows a message from inside the call
 * that answers it (onData's callback, through SMTPStream#continue), and once that call returns it forgets the place it
 * is to go on from after the next message: when the next message also ended within the call (its MAIL and RCPT
 * answered at once, its bytes already read), that place is lost and the session stalls. So a MAIL that comes while a
 * message is being answered is answered a microtask later, once the call has returned; any other MAIL at once (the
 * replies of one read leave in one write: seams/smtp-server-fast.ts).
 */
export function pipelining() {
  let answering = false;
  return {
    /** onData's callback, called so that a MAIL answered within it waits until it returns. */
    answer<A extends unknown[]>(callback: (...args: A) => void): (...args: A) => void {
      return (...args) => {
        answering = true;
        try {
          callback(...args);
        } finally {
          answering = false;
        }
      };
    },
    /** Answers a MAIL FROM: at once, or a microtask later when a message is being answered. */
    mail(callback: (err?: Error | null) => void, err?: Error | null): void {
      if (answering) queueMicrotask(() => callback(err));
      else callback(err);
    },
  };
}

export interface SinkLimits {
  /** The largest message taken, in bytes: advertised with SIZE, and a larger one is refused with 552 (default 50 MB). */
  maxMessageBytes?: number;
  /**
   * How long a whole DATA phase may take, from the 354 until the final dot (default 5 min). A client still sending
   * then is answered 421 and disconnected, and nothing of that message is kept. The idle limit (60 s without a byte)
   * alone would let a client that drips a byte a minute hold a connection and the message's memory for ever.
   */
  dataTimeoutMs?: number;
  /** SMTP connections open at once (default 100); a connection beyond them is answered 421 and closed. */
  maxConnections?: number;
}

/**
 * The sink's smtp-server options apart from its handlers: the sessions it takes and its limits. bench/smtp-ingest's
 * floor (bench/smtp-floor-server.ts) runs a server on them too, with nothing behind it. Like any mail catcher it takes
 * mail from a client given its host and port alone: STARTTLS only with `tls` (a client that upgrades whenever it is
 * offered would otherwise fail on a certificate it does not trust), and AUTH of any kind, never refused, also without
 * TLS (the handler is createSink's).
 */
export function sinkServerOptions(limits: SinkLimits = {}, tls?: { key: Buffer; cert: Buffer }): SMTPServerOptions {
  return {
    name: 'svc-sink',
    banner: 'svc SMTP sink: every message is caught, none is delivered',
    authOptional: true,
    authMethods: ['PLAIN', 'LOGIN', 'CRAM-MD5', 'XOAUTH2'],
    allowInsecureAuth: true,
    ...(tls ? { key: tls.key, cert: tls.cert } : { disabledCommands: ['STARTTLS'], hideSTARTTLS: true }),
    disableReverseLookup: true,
    size: limits.maxMessageBytes ?? MAX_MESSAGE_BYTES,
    maxClients: limits.maxConnections ?? MAX_CONNECTIONS,
    logger: false,
  };
}

/**
 * Where the service's own deliveries reach the sink: a Unix socket in a directory of its own (0700, made by mkdtemp),
 * so that no other user of the machine can connect; a named pipe on Windows.
 */
function ownSocket(): { path: string; remove(): void } {
  if (process.platform === 'win32') return { path: `\\\\.\\pipe\\svc-sink-${randomUUID()}`, remove: () => {} };
  const dir = mkdtempSync(join(tmpdir(), 'svc-sink-'));
  return { path: join(dir, 'own.sock'), remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/** The address the sink records for the service's own deliveries, which come from this machine over a local socket. */
const OWN_CLIENT_IP = '127.0.0.1';

/**
 * The sink; `tls` is the certificate its STARTTLS presents (none: no STARTTLS). Two listeners take mail alike: the port,
 * where `--smtp-max-connections` counts the connections, and a local socket for the service's own deliveries
 * (`ownPath`), so outside clients holding every connection the port allows never hold up the service's mail.
 */
export function createSink(deps: SinkDeps, limits: SinkLimits = {}, tls?: { key: Buffer; cert: Buffer }): CatchingSink {
  const maxBytes = limits.maxMessageBytes ?? MAX_MESSAGE_BYTES;
  const dataTimeoutMs = limits.dataTimeoutMs ?? DATA_TIMEOUT_MS;
  const chaos = chaosReplies(deps);
  const flow = pipelining();
  const handlers: Partial<SMTPServerOptions> = {
    // Every session, sender and recipient is welcome. The library's own handlers say so a turn of the event loop
    // later; answering at once sends the greeting before anything is read from the socket (seams/smtp-server-fast.ts)
    // and saves two turns a message.
    onConnect: (_session, callback) => callback(chaos.answer('connect')),
    // Any credentials are welcome. An API key of this server as the password files the session's mail under its
    // workspace: each project sending with its own key has an inbox of its own.
    onAuth: (auth, _session, callback) => {
      const password = auth.password ?? auth.accessToken ?? '';
      callback(null, { user: { name: auth.username ?? '', workspaceId: deps.workspaceOf?.(password) ?? null } });
    },
    onMailFrom: (_address, _session, callback) => flow.mail(callback, chaos.answer('mail')),
    onRcptTo: (_address, session, callback) => callback(chaos.answer('rcpt', session.envelope)),
    onData(stream, session, done) {
      const callback = flow.answer(done);
      // Decided as the message begins, answered once it is all read (the reply to DATA comes after the final dot).
      const refusal = chaos.answer('data', session.envelope);
      if (refusal) {
        stream.on('error', () => {});
        stream.on('end', () => callback(refusal));
        stream.resume();
        return;
      }
      // smtp-server resets the envelope after the callback: copy it first.
      const envelope = {
        mailFrom: session.envelope.mailFrom ? (session.envelope.mailFrom as SMTPServerAddress).address : null,
        rcptTo: session.envelope.rcptTo.map((r) => r.address),
        // Who handed it over, as a receiver's SPF check judges it.
        clientIp: session.remoteAddress || OWN_CLIENT_IP,
        helo: session.hostNameAppearsAs || null,
      };
      // A client that declared the message's size (SIZE, RFC 1870; the service's own sender does) has it gathered in
      // one Buffer of that size.
      const args = session.envelope.mailFrom ? (session.envelope.mailFrom as SMTPServerAddress).args : false;
      const declared = Number((args && (args as { SIZE?: string }).SIZE) ?? 0);
      let raw = gather(declared <= maxBytes ? declared : 0);
      let size = 0;
      let timedOut = false;
      const deadline = setTimeout(() => {
        timedOut = true;
        raw = gather(0);
        // A 421 closes the connection (smtp-server); the message's stream then ends in an error, ignored below.
        const connection = connectionOf(session);
        connection?.send(421, `The message did not arrive within ${dataTimeoutMs / 1000} s; closing the connection`);
      }, dataTimeoutMs);
      deadline.unref();
      stream.on('error', () => clearTimeout(deadline));
      stream.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size <= maxBytes && !timedOut) raw.add(chunk);
      });
      stream.on('end', () => {
        hop('sink: message received');
        clearTimeout(deadline);
        if (timedOut) return;
        if (stream.sizeExceeded || size > maxBytes) {
          const err = Object.assign(new Error(`Message exceeds the ${maxBytes}-byte limit of this sink`), {
            responseCode: 552,
          });
          return callback(err);
        }
        const user = session.user as unknown as { workspaceId?: string | null } | undefined;
        const bytes = raw.bytes();
        // The stream's handlers (and so this closure) outlive the message on a connection kept open for the next: its
        // bytes are let go here, not with the connection.
        raw = gather(0);
        ingest(deps, bytes, envelope, user?.workspaceId ?? null).then(
          () => {
            hop('sink: stored');
            callback(null, 'Caught');
          },
          (err: Error) => {
            if (err instanceof SinkRefusal) return callback(err);
            // 452 4.3.1 (RFC 3463 "mail system full"): the sender keeps the message and tries again later.
            if (isDiskFull(err)) {
              deps.log.warn('sink could not store a message: the disk is full');
              return callback(Object.assign(new Error(SINK_FULL_REPLY), { responseCode: 452 }));
            }
            deps.log.error('sink could not store a message', { error: err.message });
            callback(Object.assign(new Error('Could not store the message; try again'), { responseCode: 451 }));
          },
        );
      });
    },
  };
  const onPort = new SMTPServer({ ...sinkServerOptions(limits, tls), ...handlers });
  // The service's own deliveries: no connection limit, and no STARTTLS (its sender never asks for it).
  const onSocket = new SMTPServer({ ...sinkServerOptions(limits), maxClients: undefined, ...handlers });
  const connectionOf = (session: SMTPServerSession) =>
    [...onPort.connections, ...onSocket.connections].find((c) => c.session === session);
  for (const server of [onPort, onSocket]) {
    server.on('error', (err) => deps.log.warn('smtp sink error', { error: err.message }));
  }
  // Counted: connections on the port; the service's own deliveries, on the local socket, are not.
  const outside = listener(onPort, deps.log, deps.connectionOpened);
  const inside = listener(onSocket, deps.log);
  let socket: ReturnType<typeof ownSocket> | undefined;
  return {
    async listen(port, host) {
      const got = await outside.listen(port, host);
      socket = ownSocket();
      try {
        await inside.listen({ path: socket.path });
      } catch (err) {
        await outside.close();
        socket.remove();
        throw err;
      }
      return got;
    },
    listening: () => outside.listening() && inside.listening(),
    ownPath() {
      if (!socket) throw new Error('the sink is not listening');
      return socket.path;
    },
    warm: () => void headerReader(deps.log),
    async close() {
      // Its name goes at once: the listener is already bound, and the close may wait for connections to end.
      socket?.remove();
      await Promise.all([outside.close(), inside.close()]);
    },
  };
}

/** A Sink that also listens on a local socket (`{path}`: it resolves with 0 then). */
export interface Listener extends Sink {
  listen(where: number | ListenOptions, host?: string): Promise<number>;
}

/**
 * An smtp-server's listening side: listen (resolving with the port it got), whether it listens, close; `counted` counts
 * its connections (core/metrics.ts connectionOpened). Its connections are settled before it first listens: the sink's own, greeted at once, or the library's (seams/smtp-server.ts).
 */
export function listener(server: SMTPServer, log: Logger, counted?: () => () => void): Listener {
  let connections: Promise<unknown> | undefined;
  // Every TCP connection accepted (one refused past maxClients too), until its socket closes: the metrics' count.
  if (counted) server.server.on('connection', (socket: Socket) => socket.once('close', counted()));
  return {
    async listen(where, host) {
      await (connections ??= useConnections(server, log));
      return new Promise<number>((resolve, reject) => {
        const onError = (err: Error) => reject(err);
        server.server.once('error', onError);
        server.listen(typeof where === 'number' ? { port: where, host } : where, () => {
          server.server.off('error', onError);
          const address = server.server.address();
          resolve(typeof address === 'string' ? 0 : (address as AddressInfo).port);
        });
      });
    },
    listening: () => server.server.listening,
    close() {
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}
