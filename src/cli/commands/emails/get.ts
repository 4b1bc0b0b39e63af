import { Command } from 'commander';
import { examples, type Runner } from '../../command.js';
import type { Context } from '../../context.js';
import { printFields, printJson, printTable } from '../../output.js';

export function emailsGetCommand(runner: Runner): Command {
  const cmd = new Command('get')
    .description('Show one message with its events timeline')
    .argument('<id>', 'the message id (msg_…)')
    .action((id: string, _o: object, c: Command) => runner(c, emailsGetRun, { id }));
  return examples(cmd, 'svc emails get msg_…', 'svc emails get msg_… --json | jq -r .status');
}

export async function emailsGetRun(ctx: Context, o: { id: string }): Promise<void> {
  const r = await (await ctx.client()).call('getEmail', { params: { id: o.id } });
  if (ctx.json) return printJson(ctx.io, r.raw);
  const m = r.body;
  printFields(ctx.io, [
    ['id', m.id],
    ['status', m.status],
    ['from', m.from],
    ['to', m.to.join(', ')],
    ['cc', m.cc.join(', ')],
    ['bcc', m.bcc.join(', ')],
    ['subject', m.subject],
    ['tags', m.tags.map((t) => `${t.name}=${t.value}`).join(', ')],
    ['scheduled', m.scheduled_at],
    ['created', m.created_at],
  ]);
  if (ctx.io.stdoutIsTTY) {
    ctx.io.print('');
    await printTable(ctx.io, m.events, [
      { header: 'EVENT', value: (e) => e.type },
      { header: 'AT', value: (e) => e.occurred_at, time: true },
      { header: 'DETAIL', value: (e) => (Object.keys(e.detail).length ? JSON.stringify(e.detail) : '') },
    ]);
  } else {
    // Piped, each event is one more `label<TAB>…` line, like the fields above it.
    for (const e of m.events) ctx.io.print(['event', e.occurred_at, e.type, JSON.stringify(e.detail)].join('\t'));
  }
}
