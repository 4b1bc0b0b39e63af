import { Command } from 'commander';
import { examples, type Runner } from '../../command.js';
import type { Context } from '../../context.js';
import { printFields, printJson } from '../../output.js';

export function domainsGetCommand(runner: Runner): Command {
  const cmd = new Command('get')
    .description('Show one domain')
    .argument('<id>', 'the domain id (dom_…)')
    .action((id: string, _o: object, c: Command) => runner(c, domainsGetRun, { id }));
  return examples(cmd, 'svc domains get dom_…', 'svc domains get dom_… --json | jq -r .status');
}

export async function domainsGetRun(ctx: Context, o: { id: string }): Promise<void> {
  const r = await (await ctx.client()).call('getDomain', { params: { id: o.id } });
  if (ctx.json) return printJson(ctx.io, r.raw);
  const d = r.body;
  printFields(ctx.io, [
    ['id', d.id],
    ['name', d.name],
    ['status', d.status],
    ['purpose', d.purpose.join(', ')],
    ['mail from', `${d.mail_from_subdomain}.${d.name}`],
    ['tracking host', d.tracking_host],
    ['created', d.created_at],
    ['verified', d.verified_at],
    ['last checked', d.last_checked_at],
  ]);
  if (ctx.io.stderrIsTTY) ctx.io.info(`Records: svc domains dns ${d.id}`);
}
