import { Command, Option } from 'commander';
import { apiKey } from '../api-key.js';
import { examples, type Runner } from '../command.js';
import type { Context } from '../context.js';
import { CommandError } from '../errors.js';
import type { IO } from '../io.js';

/** What an application's SMTP settings want, for the local server the base URL points at (docs/smtp.md). */
export interface SmtpSettings {
  host: string;
  /** SMTP submission with STARTTLS; null when the server runs without it. */
  port: number | null;
  /** SMTP submission with implicit TLS ("SSL"); null when the server runs without it. */
  tls_port: number | null;
  /** Any username is taken; this one reads well in a settings file. */
  username: string;
  /** An API key with `emails:send`; null when this command was given none. */
  password: string | null;
  /** The certificate the server presents, for clients that verify it (null: made in memory, not on disk). */
  ca_cert: string | null;
  fingerprint_sha256: string;
  /** The sink, which catches anything from a client given its host and port (mail sent there skips the API's rules). */
  sink: string;
  /**
   * Whether the sink offers STARTTLS (`svc serve --smtp-starttls`): a client that upgrades whenever it is offered must
   * then trust the certificate.
   */
  sink_starttls: boolean;
}

export const SMTP_USERNAME = 'svc';

/**
 * The SMTP settings of the local server `ctx`'s base URL points at (as it registered itself), with `password`; null when
 * no local server is registered there, or it is of a version that does not say.
 */
export async function smtpSettings(ctx: Context, password: string | null): Promise<SmtpSettings | null> {
  const { url } = await ctx.baseUrl();
  const { findLocalServer } = await import('../../lib/local-servers.js');
  const smtp = findLocalServer(url, ctx.io.env)?.smtp;
  if (!smtp) return null;
  const at = (u: string | null) => (u ? new URL(u) : null);
  const starttls = at(smtp.submission);
  const tls = at(smtp.submissions);
  // A server bound to every address is reached on loopback, like its API.
  const host = (starttls ?? tls ?? new URL(smtp.sink)).hostname
    .replace(/^0\.0\.0\.0$/, '127.0.0.1')
    .replace(/^\[::\]$/, '[::1]');
  return {
    host,
    port: starttls && Number(starttls.port),
    tls_port: tls && Number(tls.port),
    username: SMTP_USERNAME,
    password,
    ca_cert: smtp.tls_cert,
    fingerprint_sha256: smtp.tls_fingerprint,
    sink: smtp.sink,
    sink_starttls: smtp.sink_starttls === true,
  };
}

/**
 * The settings as `NAME=value` lines for a `.env` file (the names most frameworks' examples use): SMTP_PORT is the
 * STARTTLS port (SMTP_SECURE=false: TLS after connecting, which SMTP_REQUIRE_TLS insists on), or the implicit TLS one
 * when the server has no STARTTLS port (SMTP_SECURE=true); SMTP_TLS_PORT the implicit TLS one; SMTP_CA_CERT the
 * certificate to trust, when it is a file.
 */
function envLines(s: SmtpSettings): string[] {
  return [
    `SMTP_HOST=${s.host}`,
    `SMTP_PORT=${s.port ?? s.tls_port}`,
    `SMTP_SECURE=${s.port === null}`,
    'SMTP_REQUIRE_TLS=true',
    ...(s.tls_port !== null ? [`SMTP_TLS_PORT=${s.tls_port}`] : []),
    `SMTP_USER=${s.username}`,
    `SMTP_PASS=${s.password ?? ''}`,
    ...(s.ca_cert ? [`SMTP_CA_CERT=${s.ca_cert}`] : []),
  ];
}

/**
 * The settings as label/value lines, with a note after some values on a terminal; piped, `label<TAB>value` lines and
 * nothing else. On stderr for a command whose stdout carries something else (`svc keys create --smtp`).
 */
