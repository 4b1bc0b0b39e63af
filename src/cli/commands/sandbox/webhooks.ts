import { Command } from 'commander';
import type { EventType } from '../../../contract/events.js';
import type { WebhookAttempt, WebhookEndpoint } from '../../../contract/webhook-endpoints.js';
import { examples, list, type Runner } from '../../command.js';
import type { Context } from '../../context.js';
import { printJson, printTable, type Column } from '../../output.js';
import { checkEventTypes } from '../events/shared.js';

export interface SandboxWebhooksAddOptions {
  workspace: string;
  url: string;
  events?: string[];
}

export interface SandboxWebhookOptions {
  id: string;
}

export function sandboxWebhooksCommand(runner: Runner): Command {
  const add = new Command('add')
    .description('Add a webhook endpoint to a workspace (at most 5); prints its signing secret')
    .requiredOption('--workspace <id>', 'the workspace (ws_…)')
    .requiredOption('--url <url>', 'where events are POSTed')
    .option('--events <types>', 'only these event types (comma-separated or repeated); default every type', list)
    .action((o: SandboxWebhooksAddOptions, c: Command) =>
      runner(c, sandboxWebhooksAddRun, { workspace: o.workspace, url: o.url, events: o.events }),
    );
  const ls = new Command('list')
    .description('List webhook endpoints with their status and recent delivery attempts')
    .option('--workspace <id>', "only this workspace's (ws_…)")
    .action((o: { workspace?: string }, c: Command) => runner(c, sandboxWebhooksListRun, { workspace: o.workspace }));
  const one = (name: string, description: string, work: (ctx: Context, o: SandboxWebhookOptions) => Promise<void>) =>
    examples(
      new Command(name)
        .description(description)
        .argument('<id>', 'the endpoint id (whk_…)')
        .action((id: string, _o: object, c: Command) => runner(c, work, { id })),
      `svc sandbox webhooks ${name} whk_…`,
    );
  return examples(
    new Command('webhooks').description('Webhook endpoints (`/v1/webhooks` is not served: managed here)'),
    'svc sandbox webhooks list',
  )
    .addCommand(
      examples(
        add,
        'svc sandbox webhooks add --workspace ws_… --url http://localhost:3000/webhooks',
        'svc sandbox webhooks add --workspace ws_… --url https://hooks.example.com/svc --events email.bounced,email.complained',
      ),
    )
    .addCommand(examples(ls, 'svc sandbox webhooks list', 'svc sandbox webhooks list --workspace ws_… --json'))
    .addCommand(one('remove', 'Delete an endpoint', sandboxWebhooksRemoveRun))
    .addCommand(
      one(
        'rotate-secret',
        'Give an endpoint a new secret and print it; for 24 h deliveries are signed with both',
        sandboxWebhooksRotateSecretRun,
      ),
    )
    .addCommand(
      one(
        'enable',
        'Make an endpoint disabled by failures active again (missed events are not replayed)',
        sandboxWebhooksEnableRun,
      ),
    );
}

export async function sandboxWebhooksAddRun(ctx: Context, o: SandboxWebhooksAddOptions): Promise<void> {
  const events = await checkEventTypes('--events', o.events);
  const r = await (await ctx.client()).sandbox('createWebhook', {
    body: { workspace_id: o.workspace, url: o.url, events: events as EventType[] | undefined },
  });
  if (ctx.json) return printJson(ctx.io, r.raw);
  const e = r.body;
  // -q: the id, which `remove`, `rotate-secret` and `enable` take; the secret is in every listing.
  if (ctx.quiet) return ctx.io.print(e.id);
  ctx.io.print(e.secret);
  ctx.io.info(
    `Created ${e.id}: ${e.events ? e.events.join(', ') : 'every event'} to ${e.url}, signed with the secret above.`,
  );
}

const endpointColumns: Column<WebhookEndpoint>[] = [
  { header: 'ID', value: (e) => e.id, id: true },
  { header: 'WORKSPACE', value: (e) => e.workspace_id },
  { header: 'URL', value: (e) => e.url },
  { header: 'EVENTS', value: (e) => (e.events ? e.events.join(',') : 'all') },
  { header: 'STATUS', value: (e) => e.status },
];

const attemptColumns: Column<WebhookAttempt>[] = [
  { header: 'ENDPOINT', value: (a) => a.endpoint_id, id: true },
  { header: 'AT', value: (a) => a.at, time: true },
  { header: 'EVENT', value: (a) => a.event_id, id: true },
  { header: 'TYPE', value: (a) => a.event_type },
  { header: 'ATTEMPT', value: (a) => a.attempt },
  { header: 'STATUS', value: (a) => a.status_code },
  { header: 'MS', value: (a) => a.duration_ms },
  { header: 'ERROR', value: (a) => a.error },
];

export async function sandboxWebhooksListRun(ctx: Context, o: { workspace?: string }): Promise<void> {
  const r = await (await ctx.client()).sandbox('listWebhooks', { query: { workspace_id: o.workspace } });
  if (ctx.json) return printJson(ctx.io, r.raw);
  const { io } = ctx;
  const endpoints = r.body.data;
  const attempts = endpoints.flatMap((e) => e.recent_attempts);
  if (io.stdoutIsTTY) {
    if (endpoints.length === 0)
      return io.info('No webhook endpoints yet: svc sandbox webhooks add --workspace ws_… --url URL');
    await printTable(io, endpoints, endpointColumns);
    if (attempts.length) {
      io.print('');
      io.print(io.out.bold('Recent attempts, newest first'));
      await printTable(io, attempts, attemptColumns);
    }
    return;
  }
  // Piped: two kinds of line, each named by its first field, as `emails get` does for its events.
  const tagged = <T>(kind: string, columns: Column<T>[]): Column<T>[] => [
    { header: 'KIND', value: () => kind },
    ...columns,
  ];
  await printTable(io, endpoints, tagged('endpoint', endpointColumns));
  await printTable(io, attempts, tagged('attempt', attemptColumns));
}

export async function sandboxWebhooksRemoveRun(ctx: Context, o: SandboxWebhookOptions): Promise<void> {
  await (await ctx.client()).sandbox('deleteWebhook', { params: { id: o.id } });
  ctx.io.info(`Removed ${o.id}.`);
}

export async function sandboxWebhooksRotateSecretRun(ctx: Context, o: SandboxWebhookOptions): Promise<void> {
  const r = await (await ctx.client()).sandbox('rotateWebhookSecret', { params: { id: o.id } });
  if (ctx.json) return printJson(ctx.io, r.raw);
  ctx.io.print(r.body.secret);
  const until = r.body.previous_secret_expires_at;
  ctx.io.info(
    `New secret for ${o.id}${until ? `; until ${until} (service clock) deliveries are also signed with the previous one` : ''}.`,
  );
}

export async function sandboxWebhooksEnableRun(ctx: Context, o: SandboxWebhookOptions): Promise<void> {
  const r = await (await ctx.client()).sandbox('enableWebhook', { params: { id: o.id } });
  if (ctx.json) return printJson(ctx.io, r.raw);
  ctx.io.print(ctx.io.stdoutIsTTY ? `${r.body.id}  ${r.body.status}` : `${r.body.id}\t${r.body.status}`);
}
