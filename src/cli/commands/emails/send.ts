import { Command, InvalidArgumentError, Option } from 'commander';
import { readFile } from 'node:fs/promises';
import { basename } from 'node:path';
import type { FieldError } from '../../../contract/common.js';
import type { Attachment, SendEmailRequest, Tag } from '../../../contract/emails.js';
import { examples, repeat, timestamp, type Runner } from '../../command.js';
import type { Context } from '../../context.js';
import { clientErrors, UsageError } from '../../errors.js';
import { printJson } from '../../output.js';

export interface EmailsSendOptions {
  from: string;
  to: string[];
  cc?: string[];
  bcc?: string[];
  replyTo?: string[];
  subject?: string;
  text?: string;
  /** A path, or `-` for stdin. */
  textFile?: string;
  html?: string;
  /** A path, or `-` for stdin. */
  htmlFile?: string;
  /** Paths of files to attach, or https:// URLs the service fetches at delivery. */
  attach?: string[];
  tags?: Tag[];
  headers?: Record<string, string>;
  scheduledAt?: string;
  idempotencyKey?: string;
}

function tag(v: string, prev: Tag[] = []): Tag[] {
  const eq = v.indexOf('=');
  if (eq <= 0) throw new InvalidArgumentError('--tag takes NAME=VALUE, e.g. --tag order=1042.');
  return [...prev, { name: v.slice(0, eq), value: v.slice(eq + 1) }];
}

function header(v: string, prev: Record<string, string> = {}): Record<string, string> {
  const colon = v.indexOf(':');
  if (colon <= 0) throw new InvalidArgumentError("--header takes 'Name: value', e.g. --header 'X-Order: 1042'.");
  return { ...prev, [v.slice(0, colon).trim()]: v.slice(colon + 1).trim() };
}

/**
 * A recipient flag's value: repeatable, and a comma-separated list of addresses counts as several (`--to a@x,b@y`, as
 * `--scope a,b` does), each part an address of its own. A comma inside quotes or angle brackets (`"Doe, Jo" <j@x>`)
 * separates nothing, and a value whose parts are not all addresses goes to the service as written.
 */
export function addresses(v: string, prev: string[] = []): string[] {
  const parts: string[] = [];
  let quoted = false;
  let angle = 0;
  let start = 0;
  for (let i = 0; i < v.length; i++) {
    const c = v[i];
    if (quoted && c === '\\') i++;
    else if (c === '"') quoted = !quoted;
    else if (!quoted && c === '<') angle++;
    else if (!quoted && c === '>') angle--;
    else if (!quoted && angle <= 0 && c === ',') {
      parts.push(v.slice(start, i));
      start = i + 1;
    }
  }
  parts.push(v.slice(start));
  const list = parts.map((p) => p.trim()).filter(Boolean);
  return [...prev, ...(parts.length > 1 && list.length > 0 && list.every((p) => p.includes('@')) ? list : [v])];
}

export function emailsSendCommand(runner: Runner): Command {
  const cmd = new Command('send')
    .description('Send an email (with an API key); prints its id and status')
    .requiredOption('--from <address>', "sender, 'Name <address>' or an address at a verified domain")
    .requiredOption('--to <address>', 'recipient, repeatable or comma-separated (up to 50)', addresses)
    .option('--cc <address>', 'copy to, repeatable or comma-separated', addresses)
    .option('--bcc <address>', 'blind copy to, repeatable or comma-separated', addresses)
    .option('--reply-to <address>', 'reply address, repeatable or comma-separated', addresses)
    .option('--subject <text>', 'subject line')
    .addOption(new Option('--text <text>', 'plain-text body').conflicts('textFile'))
    .option('--text-file <path>', 'plain-text body from a file (- for stdin)')
    .addOption(new Option('--html <html>', 'HTML body').conflicts('htmlFile'))
    .option('--html-file <path>', 'HTML body from a file (- for stdin)')
    .option('--attach <path>', 'attach a file (or an https:// URL fetched at delivery), repeatable', repeat)
    .option('--tag <name=value>', 'a tag, repeatable', tag)
    .option('--header <name: value>', 'an extra header, repeatable', header)
    .option('--scheduled-at <time>', 'send later (ISO 8601, up to 30 days ahead)', timestamp('--scheduled-at'))
    .option('--idempotency-key <key>', 'sending twice with one key sends once (a key is generated when not given)')
    .action(
      (
        o: Omit<EmailsSendOptions, 'tags' | 'headers'> & { tag?: Tag[]; header?: Record<string, string> },
        c: Command,
      ) => {
        if (o.textFile === '-' && o.htmlFile === '-')
          throw new UsageError('stdin can hold one body: give --text-file - or --html-file -, not both');
        const { tag: tags, header: headers, ...rest } = o;
        return runner(c, emailsSendRun, { ...rest, tags, headers });
      },
    );
  return examples(
    cmd,
    "svc emails send --from 'Shop <orders@example.com>' --to ada@example.org --subject 'Your order' --text 'Thanks!'",
    'render-receipt | svc emails send --from orders@example.com --to ada@example.org --subject Receipt --html-file - --attach receipt.pdf',
    'SVC_API_KEY=svc_live_… svc emails send --from orders@example.com --to ada@example.org --text hi --idempotency-key order-1042',
  );
}

