import { Command } from 'commander';
import { examples, type Runner } from '../../command.js';
import type { Context } from '../../context.js';
import { profileSession } from '../../profile-session.js';
import { infoOf, password, reportSession, tokensOf, valueOrAsk } from './shared.js';

export interface SignupOptions {
  email?: string;
  name?: string;
  workspace?: string;
  inviteCode?: string;
  passwordStdin?: boolean;
}

export function signupCommand(runner: Runner): Command {
  const cmd = new Command('signup')
    .description('Create an account and its first workspace, and sign in')
    .option('--email <email>', 'account email (asked on a terminal)')
    .option('--name <name>', 'your name')
    .option('--workspace <name>', 'name of the first workspace (asked on a terminal)')
    .option('--invite-code <code>', 'invite code (needed while signup is invite-only)')
    .option('--password-stdin', 'read the password from stdin (at least 12 characters)')
    .action((o: SignupOptions, c: Command) => runner(c, signupRun, { ...o }));
  return examples(
    cmd,
    'svc signup --invite-code INVITE',
    'printf \'%s\' "$PASSWORD" | svc signup --email you@example.com --workspace Acme --invite-code INVITE --password-stdin',
  );
}

export async function signupRun(ctx: Context, o: SignupOptions): Promise<void> {
  const email = await valueOrAsk(ctx, o.email, '--email', 'Email');
  const workspace = await valueOrAsk(ctx, o.workspace, '--workspace', 'Workspace name');
  const secret = await password(ctx, o.passwordStdin, 'Password (at least 12 characters)');
  const client = await ctx.client();
  const reply = await client.call('signup', {
    body: { email, password: secret, workspace_name: workspace, invite_code: o.inviteCode, name: o.name },
  });
  await profileSession(ctx).save(infoOf(client.baseUrl, reply.body, reply.headers), tokensOf(reply.body));
  reportSession(ctx, 'Signed up at', client.baseUrl, reply.raw, reply.body);
  if (!ctx.json)
    ctx.io.info('A confirmation email is on its way: confirm with `svc verify-email TOKEN` to unlock live sending.');
}
