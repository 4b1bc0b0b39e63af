import { Command } from 'commander';
import type { DomainPurpose } from '../../../contract/domains.js';
import { examples, list, type Runner } from '../../command.js';
import type { Context } from '../../context.js';
import { printJson, printTable } from '../../output.js';
import { recordColumns } from './shared.js';

export interface DomainsAddOptions {
  name: string;
  purpose?: string[];
}

export function domainsAddCommand(runner: Runner): Command {
  const cmd = new Command('add')
    .description('Add a sending domain and print the DNS records to publish')
    .argument('<name>', 'the domain, e.g. example.com or mail.example.com')
    .option('--purpose <purpose>', 'sending (the default) and/or mailbox, repeatable or comma-separated', list)
    .action((name: string, o: { purpose?: string[] }, c: Command) =>
      runner(c, domainsAddRun, { name, purpose: o.purpose }),
    );
  return examples(cmd, 'svc domains add example.com', 'svc domains add example.com --json | jq .records');
}

export async function domainsAddRun(ctx: Context, o: DomainsAddOptions): Promise<void> {
  const r = await (await ctx.client()).call('createDomain', {
    // The service checks the purposes against the contract (422 naming a wrong one).
    body: { name: o.name, purpose: o.purpose as DomainPurpose[] | undefined },
  });
  if (ctx.json) return printJson(ctx.io, r.raw);
  const d = r.body;
  if (ctx.quiet) return ctx.io.print(d.id);
  const sandbox = r.headers.sandbox;
  ctx.io.info(
    `Added ${ctx.io.err.bold(d.name)} (${d.id}), status ${d.status}. ${sandbox ? 'Its records:' : 'Publish these records at your DNS host:'}`,
  );
  await printTable(ctx.io, d.records, recordColumns);
  if (sandbox) {
    ctx.io.info(
      `On this local sandbox its DNS is a zone of its own. Then: svc sandbox dns publish ${d.id} && svc domains verify ${d.id}`,
    );
    ctx.io.info(`(or both at once: svc domains verify ${d.id} --publish)`);
  } else {
    ctx.io.info(`Then: svc domains verify ${d.id} --wait`);
  }
}
