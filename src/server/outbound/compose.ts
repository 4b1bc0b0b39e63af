// Turning a message into signed MIME: nodemailer's composer, then DKIM. This is the largest piece of CPU work of a
// delivery, so `svc serve` runs it on a worker thread (compose-thread.ts) beside the main event loop, but for a small
// message that comes alone, which is built sooner on the main thread than handed over (createComposer's compose). The
// MIME is written by the nodemailer seam (seams/nodemailer.ts): in one pass (seams/nodemailer-fast.ts), or by
// nodemailer's own build.
import type Mail from 'nodemailer/lib/mailer/index.js';
import type { Worker } from 'node:worker_threads';
import { silentLogger, type LogFields, type LogLevel, type Logger } from '../../lib/log.js';
import { BIG_MESSAGE_BYTES } from '../core/rules/big-message.js';
import { startThread } from '../../lib/threads.js';
import { dkimField, dkimSign, type DkimKey } from './dkim-sign.js';
import { mimeWriter } from './seams/nodemailer.js';

export interface ComposeRequest {
  mail: Mail.Options;
  /**
   * Attachment contents in pieces, by index into `mail.attachments` (whose `content` they stand in for): the stored
   * bytes of a message, never joined into one Buffer. On the thread, their memory is handed over rather than copied,
   * so the caller must not use them again; the same goes for `mail.text` given as a Buffer.
   */
  pieces?: (Buffer[] | undefined)[];
  key: DkimKey | undefined;
  /** DKIM `t=`, seconds. */
  signTime: number;
}

/** Room kept before a message for its DKIM-Signature field (a 4096-bit key's is under 1 KiB). */
const SIGNATURE_ROOM = 2048;

/** The MIME of a message as nodemailer's composer builds it. */
export async function buildMime(mail: Mail.Options, log: Logger = silentLogger): Promise<Buffer> {
  return (await mimeWriter(log)(mail, undefined, false, 0)).mime;
}

/**
 * Builds the MIME of a message and signs it when a key is given. Signed, the message is written with room before it
 * for the DKIM-Signature field, which goes there: signing copies nothing. `log` hears which path the seam took.
 */
export async function composeSigned(req: ComposeRequest, log: Logger = silentLogger): Promise<Buffer> {
  const writeMime = mimeWriter(log);
  if (!req.key) return (await writeMime(req.mail, req.pieces, false, 0)).mime;
  const { mime, room } = await writeMime(req.mail, req.pieces, true, SIGNATURE_ROOM);
  const field = Buffer.from(dkimField(mime, req.key, req.signTime), 'latin1');
  if (field.length > room) return dkimSign(mime, req.key, req.signTime);
  const signed = Buffer.from(mime.buffer, mime.byteOffset - field.length, field.length + mime.length);
  field.copy(signed, 0);
  return signed;
}

export interface Composer {
  /**
   * The signed MIME of a message; rejects with ComposeThreadDied when the thread stopped under it. `alone`: the caller
   * has no other message on its way, so a small one may be built on the calling thread if nothing else is being built.
   */
  compose(req: ComposeRequest, alone?: boolean): Promise<Buffer>;
  /**
   * Loads what the first message would: the thread, and nodemailer on it, by building a small message that is thrown
   * away (a message asked for meanwhile is built right after it).
   */
  warm(): void;
  /** Loads what building a message on the calling thread needs, by building one that is thrown away. */
  warmHere(): void;
  /** How many threads have been started so far (a restart after a crash, or after a big message, makes two). */
  readonly threads?: number;
  close(): Promise<void>;
}

const asBuffer = (c: Uint8Array) => (Buffer.isBuffer(c) ? c : Buffer.from(c.buffer, c.byteOffset, c.byteLength));

/** Buffers cross the thread boundary as Uint8Arrays; nodemailer wants Buffers back. */
export function reviveBuffers(req: ComposeRequest): ComposeRequest {
  const revive = <T>(c: T) => (c instanceof Uint8Array && !Buffer.isBuffer(c) ? asBuffer(c) : c);
  const attachments = (req.mail.attachments ?? []).map((a) =>
    a.content instanceof Uint8Array && !Buffer.isBuffer(a.content) ? { ...a, content: revive(a.content) } : a,
  );
  const mail = { ...req.mail, attachments, ...(req.mail.text !== undefined ? { text: revive(req.mail.text) } : {}) };
  return { ...req, mail, pieces: req.pieces?.map((list) => list?.map(asBuffer)) };
}

/**
 * Whether a Buffer's memory can be handed to another thread as it is: it must be the whole of an ArrayBuffer, and not
 * Node's shared pool of small Buffers (which is not any one Buffer's to give away; Node ≥ 21 refuses to, 20 copied it).
 */