export function printSmtpSettings(io: IO, s: SmtpSettings, where: 'stdout' | 'stderr' = 'stdout'): void {
  const rows: [string, string, string?][] = [
    ['host', s.host],
    ...(s.port !== null
      ? [['port', String(s.port), 'STARTTLS: "require TLS", not "SSL"'] as [string, string, string]]
      : []),
    ...(s.tls_port !== null
      ? [['tls port', String(s.tls_port), 'implicit TLS: "SSL"'] as [string, string, string]]
      : []),
    ['username', s.username, 'any username works'],
    s.password
      ? ['password', s.password]
      : ['password', '', 'an API key with emails:send: `svc keys create --scope emails:send --smtp`'],
    ['ca cert', s.ca_cert ?? '', s.ca_cert ? undefined : `made in memory; SHA-256 ${s.fingerprint_sha256}`],
  ];
  printSettingRows(io, rows, where);
}

/**
 * Settings as label/value rows (`svc smtp`, `svc mailbox`): on a terminal aligned, with a dimmed note after a value;
 * piped, `label<TAB>value` lines and nothing else.
 */
export function printSettingRows(
  io: IO,
  rows: [label: string, value: string, note?: string][],
  where: 'stdout' | 'stderr' = 'stdout',
): void {
  const tty = where === 'stderr' ? io.stderrIsTTY : io.stdoutIsTTY;
  const style = where === 'stderr' ? io.err : io.out;
  const width = Math.max(...rows.map(([label]) => label.length));
  for (const [label, value, note] of rows) {
    const line = tty
      ? `${style.bold(label.padEnd(width))}  ${value}${note ? `${value ? '  ' : ''}${style.dim(note)}` : ''}`
      : `${label}\t${value}`;
    if (where === 'stdout') io.print(line);
    else io.info(`  ${line}`);
  }
}

/** Says there is nothing to print: no local server there, or it has no submission. */
export function noSettings(url: string): CommandError {
  return new CommandError(
    `no local svc serve with SMTP submission is registered for ${url}`,
    'start one with `svc serve` (or point SVC_BASE_URL at the API of the one that runs), then run this again',
  );
}

export function smtpCommand(runner: Runner): Command {
  const cmd = new Command('smtp')
    .description(
      "Print the SMTP settings of a local server (`svc serve`) for an app's mail settings: host, ports, username, and the API key as the password",
    )
    .addOption(new Option('--env', 'print them as SMTP_HOST=… lines for a .env file'))
    .action((o: { env?: boolean }, c: Command) => runner(c, smtpRun, { env: Boolean(o.env) }));
  return examples(
    cmd,
    'svc smtp',
    'SVC_API_KEY=svc_test_… svc smtp --env >> .env',
    'svc keys create --name app --scope emails:send --smtp',
  );
}

export async function smtpRun(ctx: Context, o: { env: boolean }): Promise<void> {
  const s = await smtpSettings(ctx, (await apiKey(ctx).get()) ?? null);
  // A server run with both submission ports off has no settings to give.
  if (!s || (s.port === null && s.tls_port === null)) throw noSettings((await ctx.baseUrl()).url);
  const { io } = ctx;
  if (ctx.json) {
    io.print(JSON.stringify(s, null, 2));
    return;
  }
  if (o.env) {
    for (const line of envLines(s)) io.print(line);
    return;
  }
  printSmtpSettings(io, s);
  if (io.stderrIsTTY) {
    io.info(
      io.err.dim(
        `Mail sent this way goes through the API's rules (a verified From domain, the key's workspace). To only catch mail, point an app at the sink, ${s.sink}${s.sink_starttls ? ': it offers STARTTLS (--smtp-starttls), so a client that upgrades whenever it is offered must trust the TLS cert' : ', with its host and port alone: no TLS or login needed'}. docs/smtp.md has settings for nodemailer, Django, Laravel, Rails and Supabase.`,
      ),
    );
  }
}
