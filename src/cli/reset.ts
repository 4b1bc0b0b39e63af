// A credential refused by a local server that was reset since the profile saved it (`svc serve --reset`, a new
// `--memory` start): the person is told so, not only that the key is invalid or the session ended. The profile
// remembers the instance (Svc-Sandbox-Instance) each credential came from; a server answering with another one was
// reset. The service itself sends no instance, so nothing here applies to it.
import { INSTANCE_HEADER } from '../contract/sandbox-headers.js';
import { apiKey } from './api-key.js';
import type { Context } from './context.js';
import { AuthError, clientErrors } from './errors.js';
import { profileSession } from './profile-session.js';

/** `err`, or an AuthError saying the local server was reset when that is why the credential was refused. */
export async function explainReset(ctx: Context, err: unknown): Promise<unknown> {
  const { ApiError, SessionEndedError } = await clientErrors();
  // A sandbox route refusing the admin token is another matter (errors.ts says whose token it takes).
  const refused = err instanceof ApiError && err.status === 401 && err.auth !== 'admin' ? err : undefined;
  const code = err instanceof SessionEndedError ? 'invalid_refresh_token' : refused?.problem.code;
  if (code !== 'invalid_refresh_token' && code !== 'invalid_token' && code !== 'invalid_api_key') return err;
  try {
    const { url } = await ctx.baseUrl();
    let saved: string | undefined;
    let hint: string;
    if (code === 'invalid_api_key') {
      const key = apiKey(ctx);
      if ((await key.source()) !== 'profile') return err;
      saved = (await key.saved())?.sandbox_instance;
      hint =
        'its keys are gone with it: run `svc login`, then `svc keys create --name NAME --scope emails:send --save`';
    } else {
      saved = (ctx.endedSession() ?? (await profileSession(ctx).current()))?.sandbox_instance;
      hint = 'run `svc login`';
    }
    if (!saved) return err;
    const now = refused?.headers.get(INSTANCE_HEADER) ?? (await instanceAt(url));
    if (!now || now === saved) return err;
    const since = code === 'invalid_api_key' ? "this profile's key was saved" : 'you logged in';
    return new AuthError(`the local server at ${url} was reset since ${since}`, hint);
  } catch {
    return err;
  }
}

/** The instance a server answers with now (any answer carries it); undefined when it does not say or cannot be asked. */
async function instanceAt(url: string): Promise<string | undefined> {
  try {
    const res = await fetch(`${url}/openapi.json`, { method: 'HEAD', signal: AbortSignal.timeout(3_000) });
    return res.headers.get(INSTANCE_HEADER) ?? undefined;
  } catch {
    return undefined;
  }
}
