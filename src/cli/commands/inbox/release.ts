import { Command } from 'commander';
import { examples, type Runner } from '../../command.js';
import type { Context } from '../../context.js';
import { printFields, printJson } from '../../output.js';

export interface InboxReleaseOptions {
  id: string;
  to: string[];
}

export function inboxReleaseCommand(runner: Runner): Command {
  const cmd = new Command('release')
    .description(
      'Send a caught message, exactly as caught, to addresses of your choice through the relay of the local server ' +
        '(`svc serve --relay-url`); each must be on its allow-list (`--relay-allow`)',
    )
    .argument('<id>', 'the caught message id (eml_…), or the id `svc emails send` printed (msg_…)')
    .requiredOption('--to <address>', 'a recipient (repeatable)', (v: string, prev: string[] = []) => [...prev, v])
    .action((id: string, o: { to: string[] }, c: Command) => runner(c, inboxReleaseRun, { id, to: o.to }));
  return examples(
    cmd,
    'svc inbox release eml_… --to me@example.com',
    'svc inbox release msg_… --to qa@example.com --to dev@example.com',
  );
}

export async function inboxReleaseRun(ctx: Context, o: InboxReleaseOptions): Promise<void> {
  const client = await ctx.client();
  const r = await client.sandbox('releaseMessage', {
    params: { id: o.id },
    body: { to: o.to.length === 1 ? o.to[0]! : o.to },
  });
  if (ctx.json) return printJson(ctx.io, r.raw);
  printFields(ctx.io, [
    ['released', r.body.id],
    ['to', r.body.to.join(', ')],
    ['envelope', `${r.body.mail_from || '<>'} → ${r.body.to.join(', ')}`],
    ['relay', r.body.relay],
    ['reply', r.body.response],
  ]);
}
