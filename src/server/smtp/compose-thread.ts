// The compose worker thread of `svc serve` (see compose.ts).
import { parentPort } from 'node:worker_threads';
import { composeSigned, reviveBuffers, type ComposeRequest } from './compose.js';

/**
 * The bytes to post back, and what may be transferred. A small Buffer is a view into Node's shared allocation pool:
 * that ArrayBuffer is not the message's to give away (Node ≥ 21 refuses to transfer it; 20 copied it silently), so
 * such a message is copied into memory of its own first. A Buffer that owns its whole ArrayBuffer moves without a copy.
 */
function transferable(raw: Buffer): Uint8Array {
  return raw.byteOffset === 0 && raw.byteLength === raw.buffer.byteLength ? raw : new Uint8Array(raw);
}

parentPort!.on('message', ({ id, req }: { id: number; req: ComposeRequest }) => {
  composeSigned({ ...req, mail: reviveBuffers(req.mail) })
    .then((raw) => {
      const bytes = transferable(raw);
      parentPort!.postMessage({ id, raw: bytes }, [bytes.buffer as ArrayBuffer]);
    })
    .catch((err: unknown) => parentPort!.postMessage({ id, error: err instanceof Error ? err.message || err.name : String(err) }));
});
