import { Command } from 'commander';
import type { Session, Workspace } from '../../../contract/auth.js';
import { examples, type Runner } from '../../command.js';
import type { Context } from '../../context.js';
import { UsageError } from '../../errors.js';
import { profileSession } from '../../profile-session.js';
import { infoOf, password, reportSession, tokensOf, valueOrAsk } from './shared.js';

export interface LoginOptions {
  email?: string;
  /** A workspace id, slug or name. */
  workspace?: string;
  passwordStdin?: boolean;
}

export function loginCommand(runner: Runner): Command {
  const cmd = new Command('login')
    .description('Sign in; the session is kept in the keychain and refreshed by itself')
    .option('--email <email>', 'account email (asked on a terminal)')
    .option('--workspace <id|slug|name>', 'the workspace to use when the account has several (asked on a terminal)')
    .option('--password-stdin', 'read the password from stdin (for scripts)')
    .action((o: LoginOptions, c: Command) =>
      runner(c, loginRun, { email: o.email, workspace: o.workspace, passwordStdin: o.passwordStdin }),
    );
  return examples(
    cmd,
    'svc login',
    'printf \'%s\' "$SVC_PASSWORD" | svc login --email you@example.com --password-stdin --workspace acme',
    'svc login --profile staging --base-url https://staging.example.com/v1',
  );
}

/** The workspace `wanted` names (id, slug or name), or undefined when it names none. */
function match(workspaces: Workspace[], wanted: string): Workspace | undefined {
  const w = wanted.toLowerCase();
  return workspaces.find((x) => x.id === wanted || x.slug === w) ?? workspaces.find((x) => x.name.toLowerCase() === w);
}

function choices(workspaces: Workspace[]): string {
  return workspaces.map((w) => `${w.slug} (${w.name}, ${w.role})`).join(', ');
}

export async function loginRun(ctx: Context, o: LoginOptions): Promise<void> {
  const email = await valueOrAsk(ctx, o.email, '--email', 'Email');
  const secret = await password(ctx, o.passwordStdin);
  const client = await ctx.client();
  const spinner = await ctx.io.spinner('Signing in…');
  let reply;
  try {
    reply = await client.call('login', { body: { email, password: secret } });
  } finally {
    spinner.stop();
  }
  let session: Session = reply.body;
  let raw = reply.raw;

  // Decide the workspace now when no one needs asking, so that a wrong --workspace leaves nothing behind.
  let chosen: Workspace | undefined;
  if (o.workspace) {
    chosen = match(session.workspaces, o.workspace);
    if (!chosen) {
      await client.call('logout', { body: { refresh_token: session.refresh_token } }).catch(() => undefined);
      throw new UsageError(
        `this account has no workspace "${o.workspace}"`,
        `choose one of: ${choices(session.workspaces)}`,
      );
    }
  } else if (!session.workspace && session.workspaces.length > 1 && !ctx.io.canPrompt) {
    await client.call('logout', { body: { refresh_token: session.refresh_token } }).catch(() => undefined);
    throw new UsageError(
      `this account belongs to ${session.workspaces.length} workspaces; choose one with --workspace`,
      `one of: ${choices(session.workspaces)}`,
    );
  }

  const stored = profileSession(ctx);
  const previous = await stored.tokens();
  // The refresh token is kept at once: from here on it is this profile's session.
  await stored.save(infoOf(client.baseUrl, session, reply.headers), tokensOf(session));
  if (previous) await client.call('logout', { body: { refresh_token: previous.refresh_token } }).catch(() => undefined);

  if (!chosen && !session.workspace && session.workspaces.length > 1) {
    chosen = await (await ctx.io.prompts()).select(
      'Workspace',
      session.workspaces.map((w) => ({ name: `${w.name} (${w.slug})`, value: w, description: `role: ${w.role}` })),
    );
  }
  if (chosen && chosen.id !== session.workspace?.id) {
    const picked = chosen;
    // Switching rotates the refresh token: under the same lock as any other rotation of this profile's session.
    ({ session, raw } = await stored.withLock(async () => {
      const current = await stored.tokens();
      const r = await client.call('refreshSession', {
        body: { refresh_token: (current ?? tokensOf(session)).refresh_token, workspace_id: picked.id },
      });
      await stored.save(infoOf(client.baseUrl, r.body, r.headers), tokensOf(r.body));
      return { session: r.body, raw: r.raw };
    }));
  }
  reportSession(ctx, 'Logged in to', client.baseUrl, raw, session);
}
