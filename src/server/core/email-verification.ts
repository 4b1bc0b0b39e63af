import { DAY, HOUR, MINUTE } from '../../lib/clock.js';
import { secretToken } from '../../lib/ids.js';
import type { AccountStore, UserRow } from '../store/accounts.js';
import { keyedHash, type Deps } from './deps.js';
import { fail } from './errors.js';
import { systemMessageIdHeader } from './rules/message-ids.js';
import type { RateLimits } from './rate-limits.js';

const VERIFICATION_TTL = DAY;

/** A user's email address confirmed: the verification email with its token, and the token's use. */
export function createEmailVerification(
  deps: Pick<Deps, 'clock' | 'secrets' | 'config' | 'jobs'> & { store: AccountStore; rateLimits: RateLimits },
) {
  const { store, clock, secrets, config, rateLimits, jobs } = deps;
  const hash = (v: string) => keyedHash(secrets, v);

  /** Queues the verification email (durably, in the caller's transaction). */
  function send(user: UserRow): void {
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

  return {
    send,

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
      if (user && user.email_verified_at == null) store.transaction(() => send(user));
      return { sent: true, note: 'If the address still needs confirming, a new verification email is on its way.' };
    },
  };
}
