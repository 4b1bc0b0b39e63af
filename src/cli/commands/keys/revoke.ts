import { Command } from 'commander';
import { apiKey } from '../../api-key.js';
import { examples, type Runner } from '../../command.js';
import type { Context } from '../../context.js';

export function keysRevokeCommand(runner: Runner): Command {
  const cmd = new Command('revoke')
    .description('Revoke an API key; it stops working at once')
    .argument('<id>', 'the key id (key_…)')
    .action((id: string, _o: object, c: Command) => runner(c, keysRevokeRun, { id }));
  return examples(cmd, 'svc keys revoke key_…');
}

export async function keysRevokeRun(ctx: Context, o: { id: string }): Promise<void> {
  await (await ctx.client()).call('revokeApiKey', { params: { id: o.id } });
  ctx.io.info(`${ctx.io.err.green('✓')} Revoked ${o.id}.`);
  const key = apiKey(ctx);
  if ((await key.saved())?.id === o.id) {
    await key.forget();
    ctx.io.info(`It was the key saved in profile ${ctx.profile}; it is forgotten.`);
  }
}