export const ownsMemory = (b: Uint8Array) =>
  b.byteOffset === 0 && b.byteLength === b.buffer.byteLength && b.buffer.byteLength > Buffer.poolSize;

/**
 * The compose thread ended (it crashed, ran out of memory, or was stopped) while building this message. The delivery
 * goes back to the queue and is tried again later on a new thread; if the message itself is what kills the thread,
 * it fails once its attempts run out.
 */
export class ComposeThreadDied extends Error {
  constructor(readonly exitCode: number) {
    super(`the compose thread stopped (exit code ${exitCode}) before the message was built`);
    this.name = 'ComposeThreadDied';
  }
}

/** A log line of the compose thread, posted to the thread that started it. */
export interface ThreadLogLine {
  level: LogLevel;
  msg: string;
  fields?: LogFields;
}

export interface ComposerOptions {
  /** Compose on a worker thread (`svc serve`) rather than on the calling thread. */
  thread: boolean;
  log: Logger;
  /** The thread's memory limits; by default a small young generation (it holds one message per request, no cache). */
  resourceLimits?: NonNullable<ConstructorParameters<typeof Worker>[1]>['resourceLimits'];
}

// A big message (core/rules/big-message.ts), for the compose thread. One goes to the thread alone: posted once the thread
// has nothing else to build, with nothing posted behind it until it is built, so a thread that dies under it (out of
// memory, say) took no other message with it. And the thread that built one, if it has nothing more to build, is
// ended; the next message starts a new one. However it is collected, a thread that built a 30 MB text held about that
// much of it resident until it built another; ended, it gives back everything it held. bench:big-mail, text bodies:
// 306–322 MB resident a minute after the last message, 201 MB with this. A new thread costs the next message about
// 50 ms, once per big message at most.

/**
 * The most a message's parts, and its own header fields, may be for it to be built on the calling thread rather than
 * the compose thread (when it comes alone): a transactional message, built and signed in about 0.4 ms.
 */
const HERE_BYTES = 64 * 1024;

/** About how many bytes a message's own header fields are (their values, as given). */
function headerBytes(headers: Mail.Options['headers']): number {
  let n = 0;
  for (const v of Array.isArray(headers) ? headers : Object.values(headers ?? {})) {
    for (const one of ([] as unknown[]).concat(v)) {
      const value = typeof one === 'object' && one !== null && 'value' in one ? one.value : one;
      n += typeof value === 'string' ? value.length : 0;
    }
  }
  return n;
}

/** About how many bytes a request's message will be: its attachments' pieces and content, its text and HTML. */
function sizeOf(req: ComposeRequest): number {
  const length = (v: unknown) => (typeof v === 'string' || v instanceof Uint8Array ? v.length : 0);
  let n = length(req.mail.text) + length(req.mail.html);
  for (const a of req.mail.attachments ?? []) n += length(a.content);
  for (const list of req.pieces ?? []) for (const b of list ?? []) n += b.length;
  return n;
}

/** What the warm-up builds: a text and an HTML part, as most messages have. */
const WARM_UP: ComposeRequest = {
  mail: {
    from: 'warm-up@svc.test',
    to: 'warm-up@svc.test',
    subject: 'warm-up',
    text: 'warm-up',
    html: '<p>warm-up</p>',
  },
  key: undefined,
  signTime: 0,
};

