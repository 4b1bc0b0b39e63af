import { createHash } from 'node:crypto';
import type { Secrets } from './core/deps.js';

/**
 * The instance id of a data directory (the Svc-Sandbox-Instance header): derived from its secrets, so it stays the
 * same across restarts and changes exactly when they are made afresh (`svc serve --reset`, every `--memory` start),
 * which is when sessions and keys saved before stop working. A one-way hash: it reveals nothing of the secrets.
 */
export function instanceId(secrets: Secrets): string {
  const hash = createHash('sha256').update('svc sandbox instance\n').update(secrets.hashKey).update(secrets.jwtKey);
  return `inst_${hash.digest('base64url').slice(0, 22)}`;
}
