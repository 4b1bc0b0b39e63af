import { Command } from 'commander';
import { examples, type Runner } from '../../command.js';
import { domainsAddCommand } from './add.js';
import { domainsDeleteCommand } from './delete.js';
import { domainsDnsCommand } from './dns.js';
import { domainsGetCommand } from './get.js';
import { domainsListCommand } from './list.js';
import { domainsUpdateCommand } from './update.js';
import { domainsVerifyCommand } from './verify.js';

export function domainsCommand(runner: Runner): Command {
  return examples(
    new Command('domains').description('Sending domains and their DNS records'),
    'svc domains add example.com',
    'svc domains verify dom_… --wait',
  )
    .addCommand(domainsAddCommand(runner))
    .addCommand(domainsListCommand(runner))
    .addCommand(domainsGetCommand(runner))
    .addCommand(domainsDnsCommand(runner))
    .addCommand(domainsUpdateCommand(runner))
    .addCommand(domainsDeleteCommand(runner))
    .addCommand(domainsVerifyCommand(runner));
}
