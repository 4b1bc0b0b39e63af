import { Command, Option } from 'commander';
import { KEY_CHARS } from '../../../contract/ids.js';
import { base62 } from '../../../lib/ids.js';
import { examples, type Runner } from '../../command.js';
import type { Context } from '../../context.js';

/**
 * `svc keys generate`: a fresh API key value, made here without any server, for a seed file (`svc serve --seed`) and the
 * app's `.env.test` to name before the server starts. It works once a server seeded with it starts.
 */
export function keysGenerateCommand(runner: Runner): Command {
  const cmd = new Command('generate')
    .description('Print a fresh, valid API key value (offline) for a seed file: `svc serve --seed FILE`')
    .addOption(new Option('--mode <mode>', 'test or live').choices(['test', 'live']).default('test'))
    .action((o: { mode: 'test' | 'live' }, c: Command) => runner(c, keysGenerateRun, o));
  return examples(cmd, 'svc keys generate', 'echo "SVC_API_KEY=$(svc keys generate --mode test)" >> .env.test');
}

export async function keysGenerateRun(ctx: Context, o: { mode: 'test' | 'live' }): Promise<void> {
  ctx.io.print(`svc_${o.mode}_${base62(KEY_CHARS)}`);
}
