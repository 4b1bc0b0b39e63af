import { Command } from 'commander';
import { examples, type Runner } from '../../command.js';
import type { Context } from '../../context.js';
import { printJson } from '../../output.js';
import { printMessage } from './shared.js';

export interface InboxShowOptions {
  id: string;
  raw?: boolean;
}

export function inboxShowCommand(runner: Runner): Command {
  const cmd = new Command('show')
    .description('Show one caught message: its fields and text, or with --raw its source exactly as received')
    .argument('<id>', 'the caught message id (eml_…), or the id `svc emails send` printed (msg_…)')
    .option('--raw', 'print the message as received, byte for byte (message/rfc822)')
    .action((id: string, o: { raw?: boolean }, c: Command) => runner(c, inboxShowRun, { id, raw: o.raw }));
  return examples(
    cmd,
    'svc inbox show eml_…',
    'svc inbox show msg_…',
    'svc inbox show eml_… --raw > message.eml',
    'svc inbox show eml_… --json | jq -r .html',
  );
}

export async function inboxShowRun(ctx: Context, o: InboxShowOptions): Promise<void> {
  const client = await ctx.client();
  if (o.raw) {
    const r = await client.sandbox('getRawMessage', { params: { id: o.id } });
    // The bytes themselves: a message need not be UTF-8, and nothing is added (not even a final newline).
    ctx.io.stdout.write(r.bytes);
    return;
  }
  const r = await client.sandbox('getMessage', { params: { id: o.id } });
  if (ctx.json) return printJson(ctx.io, r.raw);
  printMessage(ctx.io, r.body);
}
