// The compose thread of `svc serve` (see compose.ts).
import { parentPort } from 'node:worker_threads';
import type { LogFields, LogLevel, Logger } from '../../lib/log.js';
import { BIG_MESSAGE_BYTES, collectGarbage } from '../core/rules/big-message.js';
import { composeSigned, ownsMemory, reviveBuffers, type ComposeRequest, type ThreadLogLine } from './compose.js';

/** This thread's log: each line goes to the thread that started it, which logs it (compose.ts). */
const line = (level: LogLevel) => (msg: string, fields?: LogFields) =>
  parentPort!.postMessage({ log: { level, msg, fields } satisfies ThreadLogLine });
const log: Logger = { debug: line('debug'), info: line('info'), warn: line('warn'), error: line('error') };

// One message at a time, in the order posted (compose.ts counts on it: when the thread dies, the first message still
// pending is the one it was on, and those behind it have not been started).
let queue: Promise<void> = Promise.resolve();
parentPort!.on('message', (m: { id: number; req: ComposeRequest }) => {
  queue = queue.then(() => build(m));
});

function build({ id, req }: { id: number; req: ComposeRequest }): Promise<void> {
  return composeSigned(reviveBuffers(req), log)
    .then((raw) => {
      // A signed message is a view into memory of its own, starting just after the room left for its signature: that
      // memory moves without a copy. A small message may live in Node's shared pool, which is not its to give away.
      const whole = new Uint8Array(raw.buffer, 0, raw.buffer.byteLength);
      const own =
        ownsMemory(whole) &&
        raw.byteOffset + raw.byteLength === whole.byteLength &&
        raw.byteLength * 2 > whole.byteLength;
      const bytes = own ? raw : new Uint8Array(raw);
      parentPort!.postMessage({ id, raw: bytes }, [bytes.buffer as ArrayBuffer]);
      // A big message's attachment pieces and text, handed to this thread, are garbage once this request is done:
      // collected then (when V8's collector is exposed, as `svc serve`'s binary does; after this turn, when nothing
      // here refers to them) rather than whenever this mostly idle thread next would, perhaps never.
      if (raw.length >= BIG_MESSAGE_BYTES) setTimeout(collectGarbage, 0);
    })
    .catch((err: unknown) =>
      parentPort!.postMessage({ id, error: err instanceof Error ? err.message || err.name : String(err) }),
    );
}
