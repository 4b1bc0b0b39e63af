import type { V1Endpoint } from '../../contract/endpoints.js';
import type { Role } from '../../contract/auth.js';
import { statusOf } from '../../contract/common.js';
import { ADMIN_TOKEN_PREFIX } from '../../contract/seed.js';
import type { AccountStore, WorkspaceRow } from '../store/accounts.js';
import type { Deps } from './deps.js';
import { ServiceError, fail } from './errors.js';
import { ipAllowed, type KeyPrincipal, type Keys } from './keys.js';
import { FAILED_LOGINS_PER_ADDRESS, type RateLimits } from './rate-limits.js';
import { verifyAccessToken } from './rules/tokens.js';

export interface SessionPrincipal {
  kind: 'session';
  userId: string;
  workspaceId: string | null;
  sid: string;
}
export type Principal = SessionPrincipal | KeyPrincipal;

/** Who is calling, resolved against the operation's requirements. */
export interface Caller<P extends Principal | null = Principal, W extends WorkspaceRow | null = WorkspaceRow | null> {
  principal: P;
  /** The workspace acted on, for workspace-scoped operations. */
  workspace: W;
  /** The session's role in that workspace; null for an API key. */
  role: Role | null;
}

/** The caller of an operation that takes no credential (and of a sandbox route, once the admin token checked out). */
export type AnonymousCaller = Caller<null, null>;
export const ANONYMOUS: AnonymousCaller = { principal: null, workspace: null, role: null };

/** What an operation asks of its caller: the endpoint table's auth kind, workspace, scope and role. */
export type Requirement = Pick<V1Endpoint, 'auth' | 'workspace' | 'scope' | 'role'>;

/** The principal each auth kind admits: `key` only an API key, `session` only a session, `either` both. */
type PrincipalOf<K> = K extends 'key' ? KeyPrincipal : K extends 'session' ? SessionPrincipal : Principal;

/**
 * The caller an operation gets, as its entry of the endpoint table says: no credential for `auth: 'none'` (and for
 * `auth: 'admin'`, a sandbox route), otherwise the principal its auth kind admits, with the workspace present when
 * it acts on one (`workspace: true`). authorize() makes it so; a handler reads it without checking again.
 */
export type CallerOf<E> = E extends { auth: infer K extends 'key' | 'session' | 'either' }
  ? Caller<PrincipalOf<K>, E extends { workspace: true } ? WorkspaceRow : null>
  : AnonymousCaller;

/** What an operation of each credential kind takes, in the words of a refusal. */
const TAKES: Record<Requirement['auth'], string> = {
  none: 'no credential',
  session: 'a session: sign in with `svc login` and send its access token',
  key: 'an API key (create one with `svc keys create`)',
  either: 'an API key or a session access token (`svc login` signs in; `svc keys create` makes a key)',
};

/**
 * Authenticates a bearer credential and checks it against an operation: 401 for a missing or bad credential,
 * 403 for the wrong kind, a disallowed IP, a suspended workspace, a missing scope or a role too low.
 */
