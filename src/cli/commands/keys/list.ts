import { Command } from 'commander';
import type { ApiKey } from '../../../contract/keys.js';
import { examples, int, type PageOptions, type Runner } from '../../command.js';
import type { Context } from '../../context.js';
import { printJson, printMore, printTable, type Column } from '../../output.js';

export function keysListCommand(runner: Runner): Command {
  const cmd = new Command('list')
    .description('List API keys, newest first (revoked ones too)')
    .option('--limit <n>', 'how many (1–100)', int('--limit', 1, 100))
    .option('--after <id>', 'the page after this key')
    .action((o: PageOptions, c: Command) => runner(c, keysListRun, { limit: o.limit, after: o.after }));
  return examples(cmd, 'svc keys list', "svc keys list --json | jq -r '.data[] | select(.revoked | not) | .id'");
}

const columns: Column<ApiKey>[] = [
  { header: 'ID', value: (k) => k.id, id: true },
  { header: 'NAME', value: (k) => k.name },
  { header: 'KEY', value: (k) => k.reveal },
  { header: 'MODE', value: (k) => k.mode },
  { header: 'SCOPES', value: (k) => k.scopes.join(',') },
  {
    header: 'STATE',
    value: (k) =>
      k.revoked ? 'revoked' : k.expires_at && Date.parse(k.expires_at) <= Date.now() ? 'expired' : 'active',
  },
  { header: 'CREATED', value: (k) => k.created_at, time: true },
  { header: 'LAST USED', value: (k) => k.last_used_at, time: true },
];

export async function keysListRun(ctx: Context, o: PageOptions): Promise<void> {
  const r = await (await ctx.client()).call('listApiKeys', { query: { limit: o.limit, after: o.after } });
  if (ctx.json) return printJson(ctx.io, r.raw);
  await printTable(ctx.io, r.body.data, columns);
  printMore(ctx.io, r.body, 'svc keys list');
}
