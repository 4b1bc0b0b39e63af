import { Command, InvalidArgumentError } from 'commander';
import { examples, int, type Runner } from '../../command.js';
import type { Context } from '../../context.js';
import { CommandError, UsageError } from '../../errors.js';

export interface WebhooksVerifyOptions {
  secret: string;
  /** The Service-Signature header's value. */
  signature: string;
  /** Seconds (default 300). */
  tolerance?: number;
}

/** `--header 'Service-Signature: t=…,v1=…'`, or the value alone. */
export function signatureHeader(v: string): string {
  const m = /^\s*([!#$%&'*+.^_`|~0-9A-Za-z-]+)\s*:(.*)$/s.exec(v);
  if (m && m[1]?.toLowerCase() !== 'service-signature') {
    throw new InvalidArgumentError(
      `--header takes the Service-Signature header ('Service-Signature: t=…,v1=…') or its value; got a ${m[1]} header.`,
    );
  }
  const value = (m ? (m[2] ?? '') : v).trim();
  if (!value)
    throw new InvalidArgumentError("--header takes 'Service-Signature: t=…,v1=…' (or the value alone); it is empty.");
  return value;
}

export function webhooksVerifyCommand(runner: Runner): Command {
  const cmd = new Command('verify')
    .description(
      'Check a delivery\'s signature the way a receiver must: the raw body on stdin; prints "valid" (exit 0) or why not (exit 1)',
    )
    .requiredOption('--secret <whsec>', "the endpoint's signing secret (whsec_…)")
    .requiredOption(
      '--header <header>',
      "the Service-Signature header as received ('Service-Signature: t=…,v1=…', or the value alone)",
      signatureHeader,
    )
    .option('--tolerance <seconds>', 'largest accepted age of the signature', int('--tolerance', 0, 10 * 365 * 86400))
    .action((o: { secret: string; header: string; tolerance?: number }, c: Command) =>
      runner(c, webhooksVerifyRun, { secret: o.secret, signature: o.header, tolerance: o.tolerance }),
    );
  return examples(
    cmd,
    'svc webhooks verify --secret "$WEBHOOK_SECRET" --header \'Service-Signature: t=1785585600,v1=5f0c…\' < body.json',
    'svc webhooks verify --secret whsec_… --header "$SIG" --tolerance 600 < body.json && echo accepted',
  );
}

/** Needs no credential and no service: the signature is checked here, with the contract's one signing module. */
export async function webhooksVerifyRun(ctx: Context, o: WebhooksVerifyOptions): Promise<void> {
  const { io } = ctx;
  if (io.stdinIsTTY)
    throw new UsageError(
      'give the raw body on stdin',
      'e.g. svc webhooks verify --secret whsec_… --header "…" < body.json',
    );
  // The signature covers the bytes received: read them as bytes, never re-encoded.
  const chunks: Buffer[] = [];
  for await (const chunk of io.stdin) chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer));
  const { verifyWebhook, WebhookVerificationError } = await import('../../../contract/signature.js');
  try {
    const timestamp = verifyWebhook({
      secret: o.secret,
      header: o.signature,
      body: Buffer.concat(chunks),
      tolerance: o.tolerance,
    });
    io.print(ctx.json ? JSON.stringify({ valid: true, timestamp }) : 'valid');
  } catch (err) {
    if (!(err instanceof WebhookVerificationError)) throw err;
    if (ctx.json) io.print(JSON.stringify({ valid: false, reason: err.reason, message: err.message }));
    throw new CommandError(err.message, undefined, ctx.json);
  }
}