/** A body from its flag, or from a file, or from stdin (`-`). */
async function body(
  ctx: Context,
  inline: string | undefined,
  file: string | undefined,
  flag: string,
): Promise<string | undefined> {
  if (file === undefined) return inline;
  if (file === '-') return ctx.io.readStdin();
  return readFile(file, 'utf8').catch((err: NodeJS.ErrnoException) => {
    throw new UsageError(`${flag}: cannot read ${file} (${err.code ?? err.message})`);
  });
}

async function attachment(ref: string): Promise<Attachment> {
  if (/^https?:\/\//i.test(ref)) {
    return { url: ref, filename: decodeURIComponent(new URL(ref).pathname.split('/').pop() || 'attachment') };
  }
  const content = await readFile(ref).catch((err: NodeJS.ErrnoException) => {
    throw new UsageError(`--attach: cannot read ${ref} (${err.code ?? err.message})`);
  });
  return { filename: basename(ref), content: content.toString('base64') };
}

export async function buildEmail(ctx: Context, o: EmailsSendOptions): Promise<SendEmailRequest> {
  return {
    from: o.from,
    to: o.to,
    cc: o.cc,
    bcc: o.bcc,
    reply_to: o.replyTo,
    subject: o.subject,
    text: await body(ctx, o.text, o.textFile, '--text-file'),
    html: await body(ctx, o.html, o.htmlFile, '--html-file'),
    attachments: o.attach?.length ? await Promise.all(o.attach.map(attachment)) : undefined,
    tags: o.tags,
    headers: o.headers,
    scheduled_at: o.scheduledAt,
  };
}

/** The flag that gives each field of the send request that is not a body or an attachment. */
const FLAGS: Record<string, string> = {
  from: '--from',
  to: '--to',
  cc: '--cc',
  bcc: '--bcc',
  reply_to: '--reply-to',
  subject: '--subject',
  headers: '--header',
  tags: '--tag',
  scheduled_at: '--scheduled-at',
};

/** `Shop orders@example.com`: a name and an address without the angle brackets that tell them apart. */
const UNBRACKETED = /^([^<>@"]+?)\s+([^\s<>@]+@[^\s<>@]+)$/;

/**
 * A field error of the service (`reply_to.0`, `html`: the names of its JSON body) in the terms of the flag that gave
 * the field; an address given with a name but without angle brackets is shown with them.
 */
function inFlags(f: FieldError, o: EmailsSendOptions): FieldError {
  if (f.code === 'content_required')
    return { ...f, path: 'body', message: 'give --text, --text-file, --html or --html-file' };
  const [field = '', at = '0'] = f.path.split('.');
  const n = Number(at);
  if (field === 'text') return { ...f, path: o.textFile === undefined ? '--text' : '--text-file' };
  if (field === 'html') return { ...f, path: o.htmlFile === undefined ? '--html' : '--html-file' };
  if (field === 'attachments') return { ...f, path: `--attach ${o.attach?.[n] ?? ''}`.trimEnd() };
  if (field === 'headers') return { ...f, path: `--header ${f.path.slice('headers.'.length)}` };
  if (field === 'tags') return { ...f, path: `--tag ${o.tags?.[n]?.name ?? ''}`.trimEnd() };
  const flag = FLAGS[field];
  if (!flag) return f;
  const addresses: Record<string, string | string[] | undefined> = {
    from: o.from,
    to: o.to,
    cc: o.cc,
    bcc: o.bcc,
    reply_to: o.replyTo,
  };
  const parts = f.code === 'invalid' ? UNBRACKETED.exec([addresses[field] ?? []].flat()[n] ?? '') : null;
  const meant = parts ? `; did you mean ${flag} '${parts[1]} <${parts[2]}>'?` : '';
  return { ...f, path: flag, message: `${f.message}${meant}` };
}

/**
 * A refusal that lists the fields of the request (its detail is that list), told with the flags that gave them. The
 * Problem as the service wrote it stays for --json.
 */
async function toldInFlags(ctx: Context, err: unknown, o: EmailsSendOptions): Promise<unknown> {
  const { ApiError } = await clientErrors();
  if (ctx.json || !(err instanceof ApiError)) return err;
  const p = err.problem;
  if (!p.errors?.length || (p.code !== 'validation_failed' && p.code !== 'invalid_request')) return err;
  const errors = p.errors.map((f) => inFlags(f, o));
  const problem = { ...p, detail: errors.map((f) => `${f.path}: ${f.message}`).join('; '), errors };
  return new ApiError(err.status, problem, err.headers, err.operation, err.auth, err.baseUrl);
}

export async function emailsSendRun(ctx: Context, o: EmailsSendOptions): Promise<void> {
  const email = await buildEmail(ctx, o);
  const r = await (await ctx.client())
    .call('sendEmail', { body: email, idempotencyKey: o.idempotencyKey })
    .catch(async (err: unknown) => {
      throw await toldInFlags(ctx, err, o);
    });
  if (ctx.json) return printJson(ctx.io, r.raw);
  if (ctx.quiet) return ctx.io.print(r.body.id);
  ctx.io.print(ctx.io.stdoutIsTTY ? `${r.body.id}  ${r.body.status}` : `${r.body.id}\t${r.body.status}`);
  if (r.headers.get('idempotent-replay') === 'true')
    ctx.io.info("Already sent with this --idempotency-key: this is the first send's answer; nothing was sent again.");
}
