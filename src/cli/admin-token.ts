// The admin token the Context's client sends to the sandbox routes of a local server (docs/local-server.md).
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { isLoopbackHost, parseBaseUrl } from '../client/base-url.js';
import { AuthError } from './errors.js';
import type { Env } from './io.js';
import { defaultDataDir } from './paths.js';

/**
 * The admin token of the sandbox routes: `given` (`--admin-token`), else SVC_ADMIN_TOKEN, else — for a loopback base
 * URL — the token of the local server registered at that address (any port, any data directory), else the
 * `admin-token` file of the default data directory. Without one, says which to set rather than asking the server
 * without a token.
 */
export async function adminToken(url: string, given: string | undefined, env: Env): Promise<string> {
  const told = given || env.SVC_ADMIN_TOKEN;
  if (told) return told;
  const set = 'set SVC_ADMIN_TOKEN (or pass --admin-token) to the admin_token of the ready line `svc serve` printed';
  const parsed = parseBaseUrl(url);
  if (!parsed || !isLoopbackHost(parsed.hostname)) throw new AuthError(`no admin token for ${url}`, set);
  const { findLocalServer } = await import('../lib/local-servers.js');
  const registered = findLocalServer(url, env);
  if (registered) return registered.admin_token;
  const file = join(defaultDataDir(env), 'admin-token');
  const token = (await readFile(file, 'utf8').catch(() => '')).trim();
  if (token) return token;
  throw new AuthError(
    `no admin token for ${url}: no svc serve on this machine is registered at that address, and ${file} does not exist`,
    `start one with \`svc serve\`, or ${set}`,
  );
}
