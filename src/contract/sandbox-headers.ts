// Headers every answer of a local server (`svc serve`) carries, so a client can tell a sandbox from the service
// itself without guessing from the host name. Free of imports, like the error types of the client that read them.

/** `Svc-Sandbox: 1` on every answer of a local server; the service itself never sends it. */
export const SANDBOX_HEADER = 'Svc-Sandbox';

/**
 * The local server's instance: one value per data directory for as long as its secrets last, a new one after
 * `svc serve --reset` (and on every start with `--memory`). A credential saved against another instance no longer works.
 */
export const INSTANCE_HEADER = 'Svc-Sandbox-Instance';

/** Whether an answer came from a local server (its headers, looked up case-insensitively). */
export function isSandbox(headers: { get(name: string): string | null }): boolean {
  return headers.get(SANDBOX_HEADER) === '1';
}

/**
 * On an answer a chaos rule of the local server gave (a Problem on purpose) or held back (a delay): the rule's index
 * in `GET /sandbox/chaos`.
 */
export const CHAOS_HEADER = 'Svc-Chaos';
