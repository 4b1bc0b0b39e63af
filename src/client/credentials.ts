// The bearer of each call: the token given, the API key or the session's access token, as the operation's auth kind
// takes them; a session is refreshed before it expires (and after a 401 invalid_token), under its store's lock, so
// processes sharing it rotate it once.
import type { z } from 'zod';
import { Problem } from '../contract/common.js';
import { endpoints, type AuthKind } from '../contract/endpoints.js';
import { answerOf } from './answer.js';
import { SessionEndedError } from './errors.js';
import { type ExchangeFn, parseJson } from './exchange.js';
import type { ClientOptions, Secret } from './options.js';
import { target, type RequestHeadersFn } from './request.js';
import { expiresSoon, type SessionStore } from './session.js';

export const reveal = async (s: Secret | undefined) => (typeof s === 'function' ? await s() : s) || undefined;

export function createCredentials(
  opts: ClientOptions,
  deps: { base: string; exchange: ExchangeFn; requestHeaders: RequestHeadersFn },
) {
  const { base, exchange, requestHeaders } = deps;
  const now = opts.now ?? Date.now;

  /** Rotates the session under the store's lock; `failed` is the access token the service just refused, if any. */
  async function refresh(store: SessionStore, failed: string | undefined): Promise<string | undefined> {
    return store.withLock(async () => {
      // Read again inside the lock: another process may have rotated the tokens while this one waited.
      const current = await store.load();
      if (!current) return undefined;
      if (current.access_token !== failed && !expiresSoon(current, now())) return current.access_token;
      const e = endpoints.refreshSession;
      const { headers, body } = requestHeaders({ body: { refresh_token: current.refresh_token } }, 'refreshSession');
      const res = await exchange(e.method, target(base, e, {}), headers, body, {});
      if (res.status === 401) {
        const problem = Problem.safeParse(parseJson(res.text));
        if (problem.success && problem.data.code === 'invalid_refresh_token') {
          await store.clear();
          throw new SessionEndedError(problem.data);
        }
      }
      const session = answerOf<z.output<(typeof e.success)[1]>>(base, 'refreshSession', e, res).body;
      const next = {
        access_token: session.access_token,
        refresh_token: session.refresh_token,
        expires_at: session.expires_at,
      };
      await store.save(next);
      return next.access_token;
    });
  }

  /** The session's access token, refreshed first when it expires within a minute; undefined without a session. */
  async function sessionToken(): Promise<string | undefined> {
    if (!opts.session) return undefined;
    const tokens = await opts.session.load();
    if (!tokens) return undefined;
    return expiresSoon(tokens, now()) ? refresh(opts.session, undefined) : tokens.access_token;
  }

  /**
   * The bearer for an operation, and whether it is the session's (so a 401 `invalid_token` may refresh it). With no
   * credential the call goes without one, and the service's 401 `missing_credentials` says so.
   */
  async function credential(kind: AuthKind): Promise<{ bearer?: string; session?: boolean }> {
    if (kind === 'none') return {};
    if (kind === 'admin') return { bearer: await reveal(opts.adminToken) };
    const token = await reveal(opts.token);
    if (token) return { bearer: token };
    if (kind === 'key' || (kind === 'either' && opts.prefer === 'key')) {
      const key = await reveal(opts.apiKey);
      if (key || kind === 'key') return { bearer: key };
    }
    const access = await sessionToken();
    if (access) return { bearer: access, session: true };
    return { bearer: kind === 'either' ? await reveal(opts.apiKey) : undefined };
  }

  return { credential, refresh };
}
