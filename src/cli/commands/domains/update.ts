import { Command } from 'commander';
import type { DomainPurpose } from '../../../contract/domains.js';
import { examples, list, type Runner } from '../../command.js';
import type { Context } from '../../context.js';
import { UsageError } from '../../errors.js';
import { printJson, printTable } from '../../output.js';
import { recordColumns } from './shared.js';

export interface DomainsUpdateOptions {
  id: string;
  purpose?: string[];
  mailFromSubdomain?: string;
  trackingHost?: string;
}

export function domainsUpdateCommand(runner: Runner): Command {
  const cmd = new Command('update')
    .description('Change purpose, MAIL FROM subdomain or tracking host; the records change and must be verified again')
    .argument('<id>', 'the domain id (dom_…)')
    .option('--purpose <purpose>', 'sending and/or mailbox, repeatable or comma-separated', list)
    .option('--mail-from-subdomain <label>', 'the subdomain bounces return to (default bounces)')
    .option('--tracking-host <host>', 'the host open and click links point at, inside the domain')
    .action((id: string, o: Omit<DomainsUpdateOptions, 'id'>, c: Command) => {
      if (!o.purpose && o.mailFromSubdomain === undefined && o.trackingHost === undefined) {
        throw new UsageError('nothing to change', 'give --purpose, --mail-from-subdomain or --tracking-host');
      }
      return runner(c, domainsUpdateRun, { id, ...o });
    });
  return examples(
    cmd,
    'svc domains update dom_… --tracking-host links.example.com',
    'svc domains update dom_… --mail-from-subdomain mail',
  );
}

export async function domainsUpdateRun(ctx: Context, o: DomainsUpdateOptions): Promise<void> {
  const r = await (await ctx.client()).call('updateDomain', {
    params: { id: o.id },
    body: {
      purpose: o.purpose as DomainPurpose[] | undefined,
      mail_from_subdomain: o.mailFromSubdomain,
      tracking_host: o.trackingHost,
    },
  });
  if (ctx.json) return printJson(ctx.io, r.raw);
  ctx.io.info(
    `Updated ${r.body.name}: its records changed (status ${r.body.status}). Publish them, then: svc domains verify ${r.body.id} --wait`,
  );
  await printTable(ctx.io, r.body.records, recordColumns);
}
