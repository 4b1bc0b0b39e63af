import { Command } from 'commander';
import { examples, int, timestamp, type Runner } from '../../command.js';
import type { Context } from '../../context.js';
import { printJson } from '../../output.js';

export interface SandboxInvitesCreateOptions {
  maxUses?: number;
  expiresAt?: string;
}

export function sandboxInvitesCommand(runner: Runner): Command {
  const create = new Command('create')
    .description('Make an invite code for `svc signup --invite-code` (single use unless --max-uses)')
    .option('--max-uses <n>', 'how many signups it admits', int('--max-uses', 1, 1_000_000))
    .option('--expires-at <time>', 'when it stops working (ISO 8601)', timestamp('--expires-at'))
    .action((o: SandboxInvitesCreateOptions, c: Command) =>
      runner(c, sandboxInvitesCreateRun, { maxUses: o.maxUses, expiresAt: o.expiresAt }),
    );
  examples(
    create,
    'svc sandbox invites create',
    'svc signup --invite-code "$(svc sandbox invites create --max-uses 5)"',
  );
  return examples(
    new Command('invites').description('Invite codes (signup is invite-only unless `svc serve --open-signup`)'),
    'svc sandbox invites create',
  ).addCommand(create);
}

export async function sandboxInvitesCreateRun(ctx: Context, o: SandboxInvitesCreateOptions): Promise<void> {
  const r = await (await ctx.client()).sandbox('createInvite', {
    body: { max_uses: o.maxUses, expires_at: o.expiresAt },
  });
  if (ctx.json) return printJson(ctx.io, r.raw);
  const invite = r.body;
  ctx.io.print(invite.code);
  if (ctx.quiet) return;
  const uses = invite.max_uses === 1 ? 'one signup' : `${invite.max_uses} signups`;
  ctx.io.info(
    `Invite ${invite.id}: ${uses}${invite.expires_at ? `, until ${invite.expires_at}` : ''}. Use it with: svc signup --invite-code ${invite.code}`,
  );
}
