// The commander tree. Loading it loads only commander and the commands' wiring: each command's work, and what it
// needs (the HTTP client, the contract's schemas, the profile, the keychain), is imported when the command runs.
import { Command, CommanderError } from 'commander';
import { examples, int, typedCommand, type Runner } from './command.js';
import { signupCommand } from './commands/auth/signup.js';
import { loginCommand } from './commands/auth/login.js';
import { logoutCommand } from './commands/auth/logout.js';
import { whoamiCommand } from './commands/auth/whoami.js';
import { verifyEmailCommand } from './commands/auth/verify-email.js';
import { sessionsCommand } from './commands/sessions/index.js';
import { keysCommand } from './commands/keys/index.js';
import { domainsCommand } from './commands/domains/index.js';
import { emailsCommand } from './commands/emails/index.js';
import { eventsCommand } from './commands/events/index.js';
import { webhooksCommand } from './commands/webhooks/index.js';
import { sandboxCommand } from './commands/sandbox/index.js';
import { doctorCommand } from './commands/doctor.js';
import { completionCommand } from './commands/completion.js';
import { inboxCommand } from './commands/inbox/index.js';
import { serveCommand } from './commands/serve.js';
import type { Context, GlobalOptions } from './context.js';
import { EXIT, reportError } from './errors.js';
import { processIO, type IO } from './io.js';
import { VERSION } from '../lib/version.js';

export { VERSION };

export interface ProgramOptions {
  runner: Runner;
  /** Where commander writes help and its own errors (stdout and stderr of the IO). */
  io?: Pick<IO, 'stdout' | 'stderr'>;
}

export function buildProgram(o: ProgramOptions): Command {
  const program = new Command('svc')
    .description('Send transactional email from code, and run the whole service locally with `svc serve`.')
    .version(VERSION, '-V, --version', 'print the version')
    .option('--profile <name>', 'the profile to use (default: SVC_PROFILE, else "default")')
    .option('--base-url <url>', "the API's base URL (default: SVC_BASE_URL, else the profile's, else http://127.0.0.1:4010/v1)")
    .option('--api-key <key>', "the API key for this run (default: SVC_API_KEY, else the profile's saved key)")
    .option('--admin-token <token>', 'the admin token of a local server, for sandbox and inbox commands (default: SVC_ADMIN_TOKEN)')
    .option('--json', "print the API's JSON body (errors as {\"error\": Problem})")
    .option('--wide', "on a terminal, print tables with whole values instead of fitting them to the terminal's width")
    .option('--retries <n>', 'retries after a 429, a 5xx or a connection error', int('--retries', 0, 10), 3)
    .showHelpAfterError('(run with --help for usage)')
    .exitOverride();
  examples(program, 'svc serve', 'svc login', 'svc keys create --name ci --scope emails:send --save', "svc emails send --from orders@example.test --to ada@example.org --subject Hi --text 'Hello'");
  if (o.io) {
    const { stdout, stderr } = o.io;
    program.configureOutput({ writeOut: (s) => void stdout.write(s), writeErr: (s) => void stderr.write(s) });
  }
  for (const make of [signupCommand, loginCommand, logoutCommand, whoamiCommand, verifyEmailCommand, sessionsCommand, keysCommand,
    domainsCommand, emailsCommand, eventsCommand, webhooksCommand, inboxCommand, sandboxCommand, doctorCommand, completionCommand]) {
    program.addCommand(make(o.runner));
  }
  const serve = examples(serveCommand(), 'svc serve', 'svc serve --memory --clock manual --port 0', 'svc serve --data-dir ./.svc-data --open-signup');
  // `svc serve --json` (JSON logs) has the program's own option's name, and the program takes it wherever it is
  // written: hand it on.
  serve.hook('preAction', (cmd) => {
    if (program.getOptionValue('json')) cmd.setOptionValue('json', true);
  });
  program.addCommand(serve);
  // addCommand does not copy settings (exit override, output, help after error): copy them down the whole tree.
  const inherit = (parent: Command) => {
    for (const c of parent.commands) {
      c.copyInheritedSettings(parent);
      c.configureHelp({ showGlobalOptions: true });
      inherit(c);
    }
  };
  inherit(program);
  return program;
}

/**
 * Runs the CLI; resolves with the exit code. Commands never call process.exit: they return or throw. `runner`
 * replaces how commands run (tests record the parsed options instead).
 */
export async function run(argv: string[], io?: IO, runner?: Runner): Promise<number> {
  const theIO = io ?? (await processIO());
  let code: number = EXIT.ok;
  const real: Runner = async (cmd, work, opts) => {
    const globals = cmd.optsWithGlobals<GlobalOptions>();
    let ctx: Context | undefined;
    try {
      const { createContext } = await import('./context.js');
      ctx = createContext({ io: theIO, globals });
      await work(ctx, opts);
    } catch (err) {
      // A credential refused by a local server reset since it was saved: said as such (reset.ts).
      const explained = ctx ? await (await import('./reset.js')).explainReset(ctx, err) : err;
      code = reportError(theIO, explained, { command: typedCommand(cmd), json: globals.json });
    }
  };
  const program = buildProgram({ runner: runner ?? real, io: theIO });
  try {
    await program.parseAsync(argv);
    return code;
  } catch (err) {
    if (err instanceof CommanderError) {
      if (err.code === 'commander.helpDisplayed' || err.code === 'commander.version' || err.code === 'commander.help') return EXIT.ok;
      return EXIT.usage;
    }
    // Thrown by a command's wiring (a usage error) or by `svc serve`.
    return reportError(theIO, err, { command: 'svc' });
  }
}
