import { Command } from 'commander';
import { examples, type Runner } from '../../command.js';
import { keysCreateCommand } from './create.js';
import { keysGenerateCommand } from './generate.js';
import { keysListCommand } from './list.js';
import { keysRevokeCommand } from './revoke.js';

export function keysCommand(runner: Runner): Command {
  return examples(
    new Command('keys').description('API keys for sending from code (signed in)'),
    'svc keys create --name ci --scope emails:send --save',
    'svc keys list',
  )
    .addCommand(keysCreateCommand(runner))
    .addCommand(keysGenerateCommand(runner))
    .addCommand(keysListCommand(runner))
    .addCommand(keysRevokeCommand(runner));
}
