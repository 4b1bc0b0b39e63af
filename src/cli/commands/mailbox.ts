// `svc mailbox`: the settings a mail client (Thunderbird, Apple Mail, Outlook, a terminal client) needs to read the
// mail a local server caught, over IMAP or POP3 (docs/mailbox.md). The server is the one the base URL points at, as it
// registered itself; the password is the run's API key (that key's workspace) or, with --admin, the admin token (every
// workspace).
import { Command, Option } from 'commander';
import { apiKey } from '../api-key.js';
import { examples, type Runner } from '../command.js';
import type { Context } from '../context.js';
import { CommandError } from '../errors.js';
import { printSettingRows } from './smtp.js';

/** What a mail client's account settings want. */
export interface MailboxSettings {
  host: string;
  /** IMAP's port (STARTTLS offered, plain login taken); null when the server runs without it. */
  imap_port: number | null;
  /** POP3's port (STLS offered, plain login taken); null when the server runs without it. */
  pop3_port: number | null;
  /** Any username is taken; this one reads well in a client's settings. */
  username: string;
  /** An API key (its workspace's mail) or the admin token (every workspace's); null when this run has neither. */
  password: string | null;
  /** Whose mail the password opens. */
  sees: 'workspace' | 'all' | null;
  /** The certificate STARTTLS presents (null: made in memory), for a client told to verify it. */
  ca_cert: string | null;
}

export function mailboxCommand(runner: Runner): Command {
  const cmd = new Command('mailbox')
    .description(
      'Print the IMAP and POP3 settings of a local server (`svc serve`) for a mail client: host, ports, username, and an API key (or the admin token) as the password',
    )
    .addOption(
      new Option('--admin', 'use the admin token as the password: one folder per workspace, and all mail in INBOX'),
    )
    .action((o: { admin?: boolean }, c: Command) => runner(c, mailboxRun, { admin: Boolean(o.admin) }));
  return examples(cmd, 'svc mailbox', 'svc mailbox --admin', 'SVC_API_KEY=svc_test_… svc mailbox --json');
}

export async function mailboxRun(ctx: Context, o: { admin: boolean }): Promise<void> {
  const { url } = await ctx.baseUrl();
  const { findLocalServer } = await import('../../lib/local-servers.js');
  const server = findLocalServer(url, ctx.io.env);
  const mailbox = server?.mailbox;
  if (!server || !mailbox || (!mailbox.imap && !mailbox.pop3)) {
    throw new CommandError(
      `no local svc serve with IMAP or POP3 is registered for ${url}`,
      'start one with `svc serve` (its --imap-port and --pop3-port are on unless turned off), or point SVC_BASE_URL at the API of the one that runs',
    );
  }
  const at = (u: string | null) => (u ? new URL(u) : null);
  const imap = at(mailbox.imap);
  const pop3 = at(mailbox.pop3);
  // A server bound to every address is reached on loopback, like its API.
  const host = (imap ?? pop3)!.hostname.replace(/^0\.0\.0\.0$/, '127.0.0.1').replace(/^\[::\]$/, '[::1]');
  const key = o.admin ? server.admin_token : ((await apiKey(ctx).get()) ?? null);
  const s: MailboxSettings = {
    host,
    imap_port: imap && Number(imap.port),
    pop3_port: pop3 && Number(pop3.port),
    username: 'svc',
    password: key,
    sees: key === null ? null : o.admin ? 'all' : 'workspace',
    ca_cert: server.smtp?.tls_cert ?? null,
  };
  const { io } = ctx;
  if (ctx.json) {
    io.print(JSON.stringify(s, null, 2));
    return;
  }
  const rows: [string, string, string?][] = [
    ['host', s.host],
    ...(s.imap_port !== null
      ? [['imap port', String(s.imap_port), 'security: none (or STARTTLS)'] as [string, string, string]]
      : []),
    ...(s.pop3_port !== null
      ? [['pop3 port', String(s.pop3_port), 'security: none (or STARTTLS)'] as [string, string, string]]
      : []),
    ['username', s.username, 'any username works'],
    s.password
      ? [
          'password',
          s.password,
          s.sees === 'all' ? 'the admin token: every workspace' : "an API key: its workspace's mail",
        ]
      : ['password', '', 'an API key of the workspace (SVC_API_KEY, --api-key), or --admin for the admin token'],
    ['auth', 'normal password', 'plain login; STARTTLS needs the TLS cert trusted'],
  ];
  printSettingRows(io, rows);
  if (io.stderrIsTTY) {
    io.info(
      io.err.dim(
        'Thunderbird: Account Settings → Add Mail Account → Configure manually. Apple Mail: Mail → Add Account → Other Mail Account. Outlook: Add account → Advanced → IMAP. docs/mailbox.md has each step.',
      ),
    );
  }
}
