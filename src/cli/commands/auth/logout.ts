import { Command } from 'commander';
import { examples, type Runner } from '../../command.js';
import type { Context } from '../../context.js';
import { profileSession } from '../../profile-session.js';

export function logoutCommand(runner: Runner): Command {
  const cmd = new Command('logout')
    .description("End this profile's session and forget it")
    .action((_o: object, c: Command) => runner(c, logoutRun, {}));
  return examples(cmd, 'svc logout', 'svc logout --profile staging');
}

export async function logoutRun(ctx: Context): Promise<void> {
  const session = profileSession(ctx);
  const tokens = await session.tokens();
  const { url } = await ctx.baseUrl();
  if (!tokens) {
    ctx.io.info(`Not logged in to ${url}${ctx.profile === 'default' ? '' : ` [profile ${ctx.profile}]`}.`);
    return;
  }
  try {
    await (await ctx.client()).call('logout', { body: { refresh_token: tokens.refresh_token } });
  } catch (err) {
    await session.forget();
    ctx.io.info('The session is forgotten here, but the service was not told: it stays valid until it expires.');
    throw err;
  }
  await session.forget();
  ctx.io.info(`${ctx.io.err.green('✓')} Logged out of ${url}.`);
}
