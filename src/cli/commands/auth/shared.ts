// What signup and login share: asking for a value or naming the flag, reading a password from stdin, and keeping
// the issued session.
import type { Session } from '../../../contract/auth.js';
import type { ResponseHeaders, SessionTokens } from '../../../client/index.js';
import type { SessionInfo } from '../../config.js';
import type { Context } from '../../context.js';
import { UsageError } from '../../errors.js';
import { printJson } from '../../output.js';

/** A value from its flag, else asked on a terminal; without one, a usage error naming the flag (never a prompt). */
export async function valueOrAsk(
  ctx: Context,
  value: string | undefined,
  flag: string,
  question: string,
): Promise<string> {
  if (value !== undefined) return value;
  if (!ctx.io.canPrompt) throw new UsageError(`${flag} is required when svc is not run on a terminal`);
  return (await ctx.io.prompts()).input(question, { required: true });
}

/** The password from stdin (`--password-stdin`, one trailing line break removed), else asked without echo. */
export async function password(ctx: Context, fromStdin: boolean | undefined, question = 'Password'): Promise<string> {
  if (fromStdin) {
    const text = (await ctx.io.readStdin()).replace(/\r?\n$/, '');
    if (!text)
      throw new UsageError(
        '--password-stdin read an empty password',
        'pipe it in: printf \'%s\' "$PASSWORD" | svc login --email … --password-stdin',
      );
    return text;
  }
  if (!ctx.io.canPrompt)
    throw new UsageError(
      '--password-stdin is required when svc is not run on a terminal',
      'pipe it in: printf \'%s\' "$PASSWORD" | svc login --email … --password-stdin',
    );
  return (await ctx.io.prompts()).password(question);
}

export function tokensOf(s: Session): SessionTokens {
  return { access_token: s.access_token, refresh_token: s.refresh_token, expires_at: s.expires_at };
}

/** What the profile shows of a session just issued; `headers` are those of the answer that issued it. */
export function infoOf(baseUrl: string, s: Session, headers: ResponseHeaders): SessionInfo {
  const w = s.workspace;
  const instance = headers.instance;
  return {
    base_url: baseUrl,
    user: { id: s.user.id, email: s.user.email },
    ...(w ? { workspace: { id: w.id, name: w.name, slug: w.slug, role: w.role } } : {}),
    ...(instance ? { sandbox_instance: instance } : {}),
  };
}

/**
 * Reports a session just kept. With --json the Session body without its two tokens: they are credentials, kept in
 * the credential store and never printed.
 */
export function reportSession(ctx: Context, verb: string, baseUrl: string, raw: unknown, s: Session): void {
  if (ctx.json) {
    const { access_token: _a, refresh_token: _r, ...rest } = raw as Record<string, unknown>;
    printJson(ctx.io, rest);
    return;
  }
  const { io } = ctx;
  const where = s.workspace
    ? `, workspace ${io.err.bold(s.workspace.name)} (${s.workspace.slug}, ${s.workspace.role})`
    : '';
  io.info(
    `${io.err.green('✓')} ${verb} ${baseUrl} as ${io.err.bold(s.user.email)}${where}${ctx.profile === 'default' ? '' : ` [profile ${ctx.profile}]`}`,
  );
}
