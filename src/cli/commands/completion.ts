import { Argument, Command } from 'commander';
import { examples, type Runner } from '../command.js';
import type { Context } from '../context.js';

/** The command tree as completion scripts need it, read from the program itself so they never fall behind. */
export interface CommandSpec {
  /** The words after `svc` (`keys create`); empty for the root. */
  path: string;
  description: string;
  options: { flag: string; takesValue: boolean; description: string }[];
  commands: { name: string; description: string }[];
}

export interface CompletionOptions {
  shell: 'bash' | 'zsh' | 'fish';
  tree: CommandSpec[];
}

export function completionCommand(runner: Runner): Command {
  const cmd = new Command('completion')
    .description('Print a shell completion script')
    .addArgument(new Argument('<shell>', 'the shell').choices(['bash', 'zsh', 'fish']))
    .action((shell: CompletionOptions['shell'], _o: object, c: Command) =>
      runner(c, completionRun, { shell, tree: specs(c.parent!) }),
    );
  return examples(
    cmd,
    'source <(svc completion bash)        # in ~/.bashrc',
    // biome-ignore lint/suspicious/noTemplateCurlyInString: a shell line, where ${…} is the shell's
    'svc completion zsh > "${fpath[1]}/_svc"',
    'svc completion fish > ~/.config/fish/completions/svc.fish',
  );
}

/** Every command of the tree, with the options it takes (its own and the root's). */
export function specs(root: Command): CommandSpec[] {
  const globals = root.options.filter((o) => o.long);
  const out: CommandSpec[] = [];
  const walk = (cmd: Command, path: string[]) => {
    const own = cmd === root ? [] : cmd.options.filter((o) => o.long);
    out.push({
      path: path.join(' '),
      description: cmd.description(),
      options: [...own, ...globals, { long: '--help', required: false, optional: false, description: 'show help' }].map(
        (o) => ({
          flag: o.long!,
          takesValue: Boolean(o.required || o.optional),
          description: o.description,
        }),
      ),
      commands: cmd.commands.map((c) => ({ name: c.name(), description: c.description() })),
    });
    for (const c of cmd.commands) walk(c, [...path, c.name()]);
  };
  walk(root, []);
  return out;
}

export async function completionRun(ctx: Context, o: CompletionOptions): Promise<void> {
  ctx.io.print({ bash, zsh, fish }[o.shell](o.tree));
}

const valueFlags = (tree: CommandSpec[]) => [
  ...new Set(tree.flatMap((s) => s.options.filter((o) => o.takesValue).map((o) => o.flag))),
];
const q = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

function bash(tree: CommandSpec[]): string {
  const values = valueFlags(tree).join('|');
  const paths = tree
    .filter((s) => s.path)
    .map((s) => s.path)
    .join('|');
  const cases = tree
    .map(
      (s) =>
        `    ${q(s.path)}) words=${q([...s.commands.map((c) => c.name), ...s.options.map((o) => o.flag)].join(' '))} ;;`,
    )
    .join('\n');
  return `# svc completion for bash: source <(svc completion bash)
_svc() {
  local cur="\${COMP_WORDS[COMP_CWORD]}" prev="\${COMP_WORDS[COMP_CWORD-1]}" path="" next i w words
  # The command path: the words before the cursor that name commands (flags, their values and arguments skipped).
  for ((i = 1; i < COMP_CWORD; i++)); do
    w="\${COMP_WORDS[i]}"
    case "\${COMP_WORDS[i-1]}" in ${values}) continue ;; esac
    next="\${path:+$path }$w"
    case "|${paths}|" in *"|$next|"*) path="$next" ;; esac
  done
  # After a flag that takes a value: the shell's own (file) completion.
  case "$prev" in ${values}) return ;; esac
  case "$path" in
${cases}
    *) words="" ;;
  esac
  COMPREPLY=($(compgen -W "$words" -- "$cur"))
}
complete -o default -F _svc svc
`;
}

function zsh(tree: CommandSpec[]): string {
  const esc = (s: string) => s.replace(/\\/g, '\\\\').replace(/:/g, '\\:').replace(/'/g, `'\\''`);
  const values = valueFlags(tree).join('|');
  const paths = tree
    .filter((s) => s.path)
    .map((s) => s.path)
    .join('|');
  const cases = tree
    .map((s) => {
      const cmds = s.commands.map((c) => `'${esc(c.name)}:${esc(c.description)}'`).join(' ');
      const opts = s.options.map((o) => `'${esc(o.flag)}:${esc(o.description)}'`).join(' ');
      return `    ${q(s.path)}) cmds=(${cmds}); opts=(${opts}) ;;`;
    })
    .join('\n');
  return `#compdef svc
# svc completion for zsh: svc completion zsh > "\${fpath[1]}/_svc"
_svc() {
  local path_="" next w i
  local -a cmds opts
  for ((i = 2; i < CURRENT; i++)); do
    w="\${words[i]}"
    case "\${words[i-1]}" in ${values}) continue ;; esac
    next="\${path_:+$path_ }$w"
    case "|${paths}|" in *"|$next|"*) path_="$next" ;; esac
  done
  case "\${words[CURRENT-1]}" in ${values}) _files; return ;; esac
  case "$path_" in
${cases}
  esac
  if [[ "\${words[CURRENT]}" == -* ]]; then _describe 'option' opts; else _describe 'command' cmds || _files; fi
}
compdef _svc svc
`;
}

function fish(tree: CommandSpec[]): string {
  const lines = [
    '# svc completion for fish: svc completion fish > ~/.config/fish/completions/svc.fish',
    'complete -c svc -f',
  ];
  const esc = (s: string) => s.replace(/\\/g, '\\\\').replace(/'/g, "\\'");
  for (const s of tree) {
    const words = s.path ? s.path.split(' ') : [];
    const siblings = s.commands.map((c) => c.name).join(' ');
    // On this command's path, and not yet inside one of its subcommands.
    const cond = [
      ...(words.length ? words.map((w) => `__fish_seen_subcommand_from ${w}`) : ['__fish_use_subcommand']),
      ...(words.length && siblings ? [`not __fish_seen_subcommand_from ${siblings}`] : []),
    ].join('; and ');
    for (const c of s.commands) lines.push(`complete -c svc -n '${cond}' -a ${c.name} -d '${esc(c.description)}'`);
    for (const o of s.options) {
      const file = o.takesValue ? ' -r -F' : '';
      lines.push(
        `complete -c svc -n '${words.length ? words.map((w) => `__fish_seen_subcommand_from ${w}`).join('; and ') : 'true'}' -l ${o.flag.slice(2)}${file} -d '${esc(o.description)}'`,
      );
    }
  }
  return `${lines.join('\n')}\n`;
}
