import type { Role, Session, User, Workspace } from '../../contract/auth.js';
import { DAY, MINUTE, iso } from '../../lib/clock.js';
import { newId, secretToken } from '../../lib/ids.js';
import type { AccountStore, MemberWorkspaceRow, UserRow } from '../store/accounts.js';
import { keyedHash, type Deps } from './deps.js';
import { fail } from './errors.js';
import { verifyPassword } from './rules/passwords.js';
import { FAILED_LOGINS_PER_ADDRESS, type RateLimits } from './rate-limits.js';
import { ACCESS_TOKEN_TTL_S, signAccessToken } from './rules/tokens.js';
import { toWorkspace } from './workspaces.js';

const REFRESH_TTL = 30 * DAY;
const LOGIN_WINDOW = 15 * MINUTE;

export function toUser(u: UserRow, role?: Role): User {
  return {
    id: u.id,
    email: u.email,
    ...(u.name ? { name: u.name } : {}),
    ...(role ? { role } : {}),
    email_verified: u.email_verified_at != null,
  };
}

/** The workspace a session should carry: the one asked for (must be a member), else the only one. */
function pickWorkspace(
  store: AccountStore,
  userId: string,
  requested: string | null | undefined,
): MemberWorkspaceRow | null {
  if (requested != null) {
    return (
      store.membership(userId, requested) ??
      fail('not_a_member', 'You are not a member of that workspace; sign in without workspace_id to see yours.')
    );
  }
  const all = store.workspacesOf(userId);
  return all.length === 1 ? (all[0] ?? null) : null;
}

/** Sessions: login, the refresh tokens' rotation and revocation, and the account a session is of. */
export function createSessions(
  deps: Pick<Deps, 'clock' | 'secrets'> & { store: AccountStore; rateLimits: RateLimits },
) {
  const { store, clock, secrets, rateLimits } = deps;
  const hash = (v: string) => keyedHash(secrets, v);

  /** A new session: an access token and a refresh token of the family `familyId` (a new family by default). */
  async function issue(user: UserRow, workspace: MemberWorkspaceRow | null, familyId = newId('sid')): Promise<Session> {
    const now = clock.now();
    const refresh = secretToken('rt_', 256);
    store.insertRefreshToken({
      id: newId('rtk'),
      token_hash: hash(refresh),
      family_id: familyId,
      user_id: user.id,
      workspace_id: workspace?.id ?? null,
      created_at: now,
      expires_at: now + REFRESH_TTL,
      used_at: null,
      revoked_at: null,
    });
    const { token, exp } = await signAccessToken(
      secrets.jwtKey,
      { sub: user.id, ws: workspace?.id, sid: familyId },
      now,
    );
    const all = store.workspacesOf(user.id);
    return {
      access_token: token,
      refresh_token: refresh,
      expires_at: iso(exp * 1000),
      user: toUser(user, workspace?.role),
      ...(workspace ? { workspace: toWorkspace(workspace, workspace.role) } : {}),
      workspaces: all.map((w) => toWorkspace(w, w.role)),
    };
  }

  return {
    issue,

    /** POST /auth/login */
    async login(input: { email: string; password: string; workspace_id?: string }, ip: string): Promise<Session> {
      const ipBucket = `login-ip:${ip}`;
      const accountBucket = `login-account:${input.email.toLowerCase()}`;
      // Throttled attempts are refused before the password is looked at.
      rateLimits.check(
        { bucket: ipBucket, ...FAILED_LOGINS_PER_ADDRESS },
        { bucket: accountBucket, limit: 10, windowMs: LOGIN_WINDOW },
      );
      const user = store.userByEmail(input.email);
      if (!(await verifyPassword(user?.password_hash, input.password)) || !user) {
        rateLimits.hit(ipBucket, accountBucket);
        fail('invalid_credentials', 'The email or password is wrong; check both and sign in again.');
      }
      rateLimits.clear(ipBucket, accountBucket);
      const workspace = pickWorkspace(store, user!.id, input.workspace_id);
      return issue(user!, workspace);
    },

    /** POST /auth/refresh: single use, rotating; reuse of a rotated token revokes the family. */
    async refresh(input: { refresh_token: string; workspace_id?: string }): Promise<Session> {
      const now = clock.now();
      const invalid = () =>
        fail('invalid_refresh_token', 'The refresh token is unknown, expired or already used; sign in again.');
      const row = store.refreshTokenByHash(hash(input.refresh_token));
      if (!row || row.revoked_at != null || row.expires_at <= now) invalid();
      if (row!.used_at != null) {
        store.revokeFamily(row!.family_id, now);
        invalid();
      }
      const user = store.userById(row!.user_id) ?? invalid();
      const workspace = pickWorkspace(store, user.id, input.workspace_id ?? row!.workspace_id) ?? null;
      if (!store.useRefreshToken(row!.id, now)) {
        // Lost a race with another use of the same token: that is reuse too.
        store.revokeFamily(row!.family_id, now);
        invalid();
      }
      return issue(user, workspace, row!.family_id);
    },

    /** POST /auth/logout: 204 whatever the token. */
    logout(refreshToken: string): void {
      const row = store.refreshTokenByHash(hash(refreshToken));
      if (row) store.revokeFamily(row.family_id, clock.now());
    },

    /** Whether an account with this user id exists. */
    exists: (userId: string): boolean => store.userById(userId) !== undefined,

    /** GET /auth/me */
    me(userId: string, workspaceId: string | null): { user: User; workspace?: Workspace } {
      const user =
        store.userById(userId) ??
        fail('invalid_token', 'The account of this session no longer exists; sign in with another.');
      const m = workspaceId ? store.membership(userId, workspaceId) : undefined;
      return { user: toUser(user, m?.role), ...(m ? { workspace: toWorkspace(m, m.role) } : {}) };
    },

    /** POST /auth/sessions/revoke-all */
    revokeAll(userId: string) {
      const now = clock.now();
      const revoked = store.revokeUserTokens(userId, now);
      const until = iso(now + ACCESS_TOKEN_TTL_S * 1000);
      return {
        revoked,
        access_tokens_valid_until: until,
        note: `All refresh tokens are revoked. Access tokens already issued stay valid until they expire, at the latest ${until}.`,
      };
    },
  };
}
