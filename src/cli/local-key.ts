// A run that sent a local server (`svc serve`) no credential is told the test key that server was seeded with, whole,
// as `svc serve` prints it: a key of the person's own sandbox, which sends nothing beyond it.
import type { Context } from './context.js';
import { clientErrors } from './errors.js';

/**
 * The hint for a refusal for want of a credential an API key gives, when a registered local server refused it and was
 * seeded with a test key that still works (lib/local-servers.ts); else undefined.
 */
export async function localKeyHint(ctx: Context, err: unknown): Promise<string | undefined> {
  const { ApiError } = await clientErrors();
  if (!(err instanceof ApiError) || err.problem.code !== 'missing_credentials' || !err.sandbox) return undefined;
  if (err.auth !== 'key' && err.auth !== 'either') return undefined;
  const { findLocalServer } = await import('../lib/local-servers.js');
  const key = findLocalServer(err.baseUrl ?? (await ctx.baseUrl()).url, ctx.io.env)?.seed_test_key;
  if (!key) return undefined;
  const login = err.auth === 'either' ? ', or sign in with `svc login`' : '';
  return `use the test key this local svc serve was seeded with: SVC_API_KEY=${key} (or --api-key ${key})${login}`;
}
