import { Command } from 'commander';
import type { Domain } from '../../../contract/domains.js';
import { examples, int, type PageOptions, type Runner } from '../../command.js';
import type { Context } from '../../context.js';
import { printJson, printMore, printTable, type Column } from '../../output.js';

export function domainsListCommand(runner: Runner): Command {
  const cmd = new Command('list')
    .description('List sending domains, newest first')
    .option('--limit <n>', 'how many (1–100)', int('--limit', 1, 100))
    .option('--after <id>', 'the page after this domain')
    .action((o: PageOptions, c: Command) => runner(c, domainsListRun, { limit: o.limit, after: o.after }));
  return examples(cmd, 'svc domains list', 'svc domains list | cut -f1,3');
}

const columns: Column<Domain>[] = [
  { header: 'ID', value: (d) => d.id, id: true },
  { header: 'NAME', value: (d) => d.name },
  { header: 'STATUS', value: (d) => d.status },
  { header: 'PURPOSE', value: (d) => d.purpose.join(',') },
  { header: 'CREATED', value: (d) => d.created_at, time: true },
  { header: 'VERIFIED', value: (d) => d.verified_at, time: true },
  { header: 'LAST CHECKED', value: (d) => d.last_checked_at, time: true },
];

export async function domainsListRun(ctx: Context, o: PageOptions): Promise<void> {
  const r = await (await ctx.client()).call('listDomains', { query: { limit: o.limit, after: o.after } });
  if (ctx.json) return printJson(ctx.io, r.raw);
  await printTable(ctx.io, r.body.data, columns);
  printMore(ctx.io, r.body, 'svc domains list');
}
