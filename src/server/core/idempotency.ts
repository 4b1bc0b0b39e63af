// The Idempotency-Key of a send (docs/api.md#sending): the result of the first request under a key is kept with the
// request's canonical hash, so the same request again within the window gets that result back, and another request
// under the key is refused. How a result is answered is the caller's: the API renders a replay as it rendered the first.
import type { Clock } from '../../lib/clock.js';
import { DAY } from '../../lib/clock.js';
import type { Db } from '../store/db.js';
import type { EmailStore } from '../store/emails.js';
import { canonicalSha256 } from './rules/canonical.js';
import { fail } from './errors.js';

/** How long an Idempotency-Key answers with its first result. */
export const IDEMPOTENCY_WINDOW = DAY;

/** A result, and whether it is the one kept for its Idempotency-Key from the first request (a replay). */
export interface Kept<T> {
  result: T;
  replayed: boolean;
}

export function createIdempotency(deps: { db: Db; store: EmailStore; clock: Clock }) {
  const { store, clock } = deps;

  // Built once (building a transaction function per call was a visible cost on the sending path).
  const replayOrProduce = deps.db.transaction(
    (workspaceId: string, key: string, hash: string, produce: () => unknown): Kept<unknown> => {
      const now = clock.now();
      const prior = store.idempotency(workspaceId, key);
      if (prior && prior.created_at + IDEMPOTENCY_WINDOW > now) {
        if (prior.request_hash !== hash) {
          fail(
            'idempotency_conflict',
            'This Idempotency-Key was used with a different request body in the last 24 hours; use a new key.',
          );
        }
        return { result: prior.body, replayed: true };
      }
      const result = produce();
      store.saveIdempotency({ workspace_id: workspaceId, key, request_hash: hash, body: result, created_at: now });
      return { result, replayed: false };
    },
  );

  return {
    /**
     * Runs `produce` under an Idempotency-Key (none: just runs it): a replay within 24 h returns the result kept from
     * the first time, another `request` under the key → 409 `idempotency_conflict`. The lookup, `produce` and the
     * keeping run in one transaction, so concurrent requests with one key create exactly one message. The result must
     * be plain JSON: it is kept as JSON text, and a replay returns it as read back.
     */
    run<T>(workspaceId: string, key: string | undefined, request: unknown, produce: () => T): Kept<T> {
      if (key === undefined) return { result: produce(), replayed: false };
      return replayOrProduce(workspaceId, key, canonicalSha256(request), produce) as Kept<T>;
    },
  };
}
export type Idempotency = ReturnType<typeof createIdempotency>;
