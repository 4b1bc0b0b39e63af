import { Command } from 'commander';
import { examples, type Runner } from '../../command.js';
import type { Context } from '../../context.js';
import { UsageError } from '../../errors.js';
import { printJson } from '../../output.js';

export interface VerifyEmailOptions {
  token?: string;
  resend?: boolean;
}

export function verifyEmailCommand(runner: Runner): Command {
  const cmd = new Command('verify-email')
    .description('Confirm your email address with the token it was sent (unlocks live sending), or send it again')
    .argument('[token]', 'the token from the confirmation email')
    .option('--resend', 'send the confirmation email again (signed in)')
    .action((token: string | undefined, o: { resend?: boolean }, c: Command) => {
      if (Boolean(token) === Boolean(o.resend))
        throw new UsageError('give the TOKEN from the email, or --resend (one of them)');
      return runner(c, verifyEmailRun, { token, resend: o.resend });
    });
  return examples(cmd, 'svc verify-email 9f2c…', 'svc verify-email --resend');
}

export async function verifyEmailRun(ctx: Context, o: VerifyEmailOptions): Promise<void> {
  const client = await ctx.client();
  if (o.resend) {
    const r = await client.call('resendVerification');
    if (ctx.json) return printJson(ctx.io, r.raw);
    ctx.io.info(r.body.note);
    return;
  }
  const r = await client.call('verifyEmail', { body: { token: o.token! } });
  if (ctx.json) return printJson(ctx.io, r.raw);
  ctx.io.info(`${ctx.io.err.green('✓')} ${r.body.email} is confirmed${r.body.note ? `: ${r.body.note}` : ''}`);
}
