// The commander tree. Loading it loads only commander and the root's options: each top-level command's wiring is
// imported when argv names it (a chunk of its own in the bundle), and each command's work, and what it needs (the HTTP
// client, the contract's schemas, the profile, the keychain), when the command runs.
import { Command, CommanderError, type Option } from 'commander';
import { examples, int, typedCommand, type Runner } from './command.js';
import type { Context, GlobalOptions } from './context.js';
import { EXIT, reportError } from './errors.js';
import { processIO, type IO } from './io.js';
import { nearest } from '../lib/nearest.js';
import { VERSION } from '../lib/version.js';

export { VERSION };

type Make = (runner: Runner) => Command;

/** The top-level commands, in the order help lists them, each loaded on demand. */
const COMMANDS: Record<string, () => Promise<Make>> = {
  signup: async () => (await import('./commands/auth/signup.js')).signupCommand,
  login: async () => (await import('./commands/auth/login.js')).loginCommand,
  logout: async () => (await import('./commands/auth/logout.js')).logoutCommand,
  whoami: async () => (await import('./commands/auth/whoami.js')).whoamiCommand,
  'verify-email': async () => (await import('./commands/auth/verify-email.js')).verifyEmailCommand,
  sessions: async () => (await import('./commands/sessions/index.js')).sessionsCommand,
  keys: async () => (await import('./commands/keys/index.js')).keysCommand,
  domains: async () => (await import('./commands/domains/index.js')).domainsCommand,
  emails: async () => (await import('./commands/emails/index.js')).emailsCommand,
  events: async () => (await import('./commands/events/index.js')).eventsCommand,
  webhooks: async () => (await import('./commands/webhooks/index.js')).webhooksCommand,
  inbox: async () => (await import('./commands/inbox/index.js')).inboxCommand,
  smtp: async () => (await import('./commands/smtp.js')).smtpCommand,
  mailbox: async () => (await import('./commands/mailbox.js')).mailboxCommand,
  sandbox: async () => (await import('./commands/sandbox/index.js')).sandboxCommand,
  trigger: async () => (await import('./commands/trigger.js')).triggerCommand,
  mcp: async () => (await import('./commands/mcp.js')).mcpCommand,
  doctor: async () => (await import('./commands/doctor.js')).doctorCommand,
  completion: async () => (await import('./commands/completion.js')).completionCommand,
  servers: async () => (await import('./commands/servers.js')).serversCommand,
  serve: async () => {
    const { serveCommand } = await import('./serve/serve.js');
    return (runner) =>
      examples(
        serveCommand(runner),
        'svc serve',
        'svc serve --memory --clock manual --port 0',
        'svc serve --data-dir ./.svc-data --open-signup',
      );
  },
};

/** The root's options that take a value (`--profile NAME`): the word after them is no command name. */
const VALUE_OPTIONS = new Set(['--profile', '--base-url', '--api-key', '--admin-token', '--retries']);
/** The root's options that take none. */
const FLAG_OPTIONS = new Set(['--json', '--wide', '-q', '--quiet', '--verbose']);

/**
 * The top-level commands a run needs, read from its arguments as commander will: the one named first, or none when
 * `-V`/`--version` comes before any name (commander prints the version as soon as it reads the flag). Every one
 * otherwise: the root's help lists them all, an unknown name is answered with the nearest known ones, and the
 * completion script is made from the whole tree.
 */
export function commandsFor(args: readonly string[]): readonly string[] {
  const all = Object.keys(COMMANDS);
  const rest = args.values();
  for (const arg of rest) {
    if (arg === '-V' || arg === '--version') return [];
    if (VALUE_OPTIONS.has(arg)) {
      rest.next(); // the option's value
      continue;
    }
    if (FLAG_OPTIONS.has(arg) || VALUE_OPTIONS.has(arg.split('=')[0] ?? '')) continue;
    if (arg.startsWith('-')) return all;
    return Object.hasOwn(COMMANDS, arg) && arg !== 'completion' ? [arg] : all;
  }
  return all;
}
export interface ProgramOptions {
  runner: Runner;
  /** Where commander writes help and its own errors (stdout and stderr of the IO). */
  io?: Pick<IO, 'stdout' | 'stderr'>;
  /** The top-level commands to load (default: every one). */
  commands?: readonly string[];
}

