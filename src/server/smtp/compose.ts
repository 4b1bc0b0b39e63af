// Turning a message into signed MIME: nodemailer's composer, then DKIM. This is the largest piece of CPU work of a
// delivery, so `svc serve` runs it on a worker thread (compose-thread.ts) beside the main event loop; where the
// compiled thread script is absent (the test suite runs the TypeScript sources) it runs in-line, the same code.
import MailComposer from 'nodemailer/lib/mail-composer';
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

/** Builds the MIME of a message and signs it when a key is given. */
export async function composeSigned(req: ComposeRequest): Promise<Buffer> {
  const mime = await new MailComposer(req.mail).compile().build();
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
