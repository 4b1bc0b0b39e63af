import { Command } from 'commander';
import { examples, type Runner } from '../../command.js';
import type { Context } from '../../context.js';

export function domainsDeleteCommand(runner: Runner): Command {
  const cmd = new Command('delete')
    .description('Delete a domain (refused while a key is restricted to it or mail from it is waiting)')
    .argument('<id>', 'the domain id (dom_…)')
    .action((id: string, _o: object, c: Command) => runner(c, domainsDeleteRun, { id }));
  return examples(cmd, 'svc domains delete dom_…');
}

export async function domainsDeleteRun(ctx: Context, o: { id: string }): Promise<void> {
  await (await ctx.client()).call('deleteDomain', { params: { id: o.id } });
  ctx.io.info(`${ctx.io.err.green('✓')} Deleted ${o.id}.`);
}
