import { systemMessageIdHeader } from './message-ids.js';
import { SERVICE_VERSION } from '../../contract/common.js';
import type { Role, Session, User, Workspace } from '../../contract/auth.js';
import { DAY, HOUR, MINUTE, iso } from '../../lib/clock.js';
import { newId, secretToken } from '../../lib/ids.js';
import type { AccountStore, MemberWorkspaceRow, UserRow, WorkspaceRow } from '../store/accounts.js';
import { keyedHash, type Deps } from './deps.js';
import { ServiceError, fail, invalidField } from './errors.js';
import { checkPasswordRules, hashMadePassword, hashPassword, verifyPassword } from './passwords.js';
import { ACCESS_TOKEN_TTL_S, signAccessToken } from './tokens.js';
import { FAILED_LOGINS_PER_ADDRESS, type RateLimits } from './rate-limits.js';

const REFRESH_TTL = 30 * DAY;
const VERIFICATION_TTL = DAY;
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

export function toWorkspace(w: WorkspaceRow, role: Role): Workspace {
  return { id: w.id, name: w.name, slug: w.slug, role, status: w.status };
}

/** Lowercase ASCII, non-alphanumerics collapsed to `-`, trimmed, 1–63 characters. */
export function slugify(name: string): string {
  const s = name
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 63)
    .replace(/-+$/, '');
  return s || 'workspace';
}

export interface SignupInput {
  email: string;
  password: string;
  workspace_name: string;
  invite_code?: string;
  name?: string;
  locale?: string;
}

