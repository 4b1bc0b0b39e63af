import { Command } from 'commander';
import type { CreateApiKeyRequest } from '../../../contract/keys.js';
import { apiKey } from '../../api-key.js';
import { examples, list, repeat, timestamp, type Runner } from '../../command.js';
import type { Context } from '../../context.js';
import { UsageError } from '../../errors.js';
import { printJson } from '../../output.js';

export interface KeysCreateOptions {
  name: string;
  scopes: string[];
  mode?: string;
  domain?: string;
  allowIps?: string[];
  expiresAt?: string;
  save?: boolean;
  /** Also print the SMTP settings of the local server, with the new key as the password (on stderr). */
  smtp?: boolean;
}

export function keysCreateCommand(runner: Runner): Command {
  const cmd = new Command('create')
    .description('Create an API key; it is printed once, on stdout')
    .requiredOption('--name <name>', 'what the key is for (1–128 characters)')
    .option(
      '--scope <scope>',
      'a scope, repeatable or comma-separated: emails:send, emails:read, domains:read, domains:write, …',
      list,
    )
    .option('--mode <mode>', 'test (never delivers mail; the default) or live')
    .option('--domain <id>', 'the key may send only from this domain (dom_…)')
    .option('--allow-ip <cidr>', 'an address or CIDR the key may be used from, repeatable', repeat)
    .option('--expires-at <time>', 'when the key stops working (ISO 8601)', timestamp('--expires-at'))
    .option('--save', "keep the key in this profile's credential store, so `svc emails send` needs no --api-key")
    .option('--smtp', "also print the local server's SMTP settings with this key as the password (as `svc smtp` does)")
    .action(
      (
        o: {
          name: string;
          scope?: string[];
          mode?: string;
          domain?: string;
          allowIp?: string[];
          expiresAt?: string;
          save?: boolean;
          smtp?: boolean;
        },
        c: Command,
      ) => {
        if (!o.scope?.length) throw new UsageError('give at least one --scope', 'e.g. --scope emails:send,emails:read');
        return runner(c, keysCreateRun, {
          name: o.name,
          scopes: o.scope,
          mode: o.mode,
          domain: o.domain,
          allowIps: o.allowIp,
          expiresAt: o.expiresAt,
          save: o.save,
          smtp: o.smtp,
        });
      },
    );
  return examples(
    cmd,
    'svc keys create --name ci --scope emails:send --save',
    'svc keys create --name app --scope emails:send --smtp',
    'svc keys create --name prod --scope emails:send,emails:read --mode live --domain dom_… --allow-ip 203.0.113.0/24',
  );
}

export async function keysCreateRun(ctx: Context, o: KeysCreateOptions): Promise<void> {
  const client = await ctx.client();
  const r = await client.call('createApiKey', {
    body: {
      name: o.name,
      // Passed on as typed: the service checks them against the contract and names a wrong one (422).
      scopes: o.scopes as CreateApiKeyRequest['scopes'],
      mode: o.mode as CreateApiKeyRequest['mode'],
      domain_id: o.domain,
      ip_allowlist: o.allowIps,
      expires_at: o.expiresAt,
    },
  });
  const key = r.body;
  if (o.save) {
    const instance = r.headers.instance;
    await apiKey(ctx).save(
      {
        base_url: client.baseUrl,
        id: key.id,
        prefix: key.prefix,
        mode: key.mode,
        ...(instance ? { sandbox_instance: instance } : {}),
      },
      key.key,
    );
  }
  if (ctx.json) printJson(ctx.io, r.raw);
  else ctx.io.print(key.key);
  // -q prints the key, not its id: the key is shown this once, the id is in `svc keys list`.
  if (ctx.quiet) return;
  const { io } = ctx;
  io.info(
    `${io.err.yellow('warning:')} this is the only time the key is shown; store it now (a secret store, your CI's secrets).`,
  );
  io.info(`Created ${key.id} "${key.name}" (${key.mode}; ${key.scopes.join(', ')}).`);
  if (o.save) io.info(`Saved in profile ${ctx.profile}: \`svc emails send\` uses it without --api-key.`);
  if (o.smtp) await smtpLines(ctx, key.key, key.scopes);
}

/** `--smtp`: the settings an app's SMTP configuration wants, on stderr (stdout keeps the key alone). */
async function smtpLines(ctx: Context, key: string, scopes: string[]): Promise<void> {
  const { io } = ctx;
  const { smtpSettings, printSmtpSettings } = await import('../smtp.js');
  if (!scopes.includes('emails:send')) {
    io.info(`${io.err.yellow('warning:')} this key lacks emails:send, so SMTP submission refuses it; add that scope.`);
  }
  const settings = await smtpSettings(ctx, key);
  if (!settings) {
    io.info(
      `SMTP: log in with any username and this key as the password; no local svc serve is registered for ${(await ctx.baseUrl()).url}, so its host and ports are not known here.`,
    );
    return;
  }
  io.info('SMTP settings (docs/smtp.md):');
  printSmtpSettings(io, settings, 'stderr');
}
