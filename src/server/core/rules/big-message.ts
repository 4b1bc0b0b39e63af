// What the server calls a big message, and the collection one is worth. A message (or a request that brings one) this
// large leaves enough garbage behind — its bytes read back, split, composed, parsed — that V8 would keep it resident
// until it next collects on its own, up to a minute later (bench:big-mail): the delivery worker, the compose thread,
// the API's body reader and the sandbox's message views each start a full collection after one.

/** A message, or a request body, this large is big: worth a full garbage collection once it is done with. */
export const BIG_MESSAGE_BYTES = 8 * 1024 * 1024;

/**
 * Starts a full garbage collection, without blocking the thread, where V8's collector is exposed (`svc serve` runs
 * with --expose-gc, and so do its worker threads); does nothing elsewhere.
 */
export function collectGarbage(): void {
  void globalThis.gc?.({ type: 'major', execution: 'async' });
}
