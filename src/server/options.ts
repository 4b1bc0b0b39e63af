// `svc serve`'s options as the server takes them (the command's flags are these: cli/serve/serve.ts), and the
// checks that refuse a start before anything opens.
import type { TimeSources } from '../lib/clock.js';
import type { Logger } from '../lib/log.js';
import { isLoopbackHost } from '../lib/loopback.js';
import { DEFAULT_MAX_MESSAGES } from '../contract/inbox.js';
import { parseSpamd } from './checks/spam.js';
import type { BodyLimits } from './http/body.js';
import type { HttpTimeouts } from './http/server.js';
import type { ComposerOptions } from './outbound/compose.js';
import { type RelayConfig, redactRelayUrl, relayPatternProblem, relayUrlProblem } from './core/rules/relay.js';

export interface ServeOptions {
  host?: string;
  port?: number;
  smtpPort?: number;
  /**
   * SMTP submission with STARTTLS (`--submission-port`): null turns it off, 0 takes a free port; unset, 2587. A port
   * that is taken, the default one too, stops the start.
   */
  submissionPort?: number | null;
  /** SMTP submission with implicit TLS (`--submissions-port`), like submissionPort; unset, 2465. */
  submissionsPort?: number | null;
  /** Where mail clients read caught mail (`--pop3-port`, `--imap-port`), like submissionPort; unset, 1110 and 1143. */
  pop3Port?: number | null;
  imapPort?: number | null;
  /** How long a POP3 or IMAP client may stay silent (default: the least each RFC allows, 10 and 30 minutes). */
  mailboxIdleTimeoutMs?: number;
  /**
   * Whether the sink offers STARTTLS (`--smtp-starttls`; default false). Off, it takes mail from a client given its host
   * and port alone, as mail catchers do: nodemailer, Go's net/smtp and PHP's mailers upgrade whenever STARTTLS is
   * offered, and then fail on a certificate they were not told to trust.
   */
  smtpStarttls?: boolean;
  /** The certificate (and key) of SMTP TLS; unset, one made for localhost and kept in the data directory. */
  smtpTlsCert?: string;
  smtpTlsKey?: string;
  dataDir?: string;
  memory?: boolean;
  /** Make the data directory a new admin token, ending every inbox session signed in with the last one. */
  rotateAdminToken?: boolean;
  clock?: 'real' | 'manual';
  /** Where the real clock reads the time (tests step its wall clock back); this machine's by default. */
  time?: TimeSources;
  /** Where domain records are looked up: the sandbox zone (default) or real DNS. */
  dns?: 'sandbox' | 'system';
  /** Resolvers for `dns: 'system'` (`HOST[:PORT]`); the system's when empty. */
  dnsServer?: string[];
  /** How long `dns: 'system'` waits for each lookup before it counts as failed (default 5 s). */
  dnsTimeoutMs?: number;
  openSignup?: boolean;
  /** The demo account (default true); a seed file replaces it unless the file says `demo_account: true`. */
  seed?: boolean;
  /**
   * A seed file (`--seed FILE`, SVC_SEED): YAML or JSON declaring what must exist on every start (contract/seed-file.ts),
   * read and checked before anything opens (a ServeUsageError naming the file, the line and the field).
   */
  seedFile?: string;
  /** The same declared state as an object (`startSandbox({ seed })`), checked the same way; with seedFile, refused. */
  seedObject?: unknown;
  sendRate?: number;
  /** The largest message the SMTP sink takes, in bytes (default 50 MB; 552 beyond it). */
  maxMessageSize?: number;
  /** SMTP connections open at once (default 100; 421 beyond them). */
  smtpMaxConnections?: number;
  /**
   * The relay that releases and relay rules send caught mail through (`--relay-url`, or SVC_RELAY_URL):
   * `smtp[s]://user:pass@host:port`, with `?tls=skip-verify` for a self-signed one.
   */
  relayUrl?: string;
  /** The envelope sender of what the relay sends (`--relay-from`); unset, the caught message's own. */
  relayFrom?: string;
  /** Whom a release or relay rule may reach (`--relay-allow`, globs: core/rules/relay.ts); unset, anyone. */
  relayAllow?: string[];
  /** Recipients live mail is relayed to as it is caught (`--relay-matching`, globs); unset, none. */
  relayMatching?: string[];
  /**
   * `--relay URL`, kept from before releases: `relayUrl` with every live message relayed as it is caught (a relay
   * rule matching every recipient).
   */
  relay?: string;
  /** Operator patterns (regular expressions) the abuse filter refuses with 451. */
  blockPattern?: string[];
  tlsCert?: string;
  tlsKey?: string;
  allowInsecureHttp?: boolean;
  trustProxy?: boolean;
  /**
   * Serve `GET /metrics` to anyone who can reach the API (`--metrics-open`), not only with the admin token: for a
   * Prometheus on the same machine. Refused unless the server binds a loopback host.
   */
  metricsOpen?: boolean;
  /** Compose and sign messages on a worker thread (default) rather than on the main event loop. */
  composeThread?: boolean;
  /** Memory limits of the compose thread (the default suits every message the API accepts). */
  composeResourceLimits?: ComposerOptions['resourceLimits'];
  json?: boolean;
  log?: Logger;
  /** The level of the line each request is logged with (default `info`; `svc serve` on a terminal: `debug`). */
  requestLog?: 'debug' | 'info';
  /** How long headers and whole requests may take to arrive (defaults: 10 s, 60 s). */
  httpTimeouts?: HttpTimeouts;
  /** How long a webhook receiver has to answer an attempt (default 10 s). */
  webhookTimeoutMs?: number;
  /** Body bytes buffered across all requests, and how long a body may stall (defaults: 48 MiB, 15 s). */
  bodyLimits?: BodyLimits;
  /** The largest the database may grow, in bytes; writes beyond it are refused as on a full disk (507). */
  maxDbSize?: number;
  /** Bytes of messages in delivery at once, from their claim to the sink's answer (default 48 MiB). */
  deliveryBudgetBytes?: number;
  /** Caught messages kept, the newest (default 10,000); null keeps them all. */
  maxMessages?: number | null;
  /** Milliseconds of service clock after which caught mail and `/v1` messages and events go (default: null, none). */
  maxAge?: number | null;
  /** A SpamAssassin spamd (`HOST:PORT`) for the spam check of caught mail; without it that check is skipped. */
  spamd?: string;
  /** Let the links check reach loopback and private addresses (default: named, not checked). */
  checkPrivateLinks?: boolean;
  /**
   * Let attachment urls lead to private ranges: RFC 1918, unique-local IPv6, CGNAT (default: refused). Link-local and
   * metadata addresses, and this server's own ports, stay refused.
   */
  allowPrivateAttachmentUrls?: boolean;
  /** How long a link has to answer the links check (default 10 s). */
  linkTimeoutMs?: number;
  /** How long one message's links check may take in all (default 30 s): links not answered by then are named. */
  linksDeadlineMs?: number;
  /** How long one message's offline checks may take on their thread before it is ended (default 10 s). */
  checksDeadlineMs?: number;
  /** The heap each offline checks' thread may grow to, in MB (default 256). */
  checksMemoryMb?: number;
  /** Run the offline checks on a thread of their own (default) rather than on the main event loop. */
  checksThread?: boolean;
}

