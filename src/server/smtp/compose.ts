// Turning a message into signed MIME: nodemailer's composer, then DKIM. This is the largest piece of CPU work of a
// delivery, so `svc serve` runs it on a worker thread (compose-thread.ts) beside the main event loop.
import MailComposer from 'nodemailer/lib/mail-composer';
import type MimeNode from 'nodemailer/lib/mime-node';
import * as base64 from 'nodemailer/lib/base64';
import * as qp from 'nodemailer/lib/qp';
import type Mail from 'nodemailer/lib/mailer/index.js';
import type { Worker } from 'node:worker_threads';
import type { Logger } from '../../lib/log.js';
import { startThread } from '../threads.js';
import { dkimSign, type DkimKey } from './dkim.js';

export interface ComposeRequest {
  mail: Mail.Options;
  key: DkimKey | undefined;
  /** DKIM `t=`, seconds. */
  signTime: number;
}

/** The parts of nodemailer's MimeNode that its own stream() reads and its type declarations leave out. */
type Node = MimeNode & {
  buildHeaders(): string;
  _raw: unknown;
  _transforms: unknown[];
  _processFuncs: unknown[];
};

/** Whether every node of the tree holds its content in memory (a string or a Buffer), nothing to read or fetch. */
function inMemory(node: Node): boolean {
  const c = node.content;
  return (
    !node._raw &&
    !node._transforms.length &&
    !node._processFuncs.length &&
    !node.newline &&
    (c === undefined || c === '' || typeof c === 'string' || Buffer.isBuffer(c)) &&
    (node.childNodes as Node[]).every(inMemory)
  );
}

/**
 * Writes a node the way MimeNode#stream does (headers, content in its transfer encoding, then the children of a
 * multipart), in one synchronous pass: nodemailer's stream pipeline per node (encoders, pass-throughs, a
 * setImmediate per step) cost more than twice the work itself. Tested byte for byte against nodemailer's build().
 */
function serialize(node: Node, out: Buffer[]): void {
  out.push(Buffer.from(`${node.buildHeaders()}\r\n\r\n`));
  const c = node.content as string | Buffer | undefined;
  if (c) {
    // buildHeaders() has just worked the encoding out (getTransferEncoding scans the content) and set it as a header.
    const encoding = node.getHeader('Content-Transfer-Encoding');
    // base64.Encoder and qp.Encoder (for text, the only kind that gets quoted-printable) write exactly this.
    if (encoding === 'base64') out.push(Buffer.from(base64.wrap(base64.encode(c), 76), 'latin1'));
    else if (encoding === 'quoted-printable') out.push(Buffer.from(qp.wrap(qp.encode(c), 76), 'latin1'));
    else out.push(Buffer.isBuffer(c) ? c : Buffer.from(c));
  }
  if (node.multipart) {
    (node.childNodes as Node[]).forEach((child, i) => {
      out.push(Buffer.from(`${i ? '\r\n' : ''}--${node.boundary}\r\n`));
      serialize(child, out);
    });
    out.push(Buffer.from(`\r\n--${node.boundary}--\r\n`));
  }
}

/** The MIME of a message, built by nodemailer's composer (written in one pass when all of it is in memory). */
export async function buildMime(mail: Mail.Options): Promise<Buffer> {
  const root = new MailComposer(mail).compile() as Node;
  if (!inMemory(root)) return root.build();
  const out: Buffer[] = [];
  serialize(root, out);
  // nodemailer's last stage: the message ends with a line break.
  const mime = Buffer.concat(out);
  const last = mime[mime.length - 1];
  return last === 0x0a ? mime : Buffer.concat([mime, Buffer.from(last === 0x0d ? '\n' : '\r\n')]);
}

/** Builds the MIME of a message and signs it when a key is given. */
export async function composeSigned(req: ComposeRequest): Promise<Buffer> {
  const mime = await buildMime(req.mail);
  return req.key ? dkimSign(mime, req.key, req.signTime) : mime;
}

export interface Composer {
  /** The signed MIME of a message; rejects with ComposeThreadDied when the thread stopped under it. */
  compose(req: ComposeRequest): Promise<Buffer>;
  /** How many threads have been started so far (a restart after a crash makes two). */
  readonly threads?: number;
  close(): Promise<void>;
}

/** Buffers cross the thread boundary as Uint8Arrays; nodemailer wants Buffers back. */
export function reviveBuffers(mail: Mail.Options): Mail.Options {
  const attachments = (mail.attachments ?? []).map((a) => {
    const c = a.content as unknown;
    return c instanceof Uint8Array && !Buffer.isBuffer(c) ? { ...a, content: Buffer.from(c.buffer, c.byteOffset, c.byteLength) } : a;
  });
  return { ...mail, attachments };
}

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

export interface ComposerOptions {
  /** Compose on a worker thread (`svc serve`) rather than on the calling thread. */
  thread: boolean;
  log: Logger;
  /** The thread's memory limits; by default a small young generation (it holds one message per request, no cache). */
  resourceLimits?: NonNullable<ConstructorParameters<typeof Worker>[1]>['resourceLimits'];
}

export function createComposer(opts: ComposerOptions): Composer {
  if (!opts.thread) return { compose: composeSigned, close: async () => {} };
  // In the order posted, which is the order the thread works through them.
  const pending = new Map<number, { thread: Worker; req: ComposeRequest; resolve: (b: Buffer) => void; reject: (e: Error) => void }>();
  let thread: Worker | null = null;
  let next = 0;
  let starts = 0;

  function start(): Worker {
    const t = startThread(new URL('./compose-thread.js', import.meta.url), {
      resourceLimits: opts.resourceLimits ?? { maxYoungGenerationSizeMb: 8 },
    });
    t.unref();
    starts++;
    t.on('message', (m: { id: number; raw?: Uint8Array; error?: string }) => {
      const p = pending.get(m.id);
      if (!p) return;
      pending.delete(m.id);
      if (m.raw) p.resolve(Buffer.from(m.raw.buffer, m.raw.byteOffset, m.raw.byteLength));
      else p.reject(new Error(m.error || 'the message could not be composed'));
    });
    t.on('error', (err) => opts.log.error('compose thread failed', { error: err.stack ?? err.message }));
    t.on('exit', (code) => {
      if (thread === t) thread = null;
      // The thread builds one message at a time, oldest first: the first one still pending is the one it was on.
      // That one goes back to the queue; those waiting behind it move to a new thread as they are.
      const [first, ...waiting] = [...pending].filter(([, p]) => p.thread === t);
      if (!first) return void opts.log.warn('compose thread exited', { exit_code: code });
      pending.delete(first[0]);
      first[1].reject(new ComposeThreadDied(code));
      for (const [id, p] of waiting) {
        pending.delete(id);
        post(p.req, p.resolve, p.reject);
      }
      opts.log.warn('compose thread exited while building a message; its delivery will be tried again on a new thread', {
        exit_code: code,
        moved_to_new_thread: waiting.length,
      });
    });
    return t;
  }

  function post(req: ComposeRequest, resolve: (b: Buffer) => void, reject: (e: Error) => void): void {
    const t = (thread ??= start());
    const id = next++;
    pending.set(id, { thread: t, req, resolve, reject });
    t.postMessage({ id, req });
  }

  return {
    compose: (req) => new Promise((resolve, reject) => post(req, resolve, reject)),
    get threads() {
      return starts;
    },
    async close() {
      const t = thread;
      thread = null;
      if (!t) return;
      t.removeAllListeners('exit');
      await t.terminate();
    },
  };
}
