import { Command } from 'commander';
import { examples, type Runner } from '../../command.js';
import { revokeAllCommand } from './revoke-all.js';

export function sessionsCommand(runner: Runner): Command {
  return examples(
    new Command('sessions').description("Your account's sign-in sessions"),
    'svc sessions revoke-all',
  ).addCommand(revokeAllCommand(runner));
}
