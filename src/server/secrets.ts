import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ADMIN_TOKEN_PREFIX, Seed } from '../contract/seed.js';
import { base62 } from '../lib/ids.js';
import { writePrivateFile } from '../lib/private-file.js';
import type { Secrets } from './core/deps.js';

/** The files of a data directory that hold secrets, each readable only by the user. */
export const SECRETS_FILE = 'secrets.json';
export const ADMIN_TOKEN_FILE = 'admin-token';
export const SEED_FILE = 'seed.json';

/**
 * Server secrets and the admin token: generated once per data directory and kept in 0600 files. `rotate` makes a new
 * admin token in place of the kept one (`svc serve --rotate-admin-token`), which ends every inbox session.
 */
export function loadSecrets(dataDir: string | null, rotate = false): { secrets: Secrets; adminToken: string } {
  const fresh = () => ({ jwt: randomBytes(32).toString('base64'), hash: randomBytes(32).toString('base64') });
  let stored = fresh();
  let adminToken = `${ADMIN_TOKEN_PREFIX}${base62(32)}`;
  if (dataDir) {
    const secretsFile = join(dataDir, SECRETS_FILE);
    const tokenFile = join(dataDir, ADMIN_TOKEN_FILE);
    if (existsSync(secretsFile)) stored = JSON.parse(readFileSync(secretsFile, 'utf8'));
    else writePrivateFile(secretsFile, JSON.stringify(stored));
    if (!rotate && existsSync(tokenFile)) adminToken = readFileSync(tokenFile, 'utf8').trim();
    else writePrivateFile(tokenFile, `${adminToken}\n`);
  }
  return {
    secrets: { jwtKey: new Uint8Array(Buffer.from(stored.jwt, 'base64')), hashKey: Buffer.from(stored.hash, 'base64') },
    adminToken,
  };
}

/**
 * Keeps the seed (its password and keys: the database holds only their hashes) beside the admin token, so that every
 * later start can report it again (docs/local-server.md#the-ready-line-and-the-seed: a restart never strands anyone).
 */
export function saveSeed(dataDir: string, seed: Seed): void {
  const file = join(dataDir, SEED_FILE);
  writePrivateFile(file, `${JSON.stringify(seed, null, 2)}\n`);
}

/** The seed kept in the data directory; null when there is none (a data directory of an older version, --no-seed). */
export function loadSeed(dataDir: string): Seed | null {
  let text: string;
  try {
    text = readFileSync(join(dataDir, SEED_FILE), 'utf8');
  } catch {
    return null;
  }
  try {
    return Seed.parse(JSON.parse(text));
  } catch {
    return null;
  }
}
