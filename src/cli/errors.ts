/** Exit codes: 0 success; 1 the service or the system refused; 2 usage error; 4 authentication needed. */
export const EXIT = { ok: 0, failed: 1, usage: 2, auth: 4 } as const;

/** A mistake in how the command was called; shown with a hint, exit 2. */
export class UsageError extends Error {
  constructor(message: string, readonly hint?: string) {
    super(message);
    this.name = 'UsageError';
  }
}
