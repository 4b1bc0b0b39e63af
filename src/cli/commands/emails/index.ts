import { Command } from 'commander';
import { examples, type Runner } from '../../command.js';
import { emailsBatchCommand } from './batch.js';
import { emailsCancelCommand } from './cancel.js';
import { emailsGetCommand } from './get.js';
import { emailsSendCommand } from './send.js';

export function emailsCommand(runner: Runner): Command {
  return examples(
    new Command('emails').description('Send email and follow it (with an API key)'),
    'svc emails send --from orders@example.com --to ada@example.org --text hi',
  )
    .addCommand(emailsSendCommand(runner))
    .addCommand(emailsBatchCommand(runner))
    .addCommand(emailsGetCommand(runner))
    .addCommand(emailsCancelCommand(runner));
}
