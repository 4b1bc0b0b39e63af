import { Command } from 'commander';
import { apiKey } from '../../api-key.js';
import { examples, type Runner } from '../../command.js';
import type { Context } from '../../context.js';
import { AuthError } from '../../errors.js';
import { printFields, printJson } from '../../output.js';
import { profileSession } from '../../profile-session.js';

export function whoamiCommand(runner: Runner): Command {
  const cmd = new Command('whoami')
    .description('Show the signed-in user, the workspace and the base URL')
    .action((_o: object, c: Command) => runner(c, whoamiRun, {}));
  return examples(cmd, 'svc whoami', 'svc whoami --json');
}

export async function whoamiRun(ctx: Context): Promise<void> {
  const { url } = await ctx.baseUrl();
  if (!(await profileSession(ctx).current())) {
    const key = await apiKey(ctx).source();
    throw new AuthError(
      `not logged in to ${url} (profile ${ctx.profile})`,
      `svc login${key ? `; an API key is set (${key === 'profile' ? 'saved in the profile' : key === 'env' ? 'SVC_API_KEY' : '--api-key'}), but keys cannot read the account` : ''}`,
    );
  }
  const me = await (await ctx.client()).call('getMe');
  if (ctx.json) return printJson(ctx.io, me.raw);
  const { user, workspace } = me.body;
  printFields(ctx.io, [
    ['user', user.email],
    ['name', user.name],
    ['user id', user.id],
    ['email confirmed', user.email_verified ? 'yes' : 'no'],
    ['workspace', workspace ? `${workspace.name} (${workspace.slug})` : undefined],
    ['workspace id', workspace?.id],
    ['role', workspace?.role],
    ['base url', url],
    ['profile', ctx.profile],
  ]);
}
