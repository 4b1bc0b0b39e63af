import { Command } from 'commander';
import type { Event } from '../../../contract/events.js';
import { examples, int, list, type PageOptions, type Runner } from '../../command.js';
import type { Context } from '../../context.js';
import { printJson, printMore, printTable, type Column } from '../../output.js';
import { checkEventTypes } from './shared.js';

export interface EventsListOptions extends PageOptions {
  types?: string[];
}

export function eventsListCommand(runner: Runner): Command {
  const cmd = new Command('list')
    .description("List the workspace's events, oldest first (an API key with emails:read, or a session)")
    .option('--type <type>', 'only events of this type; repeat or separate with commas', list)
    .option('--limit <n>', 'how many (1–100)', int('--limit', 1, 100))
    .option('--after <id>', 'the events after this one (evt_…)')
    .action((o: { type?: string[]; limit?: number; after?: string }, c: Command) =>
      runner(c, eventsListRun, { types: o.type, limit: o.limit, after: o.after }),
    );
  return examples(
    cmd,
    'svc events list',
    'svc events list --type email.bounced,email.complained --limit 100',
    'svc events list --after evt_… --json',
  );
}

/** What an event is about: its message or its domain, and the recipient(s). */
const about = (e: Event) =>
  typeof e.data.message_id === 'string' ? e.data.message_id : typeof e.data.name === 'string' ? e.data.name : '';
const recipients = (e: Event) =>
  Array.isArray(e.data.to) ? e.data.to.join(', ') : typeof e.data.to === 'string' ? e.data.to : '';

const columns: Column<Event>[] = [
  { header: 'ID', value: (e) => e.id, id: true },
  { header: 'TYPE', value: (e) => e.type },
  { header: 'CREATED', value: (e) => e.created_at, time: true },
  { header: 'ABOUT', value: about },
  { header: 'TO', value: recipients },
];

export async function eventsListRun(ctx: Context, o: EventsListOptions): Promise<void> {
  const types = await checkEventTypes('--type', o.types);
  const r = await (await ctx.client()).call('listEvents', { query: { type: types, limit: o.limit, after: o.after } });
  if (ctx.json) return printJson(ctx.io, r.raw);
  await printTable(ctx.io, r.body.data, columns);
  printMore(
    ctx.io,
    r.body,
    `svc events list${types ? ` --type ${types.join(',')}` : ''}${o.limit ? ` --limit ${o.limit}` : ''}`,
  );
}
