import { Command } from 'commander';
import { examples, type Runner } from '../../command.js';
import type { Context } from '../../context.js';
import { printJson, printTable } from '../../output.js';
import { DOMAIN_ARGUMENT, findDomain, recordStatusColumns } from './shared.js';

export function domainsDnsCommand(runner: Runner): Command {
  const cmd = new Command('dns')
    .description('The DNS records to publish for a domain, with what the last check saw')
    .argument(...DOMAIN_ARGUMENT)
    .action((domain: string, _o: object, c: Command) => runner(c, domainsDnsRun, { domain }));
  return examples(cmd, 'svc domains dns example.com', "svc domains dns dom_… | awk -F'\\t' '$6 == \"yes\"'");
}

export async function domainsDnsRun(ctx: Context, o: { domain: string }): Promise<void> {
  const { id } = await findDomain(ctx, o.domain);
  const r = await (await ctx.client()).call('getDomainDns', { params: { id } });
  if (ctx.json) return printJson(ctx.io, r.raw);
  ctx.io.info(`${ctx.io.err.bold(r.body.domain)}: ${r.body.status}, last checked ${r.body.last_checked_at ?? 'never'}`);
  await printTable(ctx.io, r.body.records, recordStatusColumns);
}
