import type { Db } from './db.js';

export interface UserRow {
  id: string;
  email: string;
  name: string | null;
  locale: string | null;
  password_hash: string;
  email_verified_at: number | null;
  created_at: number;
}
export interface WorkspaceRow {
  id: string;
  name: string;
  slug: string;
  status: 'active' | 'suspended' | 'closed';
  pinned_version: string;
  created_at: number;
}
export type MemberWorkspaceRow = WorkspaceRow & { role: 'owner' | 'admin' | 'member' };
export interface RefreshTokenRow {
  id: string;
  token_hash: string;
  family_id: string;
  user_id: string;
  workspace_id: string | null;
  created_at: number;
  expires_at: number;
  used_at: number | null;
  revoked_at: number | null;
}
export interface InviteRow {
  id: string;
  code_hash: string;
  max_uses: number;
  uses: number;
  expires_at: number | null;
  created_at: number;
}
export interface VerificationTokenRow {
  token_hash: string;
  user_id: string;
  email: string;
  created_at: number;
  expires_at: number;
  used_at: number | null;
}

export function createAccountStore(db: Db) {
  return {
    transaction: <T>(fn: () => T): T => db.transaction(fn)(),

    insertUser(u: UserRow): void {
      db.prepare(
        `INSERT INTO users (id, email, name, locale, password_hash, email_verified_at, created_at)
         VALUES (@id, @email, @name, @locale, @password_hash, @email_verified_at, @created_at)`,
      ).run(u);
    },
    userById: (id: string) => db.prepare('SELECT * FROM users WHERE id = ?').get(id) as UserRow | undefined,
    userByEmail: (email: string) =>
      db.prepare('SELECT * FROM users WHERE email = ? COLLATE NOCASE').get(email) as UserRow | undefined,
    /** Writes the given fields of a user (a seed file's password, confirmation or name). */
    updateUser(id: string, fields: Partial<Pick<UserRow, 'name' | 'password_hash' | 'email_verified_at'>>): void {
      const keys = Object.keys(fields);
      if (!keys.length) return;
      db.prepare(`UPDATE users SET ${keys.map((k) => `${k} = @${k}`).join(', ')} WHERE id = @id`).run({
        ...fields,
        id,
      });
    },
    markEmailVerified(userId: string, at: number): void {
      db.prepare('UPDATE users SET email_verified_at = ? WHERE id = ? AND email_verified_at IS NULL').run(at, userId);
    },

    insertWorkspace(w: WorkspaceRow): void {
      db.prepare(
        `INSERT INTO workspaces (id, name, slug, status, pinned_version, created_at)
         VALUES (@id, @name, @slug, @status, @pinned_version, @created_at)`,
      ).run(w);
    },
    workspaceById: (id: string) =>
      db.prepare('SELECT * FROM workspaces WHERE id = ?').get(id) as WorkspaceRow | undefined,
    slugTaken: (slug: string) => db.prepare('SELECT 1 FROM workspaces WHERE slug = ?').get(slug) !== undefined,
    setWorkspaceStatus(id: string, status: WorkspaceRow['status']): boolean {
      return db.prepare('UPDATE workspaces SET status = ? WHERE id = ?').run(status, id).changes === 1;
    },
    addMember(userId: string, workspaceId: string, role: MemberWorkspaceRow['role'], at: number): void {
      db.prepare('INSERT INTO memberships (user_id, workspace_id, role, created_at) VALUES (?, ?, ?, ?)').run(
        userId,
        workspaceId,
        role,
        at,
      );
    },
    membership: (userId: string, workspaceId: string) =>
      db
        .prepare(
          `SELECT w.*, m.role FROM memberships m JOIN workspaces w ON w.id = m.workspace_id
           WHERE m.user_id = ? AND m.workspace_id = ?`,
        )
        .get(userId, workspaceId) as MemberWorkspaceRow | undefined,
    workspacesOf: (userId: string) =>
      db
        .prepare(
          `SELECT w.*, m.role FROM memberships m JOIN workspaces w ON w.id = m.workspace_id
           WHERE m.user_id = ? ORDER BY m.created_at, w.id`,
        )
        .all(userId) as MemberWorkspaceRow[],
    /** The role of the workspace's first member: the user it was created for. */
    firstMemberRole: (workspaceId: string) =>
      (
        db
          .prepare('SELECT role FROM memberships WHERE workspace_id = ? ORDER BY created_at, rowid LIMIT 1')
          .get(workspaceId) as { role: MemberWorkspaceRow['role'] } | undefined
      )?.role,
    ownerOf: (workspaceId: string) =>
      db
        .prepare(
          `SELECT u.* FROM memberships m JOIN users u ON u.id = m.user_id
           WHERE m.workspace_id = ? AND m.role = 'owner' ORDER BY m.created_at LIMIT 1`,
        )
        .get(workspaceId) as UserRow | undefined,

    insertInvite(i: InviteRow): void {
      db.prepare(
        `INSERT INTO invites (id, code_hash, max_uses, uses, expires_at, created_at)
         VALUES (@id, @code_hash, @max_uses, @uses, @expires_at, @created_at)`,
      ).run(i);
    },
    /** Whether an invite with this code hash is valid at `now` (unused uses left, not expired). */
    inviteValid: (codeHash: string, now: number): boolean =>
      db
        .prepare(
          'SELECT 1 FROM invites WHERE code_hash = ? AND uses < max_uses AND (expires_at IS NULL OR expires_at > ?)',
        )
        .get(codeHash, now) !== undefined,
    /** Uses one invite if it is valid at `now`; true when it was used. */
    useInvite(codeHash: string, now: number): boolean {
      return (
        db
          .prepare(
            `UPDATE invites SET uses = uses + 1
             WHERE code_hash = ? AND uses < max_uses AND (expires_at IS NULL OR expires_at > ?)`,
          )
          .run(codeHash, now).changes === 1
      );
    },

    insertRefreshToken(t: RefreshTokenRow): void {
      db.prepare(
        `INSERT INTO refresh_tokens (id, token_hash, family_id, user_id, workspace_id, created_at, expires_at, used_at, revoked_at)
         VALUES (@id, @token_hash, @family_id, @user_id, @workspace_id, @created_at, @expires_at, @used_at, @revoked_at)`,
      ).run(t);
    },
    refreshTokenByHash: (hash: string) =>
      db.prepare('SELECT * FROM refresh_tokens WHERE token_hash = ?').get(hash) as RefreshTokenRow | undefined,
    /** Marks a token used, only if it is still usable; exactly one concurrent caller wins. */
    useRefreshToken(id: string, now: number): boolean {
      return (
        db
          .prepare(
            'UPDATE refresh_tokens SET used_at = ? WHERE id = ? AND used_at IS NULL AND revoked_at IS NULL AND expires_at > ?',
          )
          .run(now, id, now).changes === 1
      );
    },
    revokeFamily(familyId: string, now: number): number {
      return db
        .prepare('UPDATE refresh_tokens SET revoked_at = ? WHERE family_id = ? AND revoked_at IS NULL')
        .run(now, familyId).changes;
    },
    /** Revokes every live refresh token of a user; returns how many sessions that ended. */
    revokeUserTokens(userId: string, now: number): number {
      return db
        .prepare(
          `UPDATE refresh_tokens SET revoked_at = ?
           WHERE user_id = ? AND revoked_at IS NULL AND used_at IS NULL AND expires_at > ?`,
        )
        .run(now, userId, now).changes;
    },

    insertVerificationToken(t: VerificationTokenRow): void {
      db.prepare(
        `INSERT INTO verification_tokens (token_hash, user_id, email, created_at, expires_at, used_at)
         VALUES (@token_hash, @user_id, @email, @created_at, @expires_at, @used_at)`,
      ).run(t);
    },
    verificationToken: (hash: string) =>
      db.prepare('SELECT * FROM verification_tokens WHERE token_hash = ?').get(hash) as
        | VerificationTokenRow
        | undefined,
    useVerificationToken(hash: string, now: number): boolean {
      return (
        db
          .prepare(
            'UPDATE verification_tokens SET used_at = ? WHERE token_hash = ? AND used_at IS NULL AND expires_at > ?',
          )
          .run(now, hash, now).changes === 1
      );
    },
  };
}
export type AccountStore = ReturnType<typeof createAccountStore>;

/** Sliding windows over counted events (login throttle, signup, resend, verify). */
export function createRateStore(db: Db) {
  const count = db.prepare(
    'SELECT COUNT(*) AS n, MIN(at) AS oldest FROM rate_events WHERE bucket = ? AND at > ? AND at <= ?',
  );
  const add = db.prepare('INSERT INTO rate_events (bucket, at) VALUES (?, ?)');
  const clear = db.prepare('DELETE FROM rate_events WHERE bucket = ?');
  const prune = db.prepare('DELETE FROM rate_events WHERE at <= ?');
  return {
    /** The events of `bucket` after `since` and not after `until`, and the oldest one's time. */
    count: (bucket: string, since: number, until: number) =>
      count.get(bucket, since, until) as { n: number; oldest: number | null },
    add: (bucket: string, at: number) => void add.run(bucket, at),
    clear: (bucket: string) => void clear.run(bucket),
    prune: (before: number) => prune.run(before).changes,
  };
}
export type RateStore = ReturnType<typeof createRateStore>;
