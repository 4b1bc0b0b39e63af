import { Command, Option } from 'commander';
import { examples, type Runner } from '../../command.js';
import type { Context } from '../../context.js';
import { printFields, printJson } from '../../output.js';

export interface SandboxWorkspacesCreateOptions {
  email: string;
  name: string;
  role: 'owner' | 'admin' | 'member';
}

export interface SandboxWorkspaceStatusOptions {
  id: string;
  action: 'suspend' | 'activate' | 'close';
}

const OPERATION = { suspend: 'suspendWorkspace', activate: 'activateWorkspace', close: 'closeWorkspace' } as const;

export function sandboxWorkspacesCommand(runner: Runner): Command {
  const create = new Command('create')
    .description('Make a new workspace with an existing user in it, in the given role')
    .requiredOption('--email <email>', "the user's email address")
    .requiredOption('--name <name>', "the workspace's name")
    .addOption(
      new Option('--role <role>', "the user's role in it").choices(['owner', 'admin', 'member']).makeOptionMandatory(),
    )
    .action((o: SandboxWorkspacesCreateOptions, c: Command) =>
      runner(c, sandboxWorkspacesCreateRun, { email: o.email, name: o.name, role: o.role }),
    );
  examples(create, 'svc sandbox workspaces create --email owner@example.test --name "Second shop" --role admin');
  const group = examples(
    new Command('workspaces').description('Add workspaces; suspend, reactivate or close one'),
    'svc sandbox workspaces suspend ws_…',
  ).addCommand(create);
  const help = {
    suspend: 'Suspend a workspace: its API calls are refused with 403 workspace_suspended',
    activate: 'Make a suspended or closed workspace active again',
    close: 'Close a workspace',
  };
  for (const action of ['suspend', 'activate', 'close'] as const) {
    const cmd = new Command(action)
      .description(help[action])
      .argument('<id>', 'the workspace id (ws_…)')
      .action((id: string, _o: object, c: Command) => runner(c, sandboxWorkspaceStatusRun, { id, action }));
    group.addCommand(examples(cmd, `svc sandbox workspaces ${action} ws_…`));
  }
  return group;
}

export async function sandboxWorkspacesCreateRun(ctx: Context, o: SandboxWorkspacesCreateOptions): Promise<void> {
  const r = await (await ctx.client()).sandbox('createSandboxWorkspace', { body: o });
  if (ctx.json) return printJson(ctx.io, r.raw);
  const w = r.body;
  if (ctx.quiet) return ctx.io.print(w.id);
  printFields(ctx.io, [
    ['id', w.id],
    ['name', w.name],
    ['slug', w.slug],
    ['role', w.role],
    ['status', w.status],
  ]);
}

export async function sandboxWorkspaceStatusRun(ctx: Context, o: SandboxWorkspaceStatusOptions): Promise<void> {
  const r = await (await ctx.client()).sandbox(OPERATION[o.action], { params: { id: o.id } });
  if (ctx.json) return printJson(ctx.io, r.raw);
  ctx.io.print(ctx.io.stdoutIsTTY ? `${r.body.id}  ${r.body.status}` : `${r.body.id}\t${r.body.status}`);
}
