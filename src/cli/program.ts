import { Command, CommanderError } from 'commander';
import { serveCommand } from './commands/serve.js';
import { EXIT, UsageError } from './errors.js';

export const VERSION = '0.1.0';

export function buildProgram(): Command {
  const program = new Command('svc')
    .description('Send transactional email from code, and run the whole service locally with `svc serve`.')
    .version(VERSION)
    .showHelpAfterError('(run with --help for usage)')
    .exitOverride();
  program.addCommand(serveCommand());
  return program;
}

/** Runs the CLI; resolves with the exit code. Commands never call process.exit. */
export async function run(argv: string[]): Promise<number> {
  const program = buildProgram();
  try {
    await program.parseAsync(argv);
    return EXIT.ok;
  } catch (err) {
    if (err instanceof CommanderError) {
      if (err.code === 'commander.helpDisplayed' || err.code === 'commander.version' || err.code === 'commander.help') return EXIT.ok;
      return EXIT.usage;
    }
    if (err instanceof UsageError) {
      process.stderr.write(`error: ${err.message}\n${err.hint ? `hint: ${err.hint}\n` : ''}`);
      return EXIT.usage;
    }
    process.stderr.write(`error: ${err instanceof Error ? err.message : String(err)}\n`);
    return EXIT.failed;
  }
}
