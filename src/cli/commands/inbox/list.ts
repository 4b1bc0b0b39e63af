import { Command } from 'commander';
import type { CaughtMessageSummary, OutboxMessage } from '../../../contract/inbox.js';
import { examples, int, type Runner } from '../../command.js';
import type { Context } from '../../context.js';
import { CommandError, UsageError } from '../../errors.js';
import type { IO } from '../../io.js';
import { oneLine, printJson, printMore, printTable, shortTime, terminalWidths } from '../../output.js';
import { isTo, summaryColumns, workspaceMatches } from './shared.js';

export interface InboxListOptions {
  to?: string;
  /** A workspace's mail only, by id or name. */
  workspace?: string;
  follow?: boolean;
  limit?: number;
  after?: string;
}

export function inboxListCommand(runner: Runner): Command {
  const cmd = new Command('list')
    .description(
      'List caught mail, newest first; --follow then prints each new message as it arrives (what `svc inbox` does)',
    )
    .option('--to <address>', 'only mail to this address (an envelope recipient, To or Cc)')
    .option(
      '--workspace <id|name>',
      "only a workspace's mail: sent with its API keys, or caught from a client that logged in with one",
    )
    .option('--follow', 'keep running and print each new message as it arrives, until Ctrl-C')
    .option('--limit <n>', 'how many (1–100; with --follow, how many recent ones first)', int('--limit', 1, 100))
    .option('--after <id>', 'the page after this message')
    .action((o: InboxListOptions, c: Command) => {
      if (o.follow && o.after)
        throw new UsageError('--after pages back through older mail; it does not go with --follow');
      return runner(c, inboxListRun, {
        to: o.to,
        workspace: o.workspace,
        follow: o.follow,
        limit: o.limit,
        after: o.after,
      });
    });
  return examples(
    cmd,
    'svc inbox',
    'svc inbox --to ada@example.org',
    'svc inbox --workspace Acme --follow',
    'svc inbox --follow',
    'svc inbox --follow --json | jq -r .subject',
  );
}

/** How many messages still on their way the listing names. */
const ON_ITS_WAY = 10;

export async function inboxListRun(ctx: Context, o: InboxListOptions): Promise<void> {
  if (o.follow) return follow(ctx, o);
  const client = await ctx.client();
  const filters = { to: o.to, workspace: o.workspace };
  // The first page also says what was sent and is not caught yet: a message sent a moment ago may still be on its way
  // (docs/command-line.md#behaviour-in-detail). A server without the outbox (an older one) leaves the listing alone.
  const [r, outbox] = await Promise.all([
    client.sandbox('listMessages', { query: { ...filters, limit: o.limit, after: o.after } }),
    o.after
      ? undefined
      : client.sandbox('listOutbox', { query: { ...filters, limit: ON_ITS_WAY } }).then(
          (a) => a.body,
          () => undefined,
        ),
  ]);
  if (ctx.json) printJson(ctx.io, r.raw);
  else {
    await printTable(ctx.io, r.body.data, summaryColumns);
    const again = ['svc inbox', o.to && `--to ${o.to}`, o.workspace && `--workspace ${JSON.stringify(o.workspace)}`];
    printMore(ctx.io, r.body, again.filter(Boolean).join(' '));
  }
  if (outbox?.data.length) printOnItsWay(ctx.io, outbox.data, outbox.has_more);
}

/**
 * The `/v1` messages not caught yet, on stderr (stdout, and --json, stay the caught mail alone): `id<TAB>status<TAB>
 * recipients<TAB>subject`, a scheduled one's time after its status.
 */
function printOnItsWay(io: IO, messages: OutboxMessage[], more: boolean): void {
  io.info(`On its way, not caught yet${more ? ` (the ${messages.length} sent last)` : ''}:`);
  for (const m of messages) {
    const status = m.scheduled_at ? `${m.status} ${m.scheduled_at}` : m.status;
    io.info([m.id, status, [...m.to, ...m.cc].join(', '), m.subject].map(oneLine).join('\t'));
  }
  io.info(
    'Each is listed once the sink catches it (`svc inbox --follow` shows it as it arrives); `svc emails get ID` follows one.',
  );
}

/**
 * `--follow`: the recent mail oldest first, then each message as the server's stream (GET /sandbox/stream, server-sent
 * events) reports it; nothing polls. The stream is opened before the recent mail is read, so no message falls between.
 * Ctrl-C (or SIGTERM) ends it as a success.
 */
async function follow(ctx: Context, o: InboxListOptions): Promise<void> {
  const { io } = ctx;
  const signal = io.interrupt();
  const client = await ctx.client();
  const width = io.stdoutIsTTY && !ctx.json ? await terminalWidths() : undefined;
  const line = (m: CaughtMessageSummary) => {
    if (ctx.json) return io.print(JSON.stringify(m));
    const cells = summaryColumns.map((c) => oneLine(c.value(m)));
    if (!width) return io.print(cells.join('\t'));
    const [id, full, from, to, subject, status] = cells;
    // On a narrow terminal (each message stays one line) the time loses its seconds, then the addresses and the
    // subject give way; the id does not.
    const whole = `${full}  ${id}  ${from} → ${to}  ${subject}  ${status}`;
    const time = io.columns !== undefined && width.of(whole) > io.columns ? shortTime(full!) : full!;
    const room =
      io.columns === undefined ? Infinity : Math.max(io.columns - width.of(`${time}${id}${status}`) - 4 * 2, 2);
    const who = width.cut(`${from} → ${to}`, Math.max(Math.floor(room / 2), room - width.of(subject!)));
    const about = width.cut(subject!, room - width.of(who));
    io.print(`${io.out.dim(time)}  ${id}  ${who}  ${io.out.bold(about)}  ${status}`);
  };
  try {
    const stream = await client.inboxStream({ signal });
    const recent = (
      await client.sandbox('listMessages', { query: { to: o.to, workspace: o.workspace, limit: o.limit } })
    ).body.data;
    for (const m of [...recent].reverse()) line(m);
    if (io.stderrIsTTY) io.info(io.err.dim(`Waiting for mail${o.to ? ` to ${o.to}` : ''}… (Ctrl-C stops)`));
    // Caught between the stream's start and the listing: shown already.
    const shown = new Set(recent.map((m) => m.id));
    for await (const e of stream) {
      if (e.event !== 'message' || shown.has(e.data.id)) continue;
      if (o.to && !(await isTo(client, o.to, e.data))) continue;
      if (!workspaceMatches(e.data, o.workspace)) continue;
      line(e.data);
    }
  } catch (err) {
    if (signal.aborted) return;
    throw err;
  }
  if (signal.aborted) return;
  throw new CommandError(
    'the server ended the inbox stream: it stopped',
    'start it again with `svc serve`, then run this again',
  );
}
