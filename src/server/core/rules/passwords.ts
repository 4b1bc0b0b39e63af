import { hash, verify } from '@node-rs/argon2';
import { ServiceError } from '../errors.js';

export const MIN_PASSWORD_LENGTH = 12;

// argon2id with OWASP's recommended minimums (19 MiB, 2 iterations, 1 lane); per-hash random salt.
const PARAMS = { memoryCost: 19456, timeCost: 2, parallelism: 1 } as const;

let breached: Promise<Set<string>> | undefined;
/** The bundled list of common breached passwords, loaded on first use. */
function breachedPasswords(): Promise<Set<string>> {
  breached ??= import('@zxcvbn-ts/language-common').then(
    (m) => new Set((m.dictionary['passwords-common'] as string[]).map((p) => p.toLowerCase())),
  );
  return breached;
}

/** Length is the only composition rule; a password on the breach list is refused (case-insensitively). */
export async function checkPasswordRules(password: string): Promise<void> {
  if ([...password].length < MIN_PASSWORD_LENGTH) {
    throw new ServiceError(
      'password_too_short',
      `The password must be at least ${MIN_PASSWORD_LENGTH} characters long.`,
      {
        errors: [{ path: 'password', code: 'too_short', message: `at least ${MIN_PASSWORD_LENGTH} characters` }],
      },
    );
  }
  if ((await breachedPasswords()).has(password.toLowerCase())) {
    throw new ServiceError(
      'password_breached',
      'This password appears in a list of breached passwords; choose another.',
      {
        errors: [{ path: 'password', code: 'breached', message: 'found in a known breach' }],
      },
    );
  }
}

export function hashPassword(password: string): Promise<string> {
  return hash(password, PARAMS);
}

// A password the service made itself (the seed's: `sandbox-` and 16 random base62 characters, some 95 bits) is beyond
// guessing however fast its hash: OWASP's cost is for passwords people choose. The least cost spares every sandbox
// start the full one's; verifying reads the cost from the hash.
const MADE_PARAMS = { memoryCost: 1024, timeCost: 1, parallelism: 1 } as const;

/** The hash of a password the service generated at random (never one a person chose). */
export function hashMadePassword(password: string): Promise<string> {
  return hash(password, MADE_PARAMS);
}

let dummy: Promise<string> | undefined;
/** Verifies a password; with no stored hash, spends the same time on a dummy one so timing tells nothing. */
export async function verifyPassword(stored: string | undefined, password: string): Promise<boolean> {
  if (!stored) {
    dummy ??= hashPassword('dummy password for timing');
    await verify(await dummy, password).catch(() => false);
    return false;
  }
  return verify(stored, password).catch(() => false);
}
