// What became of a check on a message: its findings, or why it did not finish. A module of its own so that
// html-validate's thread (offline-thread.ts) loads nothing of the other checks.

/** Why a check did not finish on a message: what it threw, or what became of its thread (`overran` its deadline). */
export type Failure = { failed: string; overran?: true };

/** A check's findings, or why it did not finish. */
export type Outcome<T> = { ok: T } | Failure;

/** What `fn` returns, or what it threw. */
export const attempt = <T>(fn: () => T): Outcome<T> => {
  try {
    return { ok: fn() };
  } catch (err) {
    return { failed: err instanceof Error ? err.message : String(err) };
  }
};