export function createComposer(opts: ComposerOptions): Composer {
  if (!opts.thread) {
    const compose = (req: ComposeRequest) => composeSigned(req, opts.log);
    const warm = () => void compose(WARM_UP).catch(() => {});
    return { compose, warm, warmHere: warm, close: async () => {} };
  }
  interface Request {
    req: ComposeRequest;
    /** BIG_MESSAGE_BYTES or more, about: it goes to the thread alone. */
    big: boolean;
    resolve: (b: Buffer) => void;
    reject: (e: Error) => void;
  }
  // Posted to a thread, in the order posted, which is the order the thread works through them. `handedOver`: the
  // request's pieces went to the thread, so they cannot be posted again.
  const pending = new Map<number, Request & { thread: Worker; handedOver: boolean }>();
  // Not posted yet, oldest first: those behind a big one, and a big one until the thread has nothing else.
  const waiting: Request[] = [];
  let thread: Worker | null = null;
  let next = 0;
  let starts = 0;
  /** Threads ended after a big message, until they are gone. */
  const retiring = new Set<Promise<number>>();

  function retire(t: Worker): void {
    thread = null;
    t.removeAllListeners('exit');
    const gone = t.terminate();
    retiring.add(gone);
    void gone.finally(() => retiring.delete(gone));
  }

  const onThread = (t: Worker | null) => [...pending.values()].filter((p) => p.thread === t);

  function start(): Worker {
    const t = startThread(new URL('./compose-thread.js', import.meta.url), {
      resourceLimits: opts.resourceLimits ?? { maxYoungGenerationSizeMb: 8 },
    });
    t.unref();
    starts++;
    t.on('message', (m: { id: number; raw?: Uint8Array; error?: string; log?: ThreadLogLine }) => {
      // A line the thread logs (compose-thread.ts): the path the nodemailer seam took there.
      if (m.log) return void opts.log[m.log.level](m.log.msg, m.log.fields);
      const p = pending.get(m.id);
      if (!p) return;
      pending.delete(m.id);
      if (m.raw) p.resolve(Buffer.from(m.raw.buffer, m.raw.byteOffset, m.raw.byteLength));
      else p.reject(new Error(m.error || 'the message could not be composed'));
      const idle = onThread(t).length === 0 && waiting.length === 0;
      if (m.raw && m.raw.byteLength >= BIG_MESSAGE_BYTES && idle && thread === t) retire(t);
      pump();
    });
    t.on('error', (err) => opts.log.error('compose thread failed', { error: err.stack ?? err.message }));
    t.on('exit', (code) => {
      if (thread === t) thread = null;
      // The thread builds one message at a time, oldest first: the first one still pending is the one it was on (a
      // big one is always alone on it). That one goes back to the queue; those posted behind it move to a new thread
      // as they are, unless their attachments' memory went with the dead thread (then they go back to the queue too,
      // and are read again).
      const [first, ...behind] = onThread(t);
      if (!first) return void opts.log.warn('compose thread exited', { exit_code: code });
      for (const [id, p] of pending) if (p.thread === t) pending.delete(id);
      first.reject(new ComposeThreadDied(code));
      const moved = behind.filter((p) => !p.handedOver);
      for (const p of behind) if (p.handedOver) p.reject(new ComposeThreadDied(code));
      waiting.unshift(...moved);
      opts.log.warn(
        'compose thread exited while building a message; its delivery will be tried again on a new thread',
        {
          exit_code: code,
          moved_to_new_thread: moved.length,
        },
      );
      pump();
    });
    return t;
  }

  /**
   * Posts what waits, in order: a big message only to a thread with nothing else to build, and nothing behind it
   * until it is built. A thread that dies under a big message so died of it, and took no other message with it.
   */
  function pump(): void {
    for (let first = waiting[0]; first; first = waiting[0]) {
      const posted = onThread(thread);
      if (posted.some((p) => p.big) || (first.big && posted.length)) return;
      waiting.shift();
      post(first);
    }
  }

  function post(r: Request): void {
    const t = (thread ??= start());
    const id = next++;
    // The pieces, and a text given as bytes, move to the thread without a copy (a structured clone would hold them
    // twice until the next collection on each side); anything else is copied.
    const transfer = new Set<ArrayBuffer>();
    for (const b of [...(r.req.pieces ?? []).flatMap((list) => list ?? []), r.req.mail.text])
      if (b instanceof Uint8Array && ownsMemory(b)) transfer.add(b.buffer as ArrayBuffer);
    pending.set(id, { ...r, thread: t, handedOver: transfer.size > 0 });
    t.postMessage({ id, req: r.req }, [...transfer]);
  }

  const toThread = (req: ComposeRequest, size = sizeOf(req)) =>
    new Promise<Buffer>((resolve, reject) => {
      waiting.push({ req, big: size >= BIG_MESSAGE_BYTES, resolve, reject });
      pump();
    });
  /** Messages being built on the calling thread: at most one at a time. */
  let here = 0;
  const compose = (req: ComposeRequest, alone = false) => {
    const size = sizeOf(req);
    // A small message that comes alone is built here when nothing else is being built, here or on the thread: handing
    // it to an idle thread and back took longer than building it (bench:latency, the compose hop). Under load every
    // message goes to the thread: built here, they took the main thread's time from the others' deliveries
    // (bench:fairness, bench:drain).
    const busy = !alone || here > 0 || pending.size > 0 || waiting.length > 0;
    if (busy || size + headerBytes(req.mail.headers) > HERE_BYTES) return toThread(req, size);
    here++;
    return composeSigned(req, opts.log).finally(() => here--);
  };
  return {
    compose,
    warm: () => void toThread(WARM_UP).catch(() => {}),
    warmHere: () => void composeSigned(WARM_UP, opts.log).catch(() => {}),
    get threads() {
      return starts;
    },
    async close() {
      if (thread) retire(thread);
      await Promise.all(retiring);
    },
  };
}
