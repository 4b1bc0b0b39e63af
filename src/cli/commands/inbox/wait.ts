import { Command, Option } from 'commander';
import type { Client } from '../../../client/index.js';
import type { CaughtMessageSummary, InboxEvent } from '../../../contract/sandbox.js';
import { duration, examples, humanDuration, timestamp, type Runner } from '../../command.js';
import type { Context } from '../../context.js';
import { CommandError, UsageError } from '../../errors.js';
import type { Spinner } from '../../io.js';
import { printJson } from '../../output.js';
import { firstCode, firstLink } from './extract.js';
import { caughtSince, isTo, printMessage, subjectMatches } from './shared.js';

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
    .option('--since <time>', 'take mail received at or after this service time too (default: only mail arriving from now)', timestamp('--since'))
    .addOption(new Option('--extract <what>', 'print only the first link, or the first 4–10 digit code').choices(['link', 'code']))
    .action((o: InboxWaitOptions, c: Command) => {
      if (o.extract && c.optsWithGlobals().json) throw new UsageError('--extract prints one value; --json prints the whole message: give one of them');
      return runner(c, inboxWaitRun, { to: o.to, subject: o.subject, timeout: o.timeout, since: o.since, extract: o.extract });
    });
  return examples(
    cmd,
    'svc inbox wait --to ada@example.org --extract code',
    'svc inbox wait --to ada@example.org --subject "reset your password" --extract link --timeout 1m',
    `sent=$(svc emails send --json --from hi@example.test --to ada@example.org --text 'Your code is 482913') && svc inbox wait --to ada@example.org --since "$(jq -r .created_at <<<"$sent")" --extract code`,
  );
}

/**
 * Waits for the next caught message to `to` (and `subject`), by the server's stream (GET /sandbox/stream: server-sent
 * events, nothing polls), until `timeout` on the local clock. "Next" is on the service clock, so a manual clock works:
 * mail received at or after its time when the command started (or `since`), except mail already there at that moment
 * (under a manual clock that has not moved, earlier mail has the same time).
 */
export async function inboxWaitRun(ctx: Context, o: InboxWaitOptions): Promise<void> {
  const { io, clock } = ctx;
  const client = await ctx.client();
  const timeout = o.timeout ?? DEFAULT_WAIT_TIMEOUT_MS;
  const deadline = clock.now() + timeout;
  const wanted = `message to ${o.to}${o.subject === undefined ? '' : ` with "${o.subject}" in its subject`}`;
  const matching = async (since: string | undefined) => (await caughtSince(client, o.to, since)).filter((m) => subjectMatches(m, o.subject));

  const since = o.since ?? (await client.sandbox('getClock')).body.now;
  const already = new Set(o.since ? [] : (await matching(since)).map((m) => m.id));
  const stop = new AbortController();
  let spinner: Spinner | undefined;
  let found: CaughtMessageSummary | undefined;
  try {
    // The stream first, then what arrived before it started: a message is in one or the other, or both.
    const stream = await client.inboxStream({ signal: stop.signal });
    found = (await matching(since)).filter((m) => !already.has(m.id)).at(-1);
    if (!found) {
      // From here on nothing is missed. A CI log says once what is awaited; a terminal shows a spinner.
      const waiting = `Waiting up to ${humanDuration(timeout)} for a ${wanted} (received since ${since})…`;
      if (io.stderrIsTTY) spinner = await io.spinner(waiting);
      else io.info(waiting);
      const arrival = nextMatch(client, stream, o);
      const expiry = clock.sleep(Math.max(0, deadline - clock.now()), stop.signal).then(() => undefined);
      // Whichever loses is ended by the abort below; its rejection is expected.
      arrival.catch(() => {});
      expiry.catch(() => {});
      found = await Promise.race([arrival, expiry]);
    }
  } finally {
    stop.abort();
    spinner?.stop();
  }
  if (!found) {
    // The most recent matching mail from before the wait, to tell a script that sent first and waited second.
    const recent = (await client.sandbox('listMessages', { query: { to: o.to, limit: 100 } })).body.data;
    const earlier = recent.find((m) => subjectMatches(m, o.subject) && (Date.parse(m.received_at) < Date.parse(since) || already.has(m.id)));
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

/** The first message of the stream that matches; throws when the stream ends (the server stopped). */
async function nextMatch(client: Client, stream: AsyncIterable<InboxEvent>, o: InboxWaitOptions): Promise<CaughtMessageSummary> {
  for await (const e of stream) {
    if (e.event === 'message' && subjectMatches(e.data, o.subject) && (await isTo(client, o.to, e.data))) return e.data;
  }
  throw new CommandError('the server ended the inbox stream while waiting: it stopped', 'start it again with `svc serve`');
}
