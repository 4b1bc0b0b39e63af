import { Command } from 'commander';
import { duration, examples, timestamp, type Runner } from '../../command.js';
import type { Context } from '../../context.js';
import { printFields, printJson } from '../../output.js';

/** `advance`: milliseconds; `to`: a time. Neither: read the clock. */
export interface SandboxClockOptions {
  advance?: number;
  to?: string;
}

export function sandboxClockCommand(runner: Runner): Command {
  const advance = new Command('advance')
    .description('Move a manual clock forward, then run every job that became due (scheduled sends, retries, checks)')
    .argument('<duration>', 'seconds, or 30s, 10m, 1h, 2d', duration('DURATION'))
    .action((ms: number, _o: object, c: Command) => runner(c, sandboxClockRun, { advance: ms }));
  const set = new Command('set')
    .description('Set a manual clock to a time, then run every job that became due')
    .argument('<time>', 'an ISO 8601 time, e.g. 2026-09-01T09:00:00Z', timestamp('TIME'))
    .action((to: string, _o: object, c: Command) => runner(c, sandboxClockRun, { to }));
  const clock = new Command('clock')
    .description('Show the service clock; move it when `svc serve` runs with --clock manual')
    .action((_o: object, c: Command) => runner(c, sandboxClockRun, {}))
    .addCommand(examples(advance, 'svc sandbox clock advance 30s', 'svc sandbox clock advance 2d'))
    .addCommand(examples(set, 'svc sandbox clock set 2026-09-01T09:00:00Z'));
  return examples(clock, 'svc sandbox clock', 'svc sandbox clock advance 10m');
}

export async function sandboxClockRun(ctx: Context, o: SandboxClockOptions): Promise<void> {
  const client = await ctx.client();
  if (o.advance === undefined && o.to === undefined) {
    const r = await client.sandbox('getClock');
    if (ctx.json) return printJson(ctx.io, r.raw);
    printFields(ctx.io, [
      ['now', r.body.now],
      ['mode', r.body.mode],
    ]);
    return;
  }
  const body = o.to !== undefined ? { to: o.to } : { advance_seconds: o.advance! / 1000 };
  const r = await client.sandbox('moveClock', { body });
  if (ctx.json) return printJson(ctx.io, r.raw);
  ctx.io.print(r.body.now);
  ctx.io.info(`The clock reads ${r.body.now}; ${r.body.ran} job${r.body.ran === 1 ? '' : 's'} that became due ran.`);
}
