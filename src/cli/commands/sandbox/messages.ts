import { Command } from 'commander';
import { examples, type Runner } from '../../command.js';
import type { Context } from '../../context.js';

export function sandboxMessagesCommand(runner: Runner): Command {
  const clear = new Command('clear')
    .description('Delete every caught message')
    .action((_o: object, c: Command) => runner(c, sandboxMessagesClearRun, {}));
  return examples(
    new Command('messages').description("The SMTP sink's caught mail (read it with `svc inbox`)"),
    'svc sandbox messages clear',
  ).addCommand(examples(clear, 'svc sandbox messages clear'));
}

export async function sandboxMessagesClearRun(ctx: Context, _o: object): Promise<void> {
  await (await ctx.client()).sandbox('deleteMessages');
  ctx.io.info('Deleted every caught message.');
}
