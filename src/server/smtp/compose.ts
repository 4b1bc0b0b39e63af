// Turning a message into signed MIME: nodemailer's composer, then DKIM. This is the largest piece of CPU work of a
// delivery, so `svc serve` runs it on a worker thread (compose-thread.ts) beside the main event loop; where the
// compiled thread script is absent (the test suite runs the TypeScript sources) it runs in-line, the same code.
import MailComposer from 'nodemailer/lib/mail-composer';
import type MimeNode from 'nodemailer/lib/mime-node';
import * as base64 from 'nodemailer/lib/base64';
import * as qp from 'nodemailer/lib/qp';
import type Mail from 'nodemailer/lib/mailer/index.js';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
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
  compose(req: ComposeRequest): Promise<Buffer>;
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

export function createComposer(opts: { thread: boolean }): Composer {
  const script = new URL('./compose-thread.js', import.meta.url);
  if (!opts.thread || !existsSync(fileURLToPath(script))) {
    return { compose: composeSigned, close: async () => {} };
  }
  // A small young generation: the thread holds one message at a time per request, not a cache.
  const worker = new Worker(script, { resourceLimits: { maxYoungGenerationSizeMb: 8 } });
  worker.unref();
  const pending = new Map<number, { resolve: (b: Buffer) => void; reject: (e: Error) => void }>();
  let next = 0;
  let broken: Error | null = null;
  worker.on('message', (m: { id: number; raw?: Uint8Array; error?: string }) => {
    const p = pending.get(m.id);
    if (!p) return;
    pending.delete(m.id);
    if (m.raw) p.resolve(Buffer.from(m.raw.buffer, m.raw.byteOffset, m.raw.byteLength));
    else p.reject(new Error(m.error ?? 'compose failed'));
  });
  const failAll = (err: Error) => {
    broken = err;
    for (const p of pending.values()) p.reject(err);
    pending.clear();
  };
  worker.on('error', failAll);
  worker.on('exit', (code) => failAll(new Error(`compose thread exited (${code})`)));
  return {
    compose(req) {
      // A thread that died falls back to composing in-line rather than failing deliveries.
      if (broken) return composeSigned(req);
      return new Promise((resolve, reject) => {
        const id = next++;
        pending.set(id, { resolve, reject });
        worker.postMessage({ id, req });
      });
    },
    async close() {
      worker.removeAllListeners('exit');
      await worker.terminate();
    },
  };
}
