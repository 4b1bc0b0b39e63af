import { Command, InvalidArgumentError, Option } from 'commander';
import { describeWanted, ServerStopped, latestMissed, waitForMessage } from '../../../client/inbox-wait.js';
import { duration, examples, humanDuration, timestamp, type Runner } from '../../command.js';
import type { Context } from '../../context.js';
import { CommandError, UsageError } from '../../errors.js';
import type { Spinner } from '../../io.js';
import { oneLine, printJson } from '../../output.js';
import { chooseLink, findCodes, findLinks, missingCode, missingLink } from '../../../lib/extract.js';
import { printMessage } from './shared.js';

export interface InboxWaitOptions {
  to: string;
  subject?: string;
  /** Only a workspace's mail, by its id or name. */
  workspace?: string;
  /** Milliseconds. */
  timeout?: number;
  /** Only mail received at or after this service time, rather than within the look-back window. */
  since?: string;
  extract?: 'link' | 'code';
  /** With `extract: 'link'`: the link whose text contains this (any case), rather than the action. */
  linkText?: string;
  /** With `extract: 'link'`: the link whose real target contains this (any case), rather than the action. */
  linkMatch?: string;
  /** With `extract: 'code'`: what the code looks like (a regular expression). */
  codePattern?: RegExp;
}

export const DEFAULT_WAIT_TIMEOUT_MS = 30_000;
/** A message without the link asked for: the links it has, this many named. */
const SHOWN_LINKS = 6;
/** Without --since, a wait takes mail received up to this long (service time) before it began. */
export const LOOK_BACK_MS = 60_000;

export function inboxWaitCommand(runner: Runner): Command {
  const cmd = new Command('wait')
    .description(
      'Wait for the next message to an address and print it, or only the link or code a person would use (for ' +
        'CI): the oldest caught in the last minute (or since --since) that no earlier wait returned, else the next to ' +
        'arrive',
    )
    .requiredOption('--to <address>', 'the recipient (an envelope recipient, To or Cc)')
    .option('--subject <text>', 'only a message whose subject contains this text (any case)')
    .option(
      '--workspace <id|name>',
      "only a workspace's mail: sent with its API keys, or caught from a client that logged in with one",
    )
    .option('--timeout <duration>', 'give up after this long, exit 1 (default 30s)', duration('--timeout'))
    .option(
      '--since <time>',
      'only mail received at or after this service time (default: one minute before the wait)',
      timestamp('--since'),
    )
    .addOption(
      new Option(
        '--extract <what>',
        "print only the real target of the mail's action link, or the one-time code a person would type",
      ).choices(['link', 'code']),
    )
    .addOption(
      new Option('--link-text <text>', 'print the link whose text contains this (any case)').implies({
        extract: 'link',
      }),
    )
    .addOption(
      new Option('--link-match <text>', 'print the link whose real target contains this (any case)').implies({
        extract: 'link',
      }),
    )
    .addOption(
      new Option(
        '--code-pattern <regex>',
        'print the code this regular expression matches whole (its first group if it has one)',
      )
        .argParser(codePattern)
        .implies({ extract: 'code' }),
    )
    .action((o: InboxWaitOptions, c: Command) => {
      if (o.extract && c.optsWithGlobals().json)
        throw new UsageError(
          '--extract (and --link-text, --link-match, --code-pattern) prints one value; --json prints the whole message: give one of them',
        );
      if (o.extract === 'code' && (o.linkText !== undefined || o.linkMatch !== undefined))
        throw new UsageError('--link-text and --link-match choose a link: they go with --extract link, not code');
      if (o.extract === 'link' && o.codePattern)
        throw new UsageError('--code-pattern chooses a code: it goes with --extract code, not link');
      return runner(c, inboxWaitRun, {
        to: o.to,
        subject: o.subject,
        workspace: o.workspace,
        timeout: o.timeout,
        since: o.since,
        extract: o.extract,
        linkText: o.linkText,
        linkMatch: o.linkMatch,
        codePattern: o.codePattern,
      });
    });
  return examples(
    cmd,
    'svc inbox wait --to ada@example.org --extract code',
    'svc inbox wait --to ada@example.org --subject "reset your password" --extract link --timeout 1m',
    'svc inbox wait --to ada@example.org --workspace Acme --extract code',
    'svc inbox wait --to ada@example.org --link-text "accept invitation"',
    "svc inbox wait --to ada@example.org --code-pattern '[A-Z]{3}-\\d{3}'",
    "svc emails send --from hi@example.test --to ada@example.org --text 'Your code is 482913' && svc inbox wait --to ada@example.org --extract code",
  );
}

