/** What a client keeps of a session between calls. */
export interface SessionTokens {
  access_token: string;
  refresh_token: string;
  /** When the access token expires (the Session's `expires_at`). */
  expires_at: string;
}

/**
 * Where a client keeps its session. Refresh tokens are single use and a reused one revokes the whole session
 * family, so every process sharing a store must rotate under `withLock` and read the tokens again inside it.
 */
export interface SessionStore {
  /** The tokens as stored now, read again on every call (another process may have rotated them). */
  load(): Promise<SessionTokens | null>;
  /** Stores rotated tokens; called at once, before the new access token is used. */
  save(tokens: SessionTokens): Promise<void>;
  /** Forgets the session (its refresh token was refused). */
  clear(): Promise<void>;
  /** Runs `fn` holding a lock that every process sharing this store respects. */
  withLock<T>(fn: () => Promise<T>): Promise<T>;
}

/** A store for one process: tokens in memory, a lock that serialises this process's refreshes. */
export function memorySessionStore(initial: SessionTokens | null = null): SessionStore {
  let tokens = initial;
  let tail: Promise<unknown> = Promise.resolve();
  return {
    async load() {
      return tokens;
    },
    async save(t) {
      tokens = t;
    },
    async clear() {
      tokens = null;
    },
    withLock(fn) {
      const run = tail.then(fn, fn);
      tail = run.catch(() => undefined);
      return run;
    },
  };
}

/** Refresh this long before the access token expires, so a call never starts with a token about to lapse. */
export const REFRESH_MARGIN_MS = 60_000;

export function expiresSoon(tokens: SessionTokens, now = Date.now()): boolean {
  const at = Date.parse(tokens.expires_at);
  return Number.isNaN(at) || at - now < REFRESH_MARGIN_MS;
}
