import { Command } from 'commander';
import { examples, type Runner } from '../../command.js';
import type { Context } from '../../context.js';
import { printJson } from '../../output.js';

export function emailsCancelCommand(runner: Runner): Command {
  const cmd = new Command('cancel')
    .description('Cancel a queued or scheduled message (refused once it was handed over)')
    .argument('<id>', 'the message id (msg_…)')
    .action((id: string, _o: object, c: Command) => runner(c, emailsCancelRun, { id }));
  return examples(cmd, 'svc emails cancel msg_…');
}

export async function emailsCancelRun(ctx: Context, o: { id: string }): Promise<void> {
  const r = await (await ctx.client()).call('cancelEmail', { params: { id: o.id } });
  if (ctx.json) return printJson(ctx.io, r.raw);
  ctx.io.print(ctx.io.stdoutIsTTY ? `${r.body.id}  ${r.body.status}` : `${r.body.id}\t${r.body.status}`);
}
