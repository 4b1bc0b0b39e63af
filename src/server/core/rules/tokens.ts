import { newId } from '../../../lib/ids.js';
import { ServiceError } from '../errors.js';

export const ACCESS_TOKEN_TTL_S = 900;

export interface AccessClaims {
  sub: string;
  ws?: string;
  sid: string;
  iat: number;
  exp: number;
  jti: string;
}

/** Signs an HS256 access token valid 15 minutes from `nowMs` on the service clock. */
export async function signAccessToken(
  key: Uint8Array,
  claims: { sub: string; ws?: string | null; sid: string },
  nowMs: number,
): Promise<{ token: string; exp: number }> {
  const iat = Math.floor(nowMs / 1000);
  const exp = iat + ACCESS_TOKEN_TTL_S;
  // jose is loaded by the first token, not with the server: a sandbox that starts and never signs anyone in needs none.
  const { SignJWT } = await import('jose');
  const token = await new SignJWT({ sid: claims.sid, ...(claims.ws ? { ws: claims.ws } : {}) })
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setSubject(claims.sub)
    .setIssuedAt(iat)
    .setExpirationTime(exp)
    .setJti(newId('jti'))
    .sign(key);
  return { token, exp };
}

/** Verifies signature (HS256 only: `alg: none` and every other algorithm are refused) and expiry. */
export async function verifyAccessToken(key: Uint8Array, token: string, nowMs: number): Promise<AccessClaims> {
  try {
    const { jwtVerify } = await import('jose');
    const { payload } = await jwtVerify(token, key, {
      algorithms: ['HS256'],
      currentDate: new Date(nowMs),
      clockTolerance: 0,
      requiredClaims: ['sub', 'sid', 'exp', 'iat'],
    });
    if (typeof payload.sub !== 'string' || typeof payload.sid !== 'string') throw new Error('claims');
    if (payload.ws !== undefined && typeof payload.ws !== 'string') throw new Error('claims');
    return payload as unknown as AccessClaims;
  } catch {
    throw new ServiceError(
      'invalid_token',
      'The access token is invalid or expired; sign in again with `svc login`, or refresh the session.',
    );
  }
}
