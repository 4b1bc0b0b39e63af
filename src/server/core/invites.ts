import { iso } from '../../lib/clock.js';
import { newId, secretToken } from '../../lib/ids.js';
import type { AccountStore } from '../store/accounts.js';
import { keyedHash, type Deps } from './deps.js';
import { ServiceError, invalidField } from './errors.js';

/** Invite codes: made by the sandbox, asked of a signup unless signup is open (config.openSignup). */
export function createInvites(deps: Pick<Deps, 'clock' | 'secrets' | 'config'> & { store: AccountStore }) {
  const { store, clock, secrets, config } = deps;
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

  return {
    /** A signup's invite code checked: the hash to use it up by, or null when signup is open. */
    check(code: string | undefined): string | null {
      if (config.openSignup) return null;
      if (!code) inviteRequired();
      const inviteHash = hash(code!);
      if (!store.inviteValid(inviteHash, clock.now())) inviteRequired();
      return inviteHash;
    },

    /** Uses a checked invite up, in the signup's transaction (refused if its last use went meanwhile). */
    use(inviteHash: string): void {
      if (!store.useInvite(inviteHash, clock.now())) inviteRequired();
    },

    /** Sandbox: a new invite code (shown once; stored hashed). */
    create(opts: { max_uses?: number; expires_at?: string }) {
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
  };
}
