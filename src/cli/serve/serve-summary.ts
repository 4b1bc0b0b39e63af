// What `svc serve` says on a terminal once it is ready: where everything is, what it keeps, and what to run next.
import type { ReadyLine } from '../../contract/seed.js';
import { DEFAULT_BASE_URL } from '../config.js';
import type { IO } from '../io.js';

/**
 * The ready line for a person, on the terminal: on stdout in its place when stdout is one, else on stderr (stdout then
 * keeps only the line itself).
 */
export function printSummary(
  io: IO,
  ready: ReadyLine,
  o: { dataDir: string | undefined; registered: boolean; sinkStarttls: boolean; where: 'stdout' | 'stderr' },
): void {
  const { bold, dim } = o.where === 'stdout' ? io.out : io.err;
  const row = (label: string, value: string) => `  ${bold(label.padEnd(9))} ${value}`;
  const submit = [
    ready.submission && `${ready.submission} (STARTTLS)`,
    ready.submissions && `${ready.submissions} (TLS)`,
  ].filter(Boolean);
  const lines = [
    '',
    `${bold('svc serve')} is running, ${o.dataDir ? `its data in ${o.dataDir}` : 'in memory (nothing is kept)'}.`,
    '',
    row('Inbox', ready.inbox),
    row('API', ready.api),
    row(
      'SMTP',
      `${ready.smtp}  ${dim(`the sink: catches any mail${o.sinkStarttls ? '; offers STARTTLS (--smtp-starttls)' : ', no TLS or login needed'}`)}`,
    ),
    ...(o.sinkStarttls ? [`  ${' '.repeat(9)} ${dim(SINK_STARTTLS_NOTE)}`] : []),
    // `svc smtp` prints the settings an app wants.
    ...(submit.length
      ? [row('Submit', `${submit.join(', ')}  ${dim('any username, an API key as the password: svc smtp')}`)]
      : []),
    ...(submit.length || o.sinkStarttls
      ? [row('TLS cert', ready.smtp_tls.cert ?? `made in memory, SHA-256 ${ready.smtp_tls.fingerprint_sha256}`)]
      : []),
    ...(ready.pop3 || ready.imap
      ? [
          row(
            'Mailbox',
            `${[ready.imap, ready.pop3].filter(Boolean).join(', ')}  ${dim('for mail clients; an API key or the admin token as the password: svc mailbox')}`,
          ),
        ]
      : []),
    ...(ready.relay
      ? [
          row(
            'Relay',
            `${ready.relay.url}  ${dim(
              `releases to ${ready.relay.allow.length ? ready.relay.allow.join(', ') : 'anyone'}` +
                (ready.relay.matching.length ? `; relays live mail to ${ready.relay.matching.join(', ')}` : ''),
            )}`,
          ),
        ]
      : []),
    row('Keeps', keeps(ready.retention)),
  ];
  const seed = ready.seed;
  if (seed) {
    lines.push(row('Login', `${seed.email}  password ${seed.password}`));
    lines.push(row('Test key', seed.api_key_test ?? 'revoked (svc keys create makes another)'));
  }
  lines.push('', ...tryNext(ready, o.registered), dim('Ctrl-C stops it.'), '');
  for (const line of lines) {
    if (o.where === 'stdout') io.print(line);
    else io.info(line);
  }
}

/**
 * Who meets the sink's STARTTLS: clients that upgrade whenever it is offered and verify the certificate, which then fail
 * unless they trust it.
 */
const SINK_STARTTLS_NOTE =
  'STARTTLS: clients that upgrade whenever it is offered (nodemailer, Go and PHP mailers) must trust the TLS cert';

/** What the server keeps, in words: "the newest 10,000 caught messages; /v1 messages and events until a reset". */
function keeps(r: ReadyLine['retention']): string {
  const age = r.max_age_seconds == null ? null : durationWords(r.max_age_seconds);
  const caught =
    r.max_messages == null
      ? 'every caught message'
      : `the newest ${r.max_messages.toLocaleString('en-US')} caught messages`;
  return age == null
    ? `${caught}; /v1 messages and events until a reset`
    : `${caught}, none older than ${age}; /v1 messages and events for ${age}`;
}

/** 604800 → "7 days", 5400 → "90 minutes": the largest unit that divides the duration. */
function durationWords(seconds: number): string {
  const units: [string, number][] = [
    ['day', 86_400],
    ['hour', 3600],
    ['minute', 60],
    ['second', 1],
  ];
  const [name, size] = units.find(([, size]) => seconds % size === 0)!;
  const n = seconds / size;
  return `${n.toLocaleString('en-US')} ${name}${n === 1 ? '' : 's'}`;
}

/**
 * What to run next, exactly as it works from another terminal: with SVC_BASE_URL when this server is not where svc
 * looks by default (a server bound to every address is reached on loopback), and the admin token only when this
 * server could not register itself, since the client finds it in the registry otherwise.
 */
function tryNext(ready: ReadyLine, registered: boolean): string[] {
  const api = ready.api.replace('://0.0.0.0:', '://127.0.0.1:').replace('://[::]:', '://[::1]:');
  const base = api === DEFAULT_BASE_URL ? '' : `SVC_BASE_URL=${api} `;
  const inbox = `${base}${registered ? '' : `SVC_ADMIN_TOKEN=${ready.admin_token} `}svc inbox`;
  const seed = ready.seed;
  if (seed?.api_key_test) {
    return [
      `Try: ${base}SVC_API_KEY=${seed.api_key_test} svc emails send --from hello@${seed.domain} --to you@example.org --subject Hello --text 'Your code is 482913'`,
      `Then: ${inbox}`,
    ];
  }
  if (seed) return [`Try: ${base}svc login --email ${seed.email}`];
  return [`Try: ${inbox} --follow`];
}
