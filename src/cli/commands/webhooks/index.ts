import { Command } from 'commander';
import { examples, type Runner } from '../../command.js';
import { webhooksListenCommand } from './listen.js';
import { webhooksVerifyCommand } from './verify.js';

export function webhooksCommand(runner: Runner): Command {
  return examples(
    new Command('webhooks').description('Receive events on this machine, and check signatures as a receiver must'),
    'svc webhooks listen --forward-to http://localhost:3000/webhooks',
    "svc webhooks verify --secret whsec_… --header 'Service-Signature: t=…,v1=…' < body.json",
  )
    .addCommand(webhooksListenCommand(runner))
    .addCommand(webhooksVerifyCommand(runner));
}
