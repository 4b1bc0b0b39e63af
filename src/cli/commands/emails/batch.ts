import { Command } from 'commander';
import { readFile } from 'node:fs/promises';
import { examples, type Runner } from '../../command.js';
import type { Context } from '../../context.js';
import { CommandError, problemDetail, UsageError } from '../../errors.js';
import { printJson, printTable } from '../../output.js';

export interface EmailsBatchOptions {
  /** A path, or `-` for stdin. */
  file: string;
  idempotencyKey?: string;
}

export function emailsBatchCommand(runner: Runner): Command {
  const cmd = new Command('batch')
    .description('Send up to 100 emails from a JSON file holding an array of send requests; prints a result per email')
    .argument('<file>', 'the JSON file (- for stdin)')
    .option('--idempotency-key <key>', 'covers the whole batch (a key is generated when not given)')
    .action((file: string, o: { idempotencyKey?: string }, c: Command) =>
      runner(c, emailsBatchRun, { file, idempotencyKey: o.idempotencyKey }),
    );
  return examples(
    cmd,
    'svc emails batch welcome.json',
    `jq -n '[{from: "a@example.com", to: "b@example.org", subject: "Hi", text: "Hello"}]' | svc emails batch -`,
  );
}

interface Item {
  status: number;
  id?: string;
  message_status?: string;
  error?: Record<string, unknown>;
}

export async function emailsBatchRun(ctx: Context, o: EmailsBatchOptions): Promise<void> {
  const text =
    o.file === '-'
      ? await ctx.io.readStdin()
      : await readFile(o.file, 'utf8').catch((err: NodeJS.ErrnoException) => {
          throw new UsageError(`cannot read ${o.file} (${err.code ?? err.message})`);
        });
  let emails: unknown;
  try {
    emails = JSON.parse(text);
  } catch (err) {
    throw new UsageError(`${o.file} is not JSON (${(err as Error).message})`);
  }
  if (!Array.isArray(emails)) throw new UsageError(`${o.file} must hold a JSON array of send requests (1–100)`);
  const r = await (await ctx.client()).call('sendBatch', { body: emails, idempotencyKey: o.idempotencyKey });
  const items = r.body.data as Item[];
  if (ctx.json) printJson(ctx.io, r.raw);
  // -q: a line per email of the file, in its order: the message's id, or `-` for one refused.
  else if (ctx.quiet) for (const item of items) ctx.io.print(item.id ?? '-');
  else {
    await printTable(
      ctx.io,
      items.map((item, index) => ({ index, ...item })),
      [
        { header: '#', value: (i) => i.index },
        { header: 'STATUS', value: (i) => i.status },
        { header: 'ID', value: (i) => i.id, id: true },
        { header: 'RESULT', value: (i) => i.message_status ?? problemLine(i.error) },
      ],
    );
  }
  const refused = items.filter((i) => i.status >= 300).length;
  if (refused)
    throw new CommandError(
      `${refused} of ${items.length} emails were refused; the others were accepted`,
      undefined,
      ctx.json,
    );
  if (!ctx.quiet) ctx.io.info(`${ctx.io.err.green('✓')} ${items.length} accepted.`);
}

function problemLine(p: Record<string, unknown> | undefined): string {
  if (!p) return '';
  const detail = problemDetail({
    detail: typeof p.detail === 'string' ? p.detail : undefined,
    errors: Array.isArray(p.errors) ? (p.errors as { path: string; code: string; message: string }[]) : undefined,
  });
  return `${String(p.code ?? p.title)}${detail ? `: ${detail}` : ''}`;
}
