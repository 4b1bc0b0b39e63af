import { Command } from 'commander';
import { examples, type Runner } from '../../command.js';
import type { Context } from '../../context.js';
import { printFields, printJson } from '../../output.js';
import { profileSession } from '../../profile-session.js';

export function revokeAllCommand(runner: Runner): Command {
  const cmd = new Command('revoke-all')
    .description('Revoke every session of your account (signs out everywhere, this one included)')
    .action((_o: object, c: Command) => runner(c, revokeAllRun, {}));
  return examples(cmd, 'svc sessions revoke-all', 'svc sessions revoke-all --json');
}

export async function revokeAllRun(ctx: Context): Promise<void> {
  const r = await (await ctx.client()).call('revokeAllSessions');
  // This profile's refresh token is among those revoked: keeping it would only fail later.
  await profileSession(ctx).forget();
  if (ctx.json) return printJson(ctx.io, r.raw);
  printFields(ctx.io, [
    ['revoked', r.body.revoked],
    ['access tokens valid until', r.body.access_tokens_valid_until],
  ]);
  ctx.io.info(`${r.body.note} Sign in again with \`svc login\`.`);
}
