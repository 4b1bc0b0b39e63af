import { Command } from 'commander';
import type { DomainPurpose } from '../../../contract/domains.js';
import { examples, list, type Runner } from '../../command.js';
import type { Context } from '../../context.js';
import { UsageError } from '../../errors.js';
import { printJson, printTable } from '../../output.js';
import { DOMAIN_ARGUMENT, findDomain, recordColumns } from './shared.js';

export interface DomainsUpdateOptions {
  /** A name or an id. */
  domain: string;
  purpose?: string[];
  mailFromSubdomain?: string;
  trackingHost?: string;
}

export function domainsUpdateCommand(runner: Runner): Command {
  const cmd = new Command('update')
    .description('Change purpose, MAIL FROM subdomain or tracking host; the records change and must be verified again')
    .argument(...DOMAIN_ARGUMENT)
    .option('--purpose <purpose>', 'sending and/or mailbox, repeatable or comma-separated', list)
    .option('--mail-from-subdomain <label>', 'the subdomain bounces return to (default bounces)')
    .option('--tracking-host <host>', 'the host open and click links point at, inside the domain')
    .action((domain: string, o: Omit<DomainsUpdateOptions, 'domain'>, c: Command) => {
      if (!o.purpose && o.mailFromSubdomain === undefined && o.trackingHost === undefined) {
        throw new UsageError('nothing to change', 'give --purpose, --mail-from-subdomain or --tracking-host');
      }
      return runner(c, domainsUpdateRun, { domain, ...o });
    });
  return examples(
    cmd,
    'svc domains update example.com --tracking-host links.example.com',
    'svc domains update dom_… --mail-from-subdomain mail',
  );
}

export async function domainsUpdateRun(ctx: Context, o: DomainsUpdateOptions): Promise<void> {
  const { id } = await findDomain(ctx, o.domain);
  const r = await (await ctx.client()).call('updateDomain', {
    params: { id },
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