/**
 * Waits for the next caught message to `to` (and `subject`) until `timeout` on the local clock (client/inbox-wait.ts:
 * the oldest received since `since` — by default within the look-back window — that no earlier wait returned, else
 * the next to arrive).
 */
export async function inboxWaitRun(ctx: Context, o: InboxWaitOptions): Promise<void> {
  const { io, clock } = ctx;
  const client = await ctx.client();
  const timeout = o.timeout ?? DEFAULT_WAIT_TIMEOUT_MS;
  const filters = { to: o.to, workspace: o.workspace, subject: o.subject };
  const wanted = describeWanted(filters);
  const since =
    o.since ?? new Date(Date.parse((await client.sandbox('getClock')).body.now) - LOOK_BACK_MS).toISOString();
  let spinner: Spinner | undefined;
  let found: Awaited<ReturnType<typeof waitForMessage>>;
  try {
    found = await waitForMessage(client, {
      ...filters,
      since,
      timeoutMs: timeout,
      clock,
      // A CI log says once what is awaited; a terminal shows a spinner.
      onWaiting: async () => {
        const waiting = `Waiting up to ${humanDuration(timeout)} for a ${wanted} (received since ${since})…`;
        if (io.stderrIsTTY) spinner = await io.spinner(waiting);
        else io.info(waiting);
      },
    });
  } catch (err) {
    if (err instanceof ServerStopped) throw new CommandError(err.message, 'start it again with `svc serve`');
    throw err;
  } finally {
    spinner?.stop();
  }
  if (!found) {
    // The most recent matching mail the wait did not take, and why, for a script that sent to the right address.
    const missed = await latestMissed(client, filters, since);
    const latest = missed && `the latest one, ${missed.message.id}, came at ${missed.message.received_at}`;
    throw new CommandError(
      `no ${wanted} arrived within ${humanDuration(timeout)} (since ${since})`,
      missed?.why === 'claimed'
        ? `${latest}, and an earlier wait returned it: see it with \`svc inbox show ${missed.message.id}\``
        : missed
          ? `${latest}, before ${o.since ? '--since' : 'the minute before the wait'}: ` +
            `take it with an earlier --since, or see it with \`svc inbox show ${missed.message.id}\``
          : `check the address${o.workspace === undefined ? '' : ' and the workspace'}, or wait longer with --timeout`,
      false,
    );
  }

  // The claim that took it answered with it in full, as `svc inbox show` reads it.
  const message = found;
  if (ctx.json) {
    // The message as the API gives it, with what a script came for, found as --extract finds it (and as MCP's
    // wait_for_message gives it): its codes (the likeliest first) and links, and the code and the action link.
    const links = findLinks(message);
    const codes = findCodes(message);
    const link = chooseLink(links, message.subject)?.url ?? null;
    return printJson(io, { ...message, codes, code: codes[0] ?? null, links, link });
  }
  if (!o.extract) return printMessage(io, message);
  if (o.extract === 'code') {
    const code = findCodes(message, o.codePattern)[0];
    if (code === undefined)
      throw new CommandError(
        `${found.id} arrived, but it has ${missingCode(o.codePattern)}`,
        `see what it says with \`svc inbox show ${found.id}\`${o.codePattern ? '' : ', and say what its code looks like with --code-pattern'}`,
      );
    return io.print(oneLine(code));
  }
  const links = findLinks(message);
  const choice = { text: o.linkText, match: o.linkMatch };
  const link = chooseLink(links, message.subject, choice);
  if (!link) {
    throw new CommandError(
      `${found.id} arrived, but it has ${missingLink(links, choice)}`,
      links.length
        ? `its links: ${links
            .slice(0, SHOWN_LINKS)
            .map((l) => oneLine(`${l.text ? `"${l.text}" ` : ''}${l.url}`))
            .join(', ')}${links.length > SHOWN_LINKS ? `, … (${links.length} in all)` : ''}; ` +
            'choose one with --link-text or --link-match'
        : `see what it says with \`svc inbox show ${found.id}\``,
    );
  }
  // What a sender wrote reaches the terminal with its control characters shown, not acted on.
  io.print(oneLine(link.url));
}

/** `--code-pattern`: a regular expression, or a usage error saying why it is not one. */
function codePattern(source: string): RegExp {
  try {
    return new RegExp(source);
  } catch (err) {
    throw new InvalidArgumentError(`--code-pattern takes a regular expression (${(err as Error).message}).`);
  }
}
