// The profile's session: what the profile shows of it (config.json) and its tokens (the secret `<profile>/session` of
// the credential store). Built from the Context by the commands that sign in, out or switch (login, signup, logout,
// sessions revoke-all, whoami, doctor), by reset.ts, and by the Context for its client, which refreshes it.
import { join } from 'node:path';
import type { SessionStore, SessionTokens } from '../client/index.js';
import type { ConfigStore, SessionInfo } from './config.js';
import type { CredentialStore } from './credentials.js';
import { withFileLock } from './lock.js';

export interface ProfileSession {
  /** The profile's session, when it was issued by this run's base URL. */
  current(): Promise<SessionInfo | undefined>;
  /** Its tokens as stored now (for logout). */
  tokens(): Promise<SessionTokens | undefined>;
  /**
   * Keeps a session just issued (login, signup, a workspace switch): its tokens at once, then what the profile shows.
   */
  save(info: SessionInfo, tokens: SessionTokens): Promise<void>;
  /** Forgets it (its tokens and what the profile shows). */
  forget(): Promise<void>;
  /** Runs `fn` holding the lock every svc process takes to rotate this profile's session. */
  withLock<T>(fn: () => Promise<T>): Promise<T>;
}

/** What the session is built from: the Context's (context.ts). */
export interface SessionContext {
  readonly profile: string;
  config(): Promise<ConfigStore>;
  credentials(): CredentialStore;
  baseUrl(): Promise<{ url: string }>;
}

const secretOf = (ctx: SessionContext) => `${ctx.profile}/session`;
const keepTokens = (ctx: SessionContext, tokens: SessionTokens) =>
  ctx.credentials().set(secretOf(ctx), JSON.stringify(tokens));

export function profileSession(ctx: SessionContext): ProfileSession {
  const { profile } = ctx;
  const secret = secretOf(ctx);

  const session: ProfileSession = {
    async current() {
      const info = (await ctx.config()).profile(profile).session;
      // A session is only ever sent to the service that issued it.
      return info && info.base_url === (await ctx.baseUrl()).url ? info : undefined;
    },

    async tokens() {
      if (!(await session.current())) return undefined;
      const raw = await ctx.credentials().get(secret);
      return raw ? (JSON.parse(raw) as SessionTokens) : undefined;
    },

    async save(info, tokens) {
      await keepTokens(ctx, tokens);
      (await ctx.config()).updateProfile(profile, (p) => ({ ...p, base_url: info.base_url, session: info }));
    },

    async forget() {
      await ctx.credentials().delete(secret);
      (await ctx.config()).updateProfile(profile, ({ session: _gone, ...rest }) => rest);
    },

    async withLock(fn) {
      const dir = await ctx.credentials().ensureDir();
      return withFileLock(join(dir, `${profile}.refresh.lock`), fn);
    },
  };
  return session;
}

/**
 * The session as the client sees it: read from the credential store on every call, rotated under the file lock.
 * `ended` hears of the session forgotten when the service refuses to refresh it.
 */
export function clientSessionStore(ctx: SessionContext, ended: (info: SessionInfo | undefined) => void): SessionStore {
  const session = profileSession(ctx);
  return {
    load: async () => (await session.tokens()) ?? null,
    save: (tokens) => keepTokens(ctx, tokens),
    async clear() {
      ended(await session.current());
      await session.forget();
    },
    withLock: session.withLock,
  };
}
