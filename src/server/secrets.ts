import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ADMIN_TOKEN_PREFIX } from '../contract/sandbox.js';
import { base62 } from '../lib/ids.js';
import type { Secrets } from './core/deps.js';

/** Server secrets and the admin token: generated once per data directory and kept in 0600 files. */
export function loadSecrets(dataDir: string | null): { secrets: Secrets; adminToken: string } {
  const fresh = () => ({ jwt: randomBytes(32).toString('base64'), hash: randomBytes(32).toString('base64') });
  let stored = fresh();
  let adminToken = `${ADMIN_TOKEN_PREFIX}${base62(32)}`;
  if (dataDir) {
    const secretsFile = join(dataDir, 'secrets.json');
    const tokenFile = join(dataDir, 'admin-token');
    if (existsSync(secretsFile)) stored = JSON.parse(readFileSync(secretsFile, 'utf8'));
    else writeFileSync(secretsFile, JSON.stringify(stored), { mode: 0o600 });
    if (existsSync(tokenFile)) adminToken = readFileSync(tokenFile, 'utf8').trim();
    else writeFileSync(tokenFile, adminToken + '\n', { mode: 0o600 });
  }
  return {
    secrets: { jwtKey: new Uint8Array(Buffer.from(stored.jwt, 'base64')), hashKey: Buffer.from(stored.hash, 'base64') },
    adminToken,
  };
}
