import { Command } from 'commander';
import { examples, type Runner } from '../../command.js';
import { sandboxChaosCommand } from './chaos.js';
import { sandboxClockCommand } from './clock.js';
import { sandboxDnsCommand } from './dns.js';
import { sandboxInvitesCommand } from './invites.js';
import { sandboxMessagesCommand } from './messages.js';
import { sandboxWebhooksCommand } from './webhooks.js';
import { sandboxWorkspacesCommand } from './workspaces.js';

export function sandboxCommand(runner: Runner): Command {
  return examples(
    new Command('sandbox').description(
      'Drive a local `svc serve`: invites, workspaces, the clock, DNS, webhook endpoints, caught mail, chaos (admin token)',
    ),
    'svc sandbox clock advance 1h',
    'svc sandbox dns publish dom_…',
  )
    .addCommand(sandboxInvitesCommand(runner))
    .addCommand(sandboxWorkspacesCommand(runner))
    .addCommand(sandboxClockCommand(runner))
    .addCommand(sandboxDnsCommand(runner))
    .addCommand(sandboxWebhooksCommand(runner))
    .addCommand(sandboxMessagesCommand(runner))
    .addCommand(sandboxChaosCommand(runner));
}
