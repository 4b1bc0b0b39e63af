import type { Session } from '../../contract/auth.js';
import { HOUR } from '../../lib/clock.js';
import { newId } from '../../lib/ids.js';
import type { AccountStore, UserRow } from '../store/accounts.js';
import type { Deps } from './deps.js';
import { createEmailVerification } from './email-verification.js';
import { fail } from './errors.js';
import { createInvites } from './invites.js';
import { checkPasswordRules, hashMadePassword, hashPassword } from './rules/passwords.js';
import type { RateLimits } from './rate-limits.js';
import { createSessions, toUser } from './sessions.js';
import { createWorkspaces } from './workspaces.js';

export interface SignupInput {
  email: string;
  password: string;
  workspace_name: string;
  invite_code?: string;
  name?: string;
  locale?: string;
}

/**
 * Accounts: signup and the seed's owner here; sessions (sessions.ts), email verification (email-verification.ts),
 * invites (invites.ts) and workspaces (workspaces.ts) beside it.
 */
export function createAccounts(deps: Deps & { store: AccountStore; rateLimits: RateLimits }) {
  const { store, clock, rateLimits } = deps;
  const workspaces = createWorkspaces(deps);
  const verification = createEmailVerification(deps);
  const sessions = createSessions(deps);
  const invites = createInvites(deps);

  /** A new user with a new workspace they own. Call inside a transaction. */
  function createOwner(user: UserRow, workspaceName: string) {
    store.insertUser(user);
    return { user, workspace: workspaces.create(user.id, workspaceName, 'owner') };
  }

  return {
    toUser,
    createWorkspace: workspaces.create,

    /** POST /auth/signup */
    async signup(input: SignupInput, ip: string): Promise<Session> {
      rateLimits.check({ bucket: `signup:${ip}`, limit: 20, windowMs: HOUR });
      rateLimits.hit(`signup:${ip}`);
      const inviteHash = invites.check(input.invite_code);
      await checkPasswordRules(input.password);
      const passwordHash = await hashPassword(input.password);
      const { user, workspace } = store.transaction(() => {
        if (inviteHash) invites.use(inviteHash);
        if (store.userByEmail(input.email)) {
          fail('email_taken', 'An account with this email already exists; sign in with `svc login` instead.', {
            errors: [{ path: 'email', code: 'taken', message: 'already registered' }],
          });
        }
        const owner = createOwner(
          {
            id: newId('usr'),
            email: input.email,
            name: input.name ?? null,
            locale: input.locale ?? null,
            password_hash: passwordHash,
            email_verified_at: null,
            created_at: clock.now(),
          },
          input.workspace_name,
        );
        verification.send(owner.user);
        return owner;
      });
      return sessions.issue(user, workspace);
    },

    login: sessions.login,
    refresh: sessions.refresh,
    logout: sessions.logout,
    exists: sessions.exists,
    me: sessions.me,
    revokeAll: sessions.revokeAll,
    verifyEmail: verification.verifyEmail,
    resendVerification: verification.resendVerification,
    createInvite: invites.create,
    addWorkspace: workspaces.add,
    setWorkspaceStatus: workspaces.setStatus,

    /**
     * Seed: a confirmed owner with one workspace; the password is one the service made at random (hashed at the least
     * cost: hashMadePassword).
     */
    async seedOwner(email: string, password: string, workspaceName: string) {
      const passwordHash = await hashMadePassword(password);
      return store.transaction(() =>
        createOwner(
          {
            id: newId('usr'),
            email,
            name: 'Sandbox Owner',
            locale: null,
            password_hash: passwordHash,
            email_verified_at: clock.now(),
            created_at: clock.now(),
          },
          workspaceName,
        ),
      );
    },
  };
}
export type Accounts = ReturnType<typeof createAccounts>;