export async function buildProgram(o: ProgramOptions): Promise<Command> {
  const program = new Command('svc')
    .description('Send transactional email from code, and run the whole service locally with `svc serve`.')
    .version(VERSION, '-V, --version', 'print the version')
    .option('--profile <name>', 'the profile to use (default: SVC_PROFILE, else "default")')
    .option(
      '--base-url <url>',
      "the API's base URL (default: SVC_BASE_URL, else the profile's, else http://127.0.0.1:4010/v1)",
    )
    .option('--api-key <key>', "the API key for this run (default: SVC_API_KEY, else the profile's saved key)")
    .option(
      '--admin-token <token>',
      'the admin token of a local server, for the sandbox, inbox and mcp commands (default: SVC_ADMIN_TOKEN)',
    )
    .option('--json', 'print the API\'s JSON body (errors as {"error": Problem})')
    .option('--wide', "on a terminal, print tables with whole values instead of fitting them to the terminal's width")
    .option('--retries <n>', 'retries after a 429, a 5xx or a connection error', int('--retries', 0, 10), 3)
    .option('-q, --quiet', 'print only what a command makes (its id, key or code), and no success lines')
    .option('--verbose', 'say each retry on stderr (on a terminal they are said anyway)')
    .showHelpAfterError('(run with --help for usage)')
    .exitOverride();
  examples(
    program,
    'svc serve',
    'svc login',
    'svc keys create --name ci --scope emails:send --save',
    "svc emails send --from orders@example.test --to ada@example.org --subject Hi --text 'Hello'",
  );
  if (o.io) {
    const { stdout, stderr } = o.io;
    program.configureOutput({ writeOut: (s) => void stdout.write(s), writeErr: (s) => void stderr.write(s) });
  }
  const names = o.commands ?? Object.keys(COMMANDS);
  const load = (name: string) => {
    const make = COMMANDS[name];
    if (!make) throw new Error(`svc has no top-level command named ${name}`);
    return make();
  };
  for (const make of await Promise.all(names.map(load))) program.addCommand(make(o.runner));
  // `svc serve --json` (JSON logs) and `--quiet` (fewer log lines) have the program's own options' names, and the
  // program takes them wherever they are written: hand them on.
  program.commands
    .find((c) => c.name() === 'serve')
    ?.hook('preAction', (cmd) => {
      for (const name of ['json', 'quiet']) if (program.getOptionValue(name)) cmd.setOptionValue(name, true);
    });
  // addCommand does not copy settings (exit override, output, help after error): copy them down the whole tree.
  const inherit = (parent: Command) => {
    for (const c of parent.commands) {
      c.copyInheritedSettings(parent);
      c.configureHelp({ showGlobalOptions: true });
      inherit(c);
    }
  };
  inherit(program);
  suggestMistypes(program);
  return program;
}

/**
 * Mistyped names answered with the one meant, where commander alone would not. A required option is checked after the
 * unknown ones (commander checks it first: `--form` for `--from` would be told only that --from is missing). A word
 * after a group whose default subcommand takes no argument (`svc inbox wiat`) is an unknown subcommand of the group,
 * not an argument too many for the default one.
 */
function suggestMistypes(program: Command): void {
  const required = new Set<Option>();
  const walk = (c: Command) => {
    for (const o of c.options.filter((o) => o.mandatory)) {
      o.mandatory = false;
      required.add(o);
    }
    if (c.commands.length) c.hook('preSubcommand', unknownSubcommand);
    for (const sub of c.commands) walk(sub);
  };
  walk(program);
  // Hooks run after the unknown options have been refused.
  program.hook('preAction', (_program, action) => {
    for (let c: Command | null = action; c; c = c.parent) {
      for (const o of c.options) {
        if (required.has(o) && c.getOptionValue(o.attributeName()) === undefined)
          action.error(`error: required option '${o.flags}' not specified`, {
            code: 'commander.missingMandatoryOptionValue',
          });
      }
    }
  });
}

/** `group` runs `sub`: the word typed after the group is no name of `sub` only when `sub` is the default. */
function unknownSubcommand(group: Command, sub: Command): void {
  const [word] = group.args;
  if (word === undefined || word.startsWith('-') || sub.registeredArguments.length > 0) return;
  if (word === sub.name() || sub.aliases().includes(word)) return;
  const near = nearest(
    word,
    group.commands.map((c) => c.name()),
  );
  group.error(`error: unknown command '${word}'${near ? `\n(Did you mean ${near}?)` : ''}`, {
    code: 'commander.unknownCommand',
  });
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
      // No credential sent to a local server: its seeded test key is named (local-key.ts).
      const hint = ctx ? await (await import('./local-key.js')).localKeyHint(ctx, explained) : undefined;
      code = await reportError(theIO, explained, { command: typedCommand(cmd), json: globals.json, hint });
    }
  };
  const program = await buildProgram({ runner: runner ?? real, io: theIO, commands: commandsFor(argv.slice(2)) });
  try {
    await program.parseAsync(argv);
    return code;
  } catch (err) {
    if (err instanceof CommanderError) {
      if (err.code === 'commander.helpDisplayed' || err.code === 'commander.version' || err.code === 'commander.help')
        return EXIT.ok;
      return EXIT.usage;
    }
    // Thrown by a command's wiring (a usage error) or by `svc serve`.
    return reportError(theIO, err, { command: 'svc' });
  }
}
