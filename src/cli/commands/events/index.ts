import { Command } from 'commander';
import { examples, type Runner } from '../../command.js';
import { eventsListCommand } from './list.js';

export function eventsCommand(runner: Runner): Command {
  return examples(
    new Command('events').description("The workspace's events, as webhooks receive them"),
    'svc events list --type email.bounced',
  ).addCommand(eventsListCommand(runner));
}