export function createAccounts(deps: Deps & { store: AccountStore; rateLimits: RateLimits }) {
  const { store, clock, secrets, config, rateLimits, jobs } = deps;
  const hash = (v: string) => keyedHash(secrets, v);

  function inviteRequired(): never {
    // Identical for a missing, wrong, expired or used code: nothing tells which.
    throw new ServiceError(
      'invite_required',
      'Registration is invite-only: sign up with a valid invite code, or join the waitlist (waitlist_url) to be invited.',
      {
        members: { waitlist_url: config.waitlistUrl },
      },
    );
  }

  function uniqueSlug(name: string): string {
    const base = slugify(name);
    if (!store.slugTaken(base)) return base;
    for (let i = 2; ; i++) {
      const suffix = `-${i}`;
      const s = base.slice(0, 63 - suffix.length).replace(/-+$/, '') + suffix;
      if (!store.slugTaken(s)) return s;
    }
  }

  /** Creates a workspace with `userId` in `role`. Call inside a transaction. */
  function createWorkspace(userId: string, name: string, role: Role): MemberWorkspaceRow {
    const now = clock.now();
    const w: WorkspaceRow = {
      id: newId('ws'),
      name,
      slug: uniqueSlug(name),
      status: 'active',
      pinned_version: SERVICE_VERSION,
      created_at: now,
    };
    store.insertWorkspace(w);
    store.addMember(userId, w.id, role, now);
    return { ...w, role };
  }

  /** Queues the verification email (durably, in the caller's transaction). */
  function sendVerification(user: UserRow): void {
    const token = secretToken('vt_', 192);
    const now = clock.now();
    store.insertVerificationToken({
      token_hash: hash(token),
      user_id: user.id,
      email: user.email,
      created_at: now,
      expires_at: now + VERIFICATION_TTL,
      used_at: null,
    });
    const link = `${config.origin()}/verify-email?token=${encodeURIComponent(token)}`;
    jobs.enqueue('system_mail', {
      // Fixed when the job is written, so a resend after a crash is recognised by the sink as the same message.
      message_id: systemMessageIdHeader(),
      to: user.email,
      subject: 'Confirm your email address',
      text:
        `Hello${user.name ? ` ${user.name}` : ''},\n\n` +
        `Confirm your email address to unlock live sending:\n\n${link}\n\n` +
        `Or use this token with POST /v1/auth/verify-email (or \`svc verify-email TOKEN\`):\n\n${token}\n\n` +
        `The link is valid for 24 hours and works once.\n`,
    });
  }

  async function issueSession(
    user: UserRow,
    workspace: MemberWorkspaceRow | null,
    familyId = newId('sid'),
  ): Promise<Session> {
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

  /** The workspace a session should carry: the one asked for (must be a member), else the only one. */
  function pickWorkspace(userId: string, requested: string | null | undefined): MemberWorkspaceRow | null {
    if (requested != null) {
      return (
        store.membership(userId, requested) ??
        fail('not_a_member', 'You are not a member of that workspace; sign in without workspace_id to see yours.')
      );
    }
    const all = store.workspacesOf(userId);
    return all.length === 1 ? (all[0] ?? null) : null;
  }

  return {
    toUser,
    createWorkspace,

    /** POST /auth/signup */
    async signup(input: SignupInput, ip: string): Promise<Session> {
      rateLimits.check({ bucket: `signup:${ip}`, limit: 20, windowMs: HOUR });
      rateLimits.hit(`signup:${ip}`);
      const now = clock.now();
      let inviteHash: string | null = null;
      if (!config.openSignup) {
        if (!input.invite_code) inviteRequired();
        inviteHash = hash(input.invite_code!);
        if (!store.inviteValid(inviteHash, now)) inviteRequired();
      }
      await checkPasswordRules(input.password);
      const passwordHash = await hashPassword(input.password);
      const { user, workspace } = store.transaction(() => {
        if (inviteHash && !store.useInvite(inviteHash, clock.now())) inviteRequired();
        if (store.userByEmail(input.email)) {
          fail('email_taken', 'An account with this email already exists; sign in with `svc login` instead.', {
            errors: [{ path: 'email', code: 'taken', message: 'already registered' }],
          });
        }
        const user: UserRow = {
          id: newId('usr'),
          email: input.email,
          name: input.name ?? null,
          locale: input.locale ?? null,
          password_hash: passwordHash,
          email_verified_at: null,
          created_at: clock.now(),
        };
        store.insertUser(user);
        const workspace = createWorkspace(user.id, input.workspace_name, 'owner');
        sendVerification(user);
        return { user, workspace };
      });
      return issueSession(user, workspace);
    },

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
      const workspace = pickWorkspace(user!.id, input.workspace_id);
      return issueSession(user!, workspace);
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
      const workspace = pickWorkspace(user.id, input.workspace_id ?? row!.workspace_id) ?? null;
      if (!store.useRefreshToken(row!.id, now)) {
        // Lost a race with another use of the same token: that is reuse too.
        store.revokeFamily(row!.family_id, now);
        invalid();
      }
      return issueSession(user, workspace, row!.family_id);
    },

    /** POST /auth/logout: 204 whatever the token. */
    logout(refreshToken: string): void {
      const row = store.refreshTokenByHash(hash(refreshToken));
      if (row) store.revokeFamily(row.family_id, clock.now());
    },

    /** GET /auth/me */
    /** Whether an account with this user id exists. */
    exists: (userId: string): boolean => store.userById(userId) !== undefined,

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

    /** POST /auth/verify-email */
    verifyEmail(token: string) {
      const now = clock.now();
      const h = hash(token);
      const row = store.verificationToken(h);
      if (!row || row.expires_at <= now) {
        fail(
          'verification_token_invalid',
          'The verification token is unknown or expired; ask for a new email with `svc verify-email --resend`.',
          {
            errors: [{ path: 'token', code: 'invalid', message: 'unknown or expired' }],
          },
        );
      }
      if (row!.used_at != null) {
        return { verified: true, email: row!.email, note: 'This address was already confirmed with this token.' };
      }
      store.transaction(() => {
        store.useVerificationToken(h, now);
        store.markEmailVerified(row!.user_id, now);
      });
      return {
        verified: true,
        email: row!.email,
        note: 'Email confirmed; live sending is unlocked for the workspaces you own.',
      };
    },

    /** POST /auth/resend-verification: the same 202 whether or not the address still needs confirming. */
    resendVerification(userId: string) {
      const bucket = `resend:${userId}`;
      rateLimits.check({ bucket, limit: 1, windowMs: MINUTE }, { bucket, limit: 5, windowMs: HOUR });
      rateLimits.hit(bucket);
      const user = store.userById(userId);
      if (user && user.email_verified_at == null) store.transaction(() => sendVerification(user));
      return { sent: true, note: 'If the address still needs confirming, a new verification email is on its way.' };
    },

    /** Sandbox: a new invite code (shown once; stored hashed). */
    createInvite(opts: { max_uses?: number; expires_at?: string }) {
      const code = `inv-${secretToken('', 96)}`;
      const now = clock.now();
      if (opts.expires_at && Date.parse(opts.expires_at) <= now) {
        throw invalidField('expires_at', 'must be in the future (on the service clock)');
      }
      const row = {
        id: newId('inv'),
        code_hash: hash(code),
        max_uses: opts.max_uses ?? 1,
        uses: 0,
        expires_at: opts.expires_at ? Date.parse(opts.expires_at) : null,
        created_at: now,
      };
      store.insertInvite(row);
      return {
        id: row.id,
        code,
        max_uses: row.max_uses,
        expires_at: row.expires_at == null ? null : iso(row.expires_at),
      };
    },

    /** Sandbox: adds an existing user to a new workspace; an email no user has is a 422 naming `email`. */
    addWorkspace(email: string, name: string, role: Role): Workspace {
      const user = store.userByEmail(email);
      if (!user) throw invalidField('email', 'no user has this email address; sign one up first (`svc signup`)');
      const w = store.transaction(() => createWorkspace(user.id, name, role));
      return toWorkspace(w, role);
    },

    /** Sandbox: suspend, activate or close a workspace. */
    setWorkspaceStatus(id: string, status: WorkspaceRow['status']): Workspace {
      if (!store.setWorkspaceStatus(id, status)) fail('not_found', 'No workspace has this id.');
      const w = store.workspaceById(id)!;
      // The operator is no member: the Workspace shows the role of the user it was created for.
      return toWorkspace(w, store.firstMemberRole(id) ?? 'owner');
    },

    /**
     * Seed: a confirmed owner with one workspace; the password is one the service made at random (hashed at the least
     * cost: hashMadePassword).
     */
    async seedOwner(email: string, password: string, workspaceName: string) {
      const passwordHash = await hashMadePassword(password);
      return store.transaction(() => {
        const user: UserRow = {
          id: newId('usr'),
          email,
          name: 'Sandbox Owner',
          locale: null,
          password_hash: passwordHash,
          email_verified_at: clock.now(),
          created_at: clock.now(),
        };
        store.insertUser(user);
        const workspace = createWorkspace(user.id, workspaceName, 'owner');
        return { user, workspace };
      });
    },
  };
}
export type Accounts = ReturnType<typeof createAccounts>;