/**
 * The DNS server that the links check and attachment urls look the real web up with: the first of `--dns system`'s
 * (`--dns-server`), or null for the system's lookup (the sandbox zone holds only domains' records).
 */
export const webDnsServer = (opts: Pick<ServeOptions, 'dns' | 'dnsServer'>): string | null =>
  opts.dns === 'system' ? (opts.dnsServer?.[0] ?? null) : null;

/** A usage problem with the options: the CLI shows it and exits 2. */
export class ServeUsageError extends Error {}

/**
 * The relay the options describe, or null for none; a ServeUsageError for a bad URL or pattern (never quoting the
 * URL's password). `--relay URL` is `--relay-url URL --relay-matching '*'`; with both, `--relay-url` names the relay.
 */
export function relaySettings(opts: ServeOptions): RelayConfig | null {
  const url = opts.relayUrl ?? opts.relay;
  const matching = [...(opts.relayMatching ?? []), ...(opts.relay ? ['*'] : [])];
  const allow = opts.relayAllow ?? [];
  if (!url) {
    if (matching.length || allow.length || opts.relayFrom) {
      throw new ServeUsageError(
        `${opts.relayMatching?.length ? '--relay-matching' : opts.relayAllow?.length ? '--relay-allow' : '--relay-from'} ` +
          'needs a relay: give --relay-url smtp://user:pass@host:port (or SVC_RELAY_URL).',
      );
    }
    return null;
  }
  const problem = relayUrlProblem(url);
  if (problem) throw new ServeUsageError(`--relay-url ${redactRelayUrl(url)}: ${problem}.`);
  for (const [flag, patterns] of [
    ['--relay-allow', allow],
    ['--relay-matching', opts.relayMatching ?? []],
  ] as const) {
    for (const p of patterns) {
      const bad = relayPatternProblem(p);
      if (bad) throw new ServeUsageError(`${flag}: ${bad}.`);
    }
  }
  if (opts.relayFrom !== undefined && !/^[^\s@<>]+@[^\s@<>]+$/.test(opts.relayFrom)) {
    throw new ServeUsageError(`--relay-from takes an email address (got ${JSON.stringify(opts.relayFrom)}).`);
  }
  return { url, shown: redactRelayUrl(url), from: opts.relayFrom ?? null, allow, matching: [...new Set(matching)] };
}

