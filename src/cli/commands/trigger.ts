import { Command } from 'commander';
import { duration, examples, type Runner } from '../command.js';
import type { Context } from '../context.js';
import { CommandError, UsageError } from '../errors.js';
import { printFields, printJson } from '../output.js';

export interface TriggerOptions {
  type: string;
  domain?: string;
  /** false: do not wait for the event. */
  wait: boolean;
  /** Milliseconds. */
  timeout?: number;
}

export function triggerCommand(runner: Runner): Command {
  const cmd = new Command('trigger')
    .description(
      'Make a local `svc serve` produce an event through its real pipeline (a message to a simulator recipient, a tracked link followed, a domain verified or degraded); prints what it created and the event',
    )
    .argument('<type>', 'the event type, e.g. email.bounced (`svc trigger --help` lists them)')
    .option(
      '--domain <name|id>',
      'send from this domain, or verify/degrade it (default: the verified domain added first, the seeded one on a seeded server; a new one for domain.*)',
    )
    .option('--no-wait', 'do not wait for the event: print what was created and exit')
    .option(
      '--timeout <duration>',
      'give up waiting for the event after this long, exit 1 (default 30s)',
      duration('--timeout'),
    )
    .addHelpText(
      'after',
      '\nEvent types: email.queued, email.sent, email.delivered, email.deferred, email.bounced, email.complained,\n' +
        'email.failed, email.opened, email.clicked, domain.verified, domain.degraded.',
    )
    .action((type: string, o: { domain?: string; wait: boolean; timeout?: number }, c: Command) =>
      runner(c, triggerRun, { type, domain: o.domain, wait: o.wait, timeout: o.timeout }),
    );
  return examples(
    cmd,
    'svc trigger email.bounced',
    'svc trigger email.clicked --domain example.test',
    'svc trigger domain.degraded --json',
  );
}

export async function triggerRun(ctx: Context, o: TriggerOptions): Promise<void> {
  const { io } = ctx;
  const { TRIGGER_TYPES, TriggerError, isTriggerType, triggerEvent } = await import('../../client/trigger.js');
  if (!isTriggerType(o.type)) {
    throw new UsageError(
      `svc trigger cannot produce ${JSON.stringify(o.type)}`,
      `give one of ${TRIGGER_TYPES.join(', ')}`,
    );
  }
  const client = await ctx.client();
  try {
    const result = await triggerEvent(client, o.type, {
      domain: o.domain,
      wait: o.wait,
      timeoutMs: o.timeout,
      sleep: ctx.clock.sleep,
      onCreated: (c) =>
        io.info(
          c.kind === 'email' ? `Sent ${c.id} from ${c.from} to ${c.to}.` : `Added the domain ${c.name} (${c.id}).`,
        ),
    });
    if (ctx.json) return printJson(io, result);
    printFields(io, [
      ...result.created.map((c) => [c.kind, c.id] as const),
      ...(result.event ? ([['event', `${result.event.id} ${result.event.type}`]] as const) : []),
    ]);
    if (!result.event)
      io.info(`Not waiting for ${o.type}: \`svc events list --type ${o.type}\` shows it once it happens.`);
  } catch (err) {
    if (err instanceof TriggerError) throw new CommandError(err.message, err.hint);
    throw err;
  }
}
