import { Command } from 'commander';
import { examples, type Runner } from '../../command.js';
import type { Context } from '../../context.js';
import { printFields, printJson } from '../../output.js';
import { DOMAIN_ARGUMENT, findDomain } from './shared.js';

export function domainsGetCommand(runner: Runner): Command {
  const cmd = new Command('get')
    .description('Show one domain')
    .argument(...DOMAIN_ARGUMENT)
    .action((domain: string, _o: object, c: Command) => runner(c, domainsGetRun, { domain }));
  return examples(cmd, 'svc domains get example.com', 'svc domains get dom_… --json | jq -r .status');
}

export async function domainsGetRun(ctx: Context, o: { domain: string }): Promise<void> {
  const { id } = await findDomain(ctx, o.domain);
  const r = await (await ctx.client()).call('getDomain', { params: { id } });
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