/** The options a start needs settled first, or the ServeUsageError that says which flags do not go together. */
export function checkOptions(opts: ServeOptions) {
  const host = opts.host ?? '127.0.0.1';
  const tls = Boolean(opts.tlsCert && opts.tlsKey);
  if ((opts.tlsCert && !opts.tlsKey) || (!opts.tlsCert && opts.tlsKey)) {
    throw new ServeUsageError('--tls-cert and --tls-key go together; give both.');
  }
  if (!isLoopbackHost(host) && !tls && !opts.allowInsecureHttp) {
    throw new ServeUsageError(
      `Refusing to serve plain HTTP on ${host}, which is not a loopback address: give --tls-cert and --tls-key, ` +
        'or --allow-insecure-http if you really mean it.',
    );
  }
  if (opts.metricsOpen && !isLoopbackHost(host)) {
    throw new ServeUsageError(
      `Refusing --metrics-open on ${host}, which is not a loopback address: it would show the server's metrics to anyone ` +
        'on the network. Bind a loopback host (--host 127.0.0.1), or scrape /metrics with the admin token as the bearer.',
    );
  }
  const retention = {
    maxMessages: opts.maxMessages === undefined ? DEFAULT_MAX_MESSAGES : opts.maxMessages,
    maxAge: opts.maxAge ?? null,
  };
  if (retention.maxMessages !== null && !(Number.isInteger(retention.maxMessages) && retention.maxMessages >= 1)) {
    throw new ServeUsageError('--max-messages must be a whole number of at least 1, or off.');
  }
  if (retention.maxAge !== null && !(Number.isInteger(retention.maxAge) && retention.maxAge >= 1000)) {
    throw new ServeUsageError('--max-age must be at least one second, or off.');
  }
  const relay = relaySettings(opts);
  const spamd = opts.spamd === undefined ? null : parseSpamd(opts.spamd);
  if (opts.spamd !== undefined && !spamd) {
    throw new ServeUsageError(`--spamd takes HOST:PORT, such as 127.0.0.1:783 (got ${JSON.stringify(opts.spamd)}).`);
  }
  return { host, tls, retention, spamd, relay };
}
