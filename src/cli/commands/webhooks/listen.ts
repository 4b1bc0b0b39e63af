import { Command, InvalidArgumentError, Option } from 'commander';
import type { ForwardAttempt } from '../../../client/forward.js';
import type { ListenFrom, ListenStatus } from '../../../client/listen.js';
import type { Event } from '../../../contract/events.js';
import { VERSION } from '../../../lib/version.js';
import { examples, humanDuration, list, timestamp, type Runner } from '../../command.js';
import type { Context } from '../../context.js';
import { checkEventTypes } from '../events/shared.js';

export interface WebhooksListenOptions {
  forwardTo?: string;
  events?: string[];
  since?: string;
  after?: string;
  printSecret?: boolean;
}

function httpUrl(v: string): string {
  let url: URL;
  try {
    url = new URL(v);
  } catch {
    throw new InvalidArgumentError('--forward-to takes an http(s) URL, e.g. http://localhost:3000/webhooks.');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new InvalidArgumentError('--forward-to takes an http(s) URL, e.g. http://localhost:3000/webhooks.');
  }
  return v;
}

export function webhooksListenCommand(runner: Runner): Command {
  const cmd = new Command('listen')
    .description(
      "Stream the workspace's events as they happen (from now, unless told), one line each; with --forward-to, POST each to a " +
        'local receiver signed with a secret of this profile. Ctrl-C stops.',
    )
    .option('--forward-to <url>', 'POST each event there, signed with the secret printed at start', httpUrl)
    .option('--events <types>', 'only these event types (comma-separated or repeated)', list)
    .addOption(
      new Option('--since <time>', 'start with the events created at or after this time (ISO 8601)')
        .argParser(timestamp('--since'))
        .conflicts('after'),
    )
    .option('--after <id>', 'start after this event (evt_…)')
    .option('--print-secret', "print this profile's signing secret and exit")
    .action((o: WebhooksListenOptions, c: Command) =>
      runner(c, webhooksListenRun, {
        forwardTo: o.forwardTo,
        events: o.events,
        since: o.since,
        after: o.after,
        printSecret: o.printSecret,
      }),
    );
  return examples(
    cmd,
    'svc webhooks listen --forward-to http://localhost:3000/webhooks',
    'svc webhooks listen --events email.bounced,email.complained --json | jq .data.to',
    "svc webhooks listen --print-secret      # for the receiver's configuration",
  );
}

/** The credential-store name of the profile's forwarding secret. */
const SECRET = 'listen_secret';

/** The profile's `whsec_` secret: made on first use and kept in the credential store, so a receiver keeps it. */
async function profileSecret(ctx: Context): Promise<string> {
  const store = ctx.credentials();
  const name = `${ctx.profile}/${SECRET}`;
  const kept = await store.get(name);
  if (kept) return kept;
  const { newWebhookSecret } = await import('../../../contract/signature.js');
  const secret = newWebhookSecret();
  await store.set(name, secret);
  return secret;
}

export async function webhooksListenRun(ctx: Context, o: WebhooksListenOptions): Promise<void> {
  const { io } = ctx;
  const secret = await profileSecret(ctx);
  if (o.printSecret) {
    io.print(ctx.json ? JSON.stringify({ secret }) : secret);
    return;
  }
  const types = await checkEventTypes('--events', o.events);
  const [{ listenEvents }, { forwardEvent }] = await Promise.all([
    import('../../../client/listen.js'),
    import('../../../client/forward.js'),
  ]);
  const client = await ctx.client();
  const signal = io.interrupt();
  const from: ListenFrom = o.after ? { after: o.after } : o.since ? { since: o.since } : { now: true };

  const onStatus = (s: ListenStatus) => {
    if (s.kind === 'ready') {
      const forwarding = o.forwardTo ? ` Forwarding events to ${o.forwardTo}.` : '';
      io.info(
        `${io.err.green('Ready!')}${forwarding} Your webhook signing secret is ${io.err.bold(secret)} (^C to quit)`,
      );
    } else if (s.kind === 'polling') {
      io.info(
        `${io.err.yellow('note:')} the service does not hold GET /events open (no long poll); listing every ${humanDuration(s.intervalMs)} instead`,
      );
    } else if (s.kind === 'disconnected') {
      io.info(`${io.err.yellow('warning:')} ${s.error.message}; reconnecting, then resuming after the last event seen`);
    } else {
      io.info('Reconnected.');
    }
  };

  for await (const { event, body } of listenEvents(client, { from, types, signal, sleep: ctx.clock.sleep, onStatus })) {
    let forwarded: ForwardAttempt | undefined;
    if (o.forwardTo) {
      const url = o.forwardTo;
      forwarded = await forwardEvent({
        url,
        body,
        eventId: event.id,
        secret,
        signal,
        sleep: ctx.clock.sleep,
        userAgent: `svc-webhooks-listen/${VERSION}`,
        onFailure: (a, retryInMs) =>
          io.info(
            `${io.err.yellow('warning:')} ${event.id}: attempt ${a.attempt} to ${url} failed (${a.error})` +
              (retryInMs === undefined
                ? `; giving up on this event and moving on`
                : `; trying again in ${humanDuration(retryInMs)}`),
          ),
      });
      // Ctrl-C during the forward: the attempt was cut short, not answered.
      if (signal.aborted) break;
    }
    if (ctx.json) {
      // NDJSON: each event exactly as listed; the receiver's answer is status, on stderr.
      io.print(body);
      if (forwarded) io.info(`${event.id} → ${result(forwarded)}`);
    } else {
      io.print(line(ctx, event, forwarded));
    }
  }
}

function result(f: ForwardAttempt): string {
  return `${f.status ?? 'no response'} (${f.durationMs} ms)`;
}

/** One event: its time, type and id, and the receiver's status and latency when forwarding. */
function line(ctx: Context, e: Event, f: ForwardAttempt | undefined): string {
  const { io } = ctx;
  if (!io.stdoutIsTTY) {
    return [e.created_at, e.type, e.id, ...(f ? [f.status ?? '-', f.durationMs] : [])].join('\t');
  }
  const status = f
    ? `  → ${(f.ok ? io.out.green : io.out.red)(String(f.status ?? 'no response'))} ${io.out.dim(`${f.durationMs} ms`)}`
    : '';
  return `${io.out.dim(e.created_at)}  ${e.type.padEnd(18)}  ${e.id}${status}`;
}
