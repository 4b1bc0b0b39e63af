// Who may use the sandbox routes: a caller with the admin token as a bearer, or the inbox page with a session of its
// own. The page's session is a bearer the page's script holds (in the origin's storage, which no other port of the
// host can read) and sends in a header: no cookie is ever set, so nothing of svc's goes with a request to another
// port of this host (a link or a remote image in a caught message). What the page shows by address alone (a message's
// HTML in its frame, an attachment, the live stream) takes a view token scoped to that one thing. Both are signed
// with a key made from the admin token: a new admin token (`svc serve --rotate-admin-token`) ends every session.
// docs/local-server.md#who-can-open-the-inbox says what each credential opens, where it lives and how it ends.
import { createHmac, randomBytes } from 'node:crypto';
import { safeEqual } from '../core/deps.js';

/** An inbox session lasts a day from its last renewal (the page renews it as it starts), and a week at most. */
export const SESSION_IDLE_MS = 24 * 3600_000;
export const SESSION_MAX_MS = 7 * 24 * 3600_000;

export const SESSION_PREFIX = 'ses_';
export const VIEW_PREFIX = 'view_';
/** The scope of the live stream's view token (a message's is its id). */
export const STREAM_SCOPE = 'stream';

/** A live session, as its token names it: its id, when it was started (signed in), and when it ends. */
export interface InboxSession {
  readonly body: Buffer;
  readonly started: number;
  readonly expires: number;
}

export interface SandboxAuth {
  /** The admin token itself (from the printed inbox URL or the sign-in form), compared in constant time. */
  isToken(token: string): boolean;
  /** Whether a bearer may use the sandbox routes: the admin token, or a live session's token. */
  admits(bearer: string | null): boolean;
  /** A new session (a sign-in with the admin token), and its token. */
  signIn(): { token: string; expiresAt: Date };
  /** The live session a bearer is the token of, else null (another token, a forged or an ended one). */
  session(bearer: string | null): InboxSession | null;
  /** The session's token again, renewed: a day from now, within its week. */
  renew(session: InboxSession): { token: string; expiresAt: Date };
  /** A token that opens `scope` (a caught message's views, or the live stream) for as long as the session lasts. */
  viewToken(session: InboxSession, scope: string): string;
  /** The live session `token` is a view token of `scope` for, else null. */
  viewOf(token: string | null | undefined, scope: string): InboxSession | null;
}

const b64 = (b: Buffer) => b.toString('base64url');

/**
 * The sandbox's credentials, checked against `adminToken`. `now` is the wall clock (sessions are a reader's real
 * time, whatever the service clock says).
 */
export function sandboxAuth(adminToken: string, now: () => number = Date.now): SandboxAuth {
  const key = createHmac('sha256', adminToken).update('svc inbox sessions').digest();
  const mac = (domain: string, body: Buffer) => b64(createHmac('sha256', key).update(domain).update(body).digest());

  // A token is PREFIX + body + '.' + its MAC; the body is the session's id (16 bytes), start and end (seconds).
  const make = (sid: Buffer, started: number, expires: number): InboxSession => {
    const body = Buffer.alloc(24);
    sid.copy(body, 0, 0, 16);
    body.writeUInt32BE(Math.floor(started / 1000), 16);
    body.writeUInt32BE(Math.floor(expires / 1000), 20);
    return { body, started: body.readUInt32BE(16) * 1000, expires: body.readUInt32BE(20) * 1000 };
  };
  const sessionToken = (s: InboxSession) => `${SESSION_PREFIX}${b64(s.body)}.${mac('session.', s.body)}`;
  /** The live session whose signed body `token` carries under `prefix`, its MAC made in `domain`. */
  const read = (token: string | null | undefined, prefix: string, domain: string): InboxSession | null => {
    if (!token?.startsWith(prefix)) return null;
    const [body64, sig, extra] = token.slice(prefix.length).split('.');
    if (!body64 || !sig || extra !== undefined) return null;
    const body = Buffer.from(body64, 'base64url');
    if (body.length !== 24 || !safeEqual(sig, mac(domain, body))) return null;
    const s = { body, started: body.readUInt32BE(16) * 1000, expires: body.readUInt32BE(20) * 1000 };
    return s.expires > now() ? s : null;
  };
  const issue = (s: InboxSession) => ({ token: sessionToken(s), expiresAt: new Date(s.expires) });
  const session = (bearer: string | null) => read(bearer, SESSION_PREFIX, 'session.');

  return {
    isToken: (token) => safeEqual(token, adminToken),
    admits: (bearer) => bearer != null && (safeEqual(bearer, adminToken) || session(bearer) !== null),
    signIn() {
      const t = now();
      return issue(make(randomBytes(16), t, t + SESSION_IDLE_MS));
    },
    session,
    renew: (s) => issue(make(s.body, s.started, Math.min(now() + SESSION_IDLE_MS, s.started + SESSION_MAX_MS))),
    viewToken: (s, scope) => `${VIEW_PREFIX}${b64(s.body)}.${mac(`view.${scope}.`, s.body)}`,
    viewOf: (token, scope) => read(token, VIEW_PREFIX, `view.${scope}.`),
  };
}
