// The compose worker thread of `svc serve` (see compose.ts).
import { parentPort } from 'node:worker_threads';
import { composeSigned, reviveBuffers, type ComposeRequest } from './compose.js';

parentPort!.on('message', ({ id, req }: { id: number; req: ComposeRequest }) => {
  composeSigned({ ...req, mail: reviveBuffers(req.mail) }).then(
    (raw) => parentPort!.postMessage({ id, raw }, [raw.buffer as ArrayBuffer]),
    (err: Error) => parentPort!.postMessage({ id, error: err.message }),
  );
});
