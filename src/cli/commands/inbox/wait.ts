import { Command, Option } from 'commander';
import { InboxStreamEnded, subjectMatches, waitForCaught } from '../../../client/inbox-wait.js';
import { duration, examples, humanDuration, timestamp, type Runner } from '../../command.js';
import type { Context } from '../../context.js';
import { CommandError, UsageError } from '../../errors.js';
import type { Spinner } from '../../io.js';
import { printJson } from '../../output.js';
import { firstCode, firstLink } from '../../../client/extract.js';
import { printMessage } from './shared.js';

export interface InboxWaitOptions {
  to: string;
  subject?: string;
  /** Milliseconds. */
  timeout?: number;
  /** Take mail received at or after this service time, rather than only mail arriving after the command started. */
  since?: string;
  extract?: 'link' | 'code';
}

export const DEFAULT_WAIT_TIMEOUT_MS = 30_000;

export function inboxWaitCommand(runner: Runner): Command {
  const cmd = new Command('wait')
    .description('Wait for the next message to an address and print it, or only its first link or code (for CI)')
    .requiredOption('--to <address>', 'the recipient (an envelope recipient, To or Cc)')
    .option('--subject <text>', 'only a message whose subject contains this text (any case)')
    .option('--timeout <duration>', 'give up after this long, exit 1 (default 30s)', duration('--timeout'))
    .option(
      '--since <time>',
      'take mail received at or after this service time too (default: only mail arriving from now)',
      timestamp('--since'),
    )
    .addOption(
      new Option('--extract <what>', 'print only the first link, or the first 4–10 digit code').choices([
        'link',
        'code',
      ]),
    )
    .action((o: InboxWaitOptions, c: Command) => {
      if (o.extract && c.optsWithGlobals().json)
        throw new UsageError('--extract prints one value; --json prints the whole message: give one of them');
      return runner(c, inboxWaitRun, {
        to: o.to,
        subject: o.subject,
        timeout: o.timeout,
        since: o.since,
        extract: o.extract,
      });
    });
  return examples(
    cmd,
    'svc inbox wait --to ada@example.org --extract code',
    'svc inbox wait --to ada@example.org --subject "reset your password" --extract link --timeout 1m',
    `sent=$(svc emails send --json --from hi@example.test --to ada@example.org --text 'Your code is 482913') && svc inbox wait --to ada@example.org --since "$(jq -r .created_at <<<"$sent")" --extract code`,
  );
}

/**
 * Waits for the next caught message to `to` (and `subject`) until `timeout` on the local clock (client/inbox-wait.ts:
 * the server's stream, the service clock).
 */
export async function inboxWaitRun(ctx: Context, o: InboxWaitOptions): Promise<void> {
  const { io, clock } = ctx;
  const client = await ctx.client();
  const timeout = o.timeout ?? DEFAULT_WAIT_TIMEOUT_MS;
  const wanted = `message to ${o.to}${o.subject === undefined ? '' : ` with "${o.subject}" in its subject`}`;
  let spinner: Spinner | undefined;
  let waited: Awaited<ReturnType<typeof waitForCaught>>;
  try {
    waited = await waitForCaught(client, {
      to: o.to,
      accept: (m) => subjectMatches(m, o.subject),
      since: o.since,
      timeoutMs: timeout,
      clock,
      // A CI log says once what is awaited; a terminal shows a spinner.
      onWaiting: async (since) => {
        const waiting = `Waiting up to ${humanDuration(timeout)} for a ${wanted} (received since ${since})…`;
        if (io.stderrIsTTY) spinner = await io.spinner(waiting);
        else io.info(waiting);
      },
    });
  } catch (err) {
    if (err instanceof InboxStreamEnded) throw new CommandError(err.message, 'start it again with `svc serve`');
    throw err;
  } finally {
    spinner?.stop();
  }
  const { found, since, already } = waited;
  if (!found) {
    // The most recent matching mail from before the wait, to tell a script that sent first and waited second.
    const recent = (await client.sandbox('listMessages', { query: { to: o.to, limit: 100 } })).body.data;
    const earlier = recent.find(
      (m) => subjectMatches(m, o.subject) && (Date.parse(m.received_at) < Date.parse(since) || already.has(m.id)),
    );
    throw new CommandError(
      `no ${wanted} arrived within ${humanDuration(timeout)} (since ${since})`,
      earlier
        ? `the latest one, ${earlier.id}, came at ${earlier.received_at}, before the wait began: take it with --since ` +
            `(the created_at of \`svc emails send --json\`, for one), or see it with \`svc inbox show ${earlier.id}\``
        : 'check the address, or wait longer with --timeout',
      false,
    );
  }

  const r = await client.sandbox('getMessage', { params: { id: found.id } });
  if (ctx.json) return printJson(io, r.raw);
  if (!o.extract) return printMessage(io, r.body);
  const value = o.extract === 'link' ? firstLink(r.body.text, r.body.html) : firstCode(r.body.text, r.body.html);
  if (value === null) {
    throw new CommandError(
      `${found.id} arrived, but it has no ${o.extract === 'link' ? 'http(s) link' : '4–10 digit code'}`,
      `see what it says with \`svc inbox show ${found.id}\``,
    );
  }
  io.print(value);
}
