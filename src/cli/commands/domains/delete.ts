import { Command } from 'commander';
import { examples, type Runner } from '../../command.js';
import type { Context } from '../../context.js';
import { DOMAIN_ARGUMENT, findDomain } from './shared.js';

export function domainsDeleteCommand(runner: Runner): Command {
  const cmd = new Command('delete')
    .description('Delete a domain (refused while a key is restricted to it or mail from it is waiting)')
    .argument(...DOMAIN_ARGUMENT)
    .action((domain: string, _o: object, c: Command) => runner(c, domainsDeleteRun, { domain }));
  return examples(cmd, 'svc domains delete example.com', 'svc domains delete dom_…');
}

export async function domainsDeleteRun(ctx: Context, o: { domain: string }): Promise<void> {
  const { id, name } = await findDomain(ctx, o.domain);
  await (await ctx.client()).call('deleteDomain', { params: { id } });
  ctx.io.info(`${ctx.io.err.green('✓')} Deleted ${name ? `${name} (${id})` : id}.`);
}