export function createAccess(deps: Deps & { accounts: AccountStore; keys: Keys; rateLimits: RateLimits }) {
  const { accounts, keys, secrets, clock, rateLimits } = deps;

  async function principalOf(req: Requirement, bearer: string | null): Promise<Principal & { ipAllowlist?: string[] }> {
    if (!bearer) fail('missing_credentials', `This operation takes ${TAKES[req.auth]}, as "Authorization: Bearer …".`);
    if (bearer!.startsWith('svc_')) return keys.authenticate(bearer!);
    if (bearer!.startsWith(ADMIN_TOKEN_PREFIX)) {
      fail(
        'invalid_token',
        `This is the sandbox admin token: it opens /sandbox routes and the inbox page only. /v1 takes an API key or a session access token; this operation takes ${TAKES[req.auth]}.`,
      );
    }
    const claims = await verifyAccessToken(secrets.jwtKey, bearer!, clock.now());
    return { kind: 'session', userId: claims.sub, workspaceId: claims.ws ?? null, sid: claims.sid };
  }

  return {
    /** The caller of an operation of `req`'s requirements, typed by them (CallerOf), or the refusal that says why not. */
    async authorize<E extends Requirement>(req: E, bearer: string | null, ip: string): Promise<CallerOf<E>> {
      return (await resolve(req, bearer, ip)) as CallerOf<E>;
    },

    /**
     * A login with a credential as its password (SMTP submission's AUTH): authorize's answer, with the failed logins
     * of a client address throttled as sign-in's are — 30 in any 15 minutes, then 429 `rate_limited` with the wait,
     * before the credential is looked at. A failure is a password that is no credential (401); a key refused for what
     * it may do (its scope, its allowlist, a suspended workspace) is no failed login. A login that succeeds clears them.
     */
    async login<E extends Requirement>(req: E, password: string, ip: string): Promise<CallerOf<E>> {
      const bucket = `login-smtp-ip:${ip}`;
      rateLimits.check({ bucket, ...FAILED_LOGINS_PER_ADDRESS });
      try {
        const caller = (await resolve(req, password, ip)) as CallerOf<E>;
        rateLimits.clear(bucket);
        return caller;
      } catch (err) {
        if (err instanceof ServiceError && statusOf(err.code) === 401) rateLimits.hit(bucket);
        throw err;
      }
    },
  };

  async function resolve(req: Requirement, bearer: string | null, ip: string): Promise<Caller | AnonymousCaller> {
    if (req.auth === 'none') return ANONYMOUS;
    const p = await principalOf(req, bearer);
    if (req.auth === 'session' && p.kind === 'key') {
      fail(
        'session_required',
        'This operation manages the account and takes a session, not an API key; sign in with `svc login`.',
      );
    }
    if (req.auth === 'key' && p.kind === 'session') {
      fail('api_key_required', 'This operation takes an API key, not a session; create one with `svc keys create`.');
    }
    if (p.kind === 'key' && !ipAllowed(ip, p.ipAllowlist ?? [])) {
      fail(
        'ip_not_allowed',
        `This API key may not be used from ${ip}; call from an address on its allowlist, or use another key.`,
      );
    }
    const { ipAllowlist: _drop, ...principal } = p as Principal & { ipAllowlist?: string[] };
    if (!req.workspace) return { principal, workspace: null, role: null };

    let workspace: WorkspaceRow | undefined;
    let role: Role | null = null;
    if (principal.kind === 'session') {
      if (!principal.workspaceId) {
        fail(
          'workspace_required',
          'This session has no workspace selected; sign in choosing one with `svc login --workspace WS`.',
        );
      }
      const m = accounts.membership(principal.userId, principal.workspaceId!);
      if (!m)
        fail(
          'not_a_member',
          'You are no longer a member of this workspace; sign in again with `svc login` to choose another.',
        );
      workspace = m;
      role = m!.role;
    } else {
      workspace = accounts.workspaceById(principal.workspaceId);
    }
    if (!workspace) throw new ServiceError('invalid_api_key', 'The API key belongs to no workspace.');
    if (workspace.status !== 'active') {
      fail(
        'workspace_suspended',
        `This workspace is ${workspace.status}; API calls are refused until its operator reactivates it.`,
      );
    }
    if (principal.kind === 'key' && req.scope && !principal.scopes.includes(req.scope)) {
      fail(
        'insufficient_scope',
        `This API key lacks the ${req.scope} scope; use a key that has it (\`svc keys create --scope ${req.scope}\`).`,
      );
    }
    if (principal.kind === 'session' && req.role === 'admin' && role === 'member') {
      fail('forbidden', 'Your role in this workspace (member) may read but not change this; ask an owner or admin.');
    }
    return { principal, workspace, role };
  }
}
export type Access = ReturnType<typeof createAccess>;
