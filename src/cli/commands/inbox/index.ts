import { Command } from 'commander';
import { examples, type Runner } from '../../command.js';
import { inboxCheckCommand } from './check.js';
import { inboxListCommand } from './list.js';
import { inboxReleaseCommand } from './release.js';
import { inboxShowCommand } from './show.js';
import { inboxWaitCommand } from './wait.js';

export function inboxCommand(runner: Runner): Command {
  return examples(
    new Command('inbox').description(
      'Caught mail of a local server (`svc serve`): list, follow, show, wait for the next message, check one, or ' +
        'release one through a relay',
    ),
    'svc inbox --follow',
    'svc inbox show eml_…',
    'svc inbox wait --to ada@example.org --extract code',
    'svc inbox check eml_… --fail-on warning',
    'svc inbox release eml_… --to me@example.com',
  )
    .addCommand(inboxListCommand(runner), { isDefault: true })
    .addCommand(inboxShowCommand(runner))
    .addCommand(inboxWaitCommand(runner))
    .addCommand(inboxCheckCommand(runner))
    .addCommand(inboxReleaseCommand(runner));
}
