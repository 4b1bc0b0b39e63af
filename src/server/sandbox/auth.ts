// Who may use the sandbox routes: a caller with the admin token as a bearer, or the inbox page with its cookie.
import { createHmac } from 'node:crypto';
import { ServiceError } from '../core/errors.js';
import { safeEqual } from '../core/deps.js';

export const ADMIN_COOKIE = 'svc_admin';

export interface SandboxAuth {
  /** The admin token itself (from the printed inbox URL), compared in constant time. */
  isToken(token: string): boolean;
  /** The cookie's value: derived from the admin token, so the cookie is not itself a bearer token. */
  readonly cookie: string;
  /**
   * Whether a request may use the sandbox: the admin token as a bearer, or the inbox cookie on a same-origin request.
   * Throws 403 for the cookie on a cross-origin request: another site (or another port of this host, which counts as
   * the same site for SameSite) must not act, nor read, with the reader's cookie.
   */
  admits(bearer: string | null, req: Request): boolean;
  /** Whether the request carries the inbox cookie (for page navigations, which show nothing another site can read). */
  hasCookie(req: Request): boolean;
}

function cookieOf(req: Request, name: string): string | null {
  for (const part of (req.headers.get('cookie') ?? '').split(';')) {
    const i = part.indexOf('=');
    if (i > 0 && part.slice(0, i).trim() === name) return part.slice(i + 1).trim();
  }
  return null;
}

/**
 * Whether a request came from a page of this origin: browsers send `Sec-Fetch-Site` (`same-origin`), and an older one
 * at least `Origin` on a request that changes something. A request with neither is not from this origin's page, and
 * an address typed in (`none`) is not either: the cookie then neither reads nor acts (the admin token as a bearer does).
 */
export function sameOrigin(req: Request): boolean {
  const site = req.headers.get('sec-fetch-site');
  if (site) return site === 'same-origin';
  const origin = req.headers.get('origin');
  if (!origin) return false;
  try {
    return new URL(origin).host === req.headers.get('host');
  } catch {
    return false;
  }
}

export function sandboxAuth(adminToken: string): SandboxAuth {
  const cookie = createHmac('sha256', adminToken).update('svc inbox cookie').digest('base64url');
  const hasCookie = (req: Request) => {
    const value = cookieOf(req, ADMIN_COOKIE);
    return value != null && safeEqual(value, cookie);
  };
  return {
    cookie,
    isToken: (token) => safeEqual(token, adminToken),
    hasCookie,
    admits(bearer, req) {
      if (bearer != null) return safeEqual(bearer, adminToken);
      if (!hasCookie(req)) return false;
      if (!sameOrigin(req)) {
        throw new ServiceError(
          'forbidden',
          'The inbox cookie works only on requests from the inbox page itself; other callers use "Authorization: Bearer <admin_token>".',
        );
      }
      return true;
    },
  };
}
