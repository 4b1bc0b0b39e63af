// The checks of a caught message (docs/checks.md): the one module that computes a report. Core hands it a message
// (core/checks.ts keeps the report with the message); it runs the checks that need no network on their thread
// (offline-runner.ts) while authentication, spam and then links wait on the network, and puts their results together.
import {
  CHECK_IDS,
  type CheckFinding,
  type CheckId,
  type MessageCheck,
  type MessageChecks,
  SEVERITIES,
} from '../../contract/checks.js';
import { iso } from '../../lib/clock.js';
import type { Logger } from '../../lib/log.js';
import type { CheckDns, CheckInput, Checker } from '../core/checks.js';
import { authenticationCheck } from './authentication.js';
import { loadMailauth } from './mailauth.js';
import { createLinkChecker } from './links.js';
import type { FoundUrl } from './markup.js';
import { type SpamdAddress, askSpamd, spamFindings } from './spam.js';
import type { Outcome } from './outcome.js';
import { createOfflineRunner, failureOf, unfinished } from './offline-runner.js';

export { parseSpamd, type SpamdAddress } from './spam.js';

export interface CheckRunnerOptions {
  log: Logger;
  /** A SpamAssassin spamd for the spam check; null: skipped. */
  spamd: SpamdAddress | null;
  /** Let the links check reach loopback and private addresses. */
  privateLinks: boolean;
  /** How long a link has to answer (default 10 s). */
  linkTimeoutMs?: number;
  /** How long a message's links check may take (default 30 s). */
  linksDeadlineMs?: number;
  /** How long a message's offline checks may take on their thread (default 10 s). */
  checksDeadlineMs?: number;
  /** The heap each offline checks' thread may grow to, in MB (default 256). */
  checksMemoryMb?: number;
  /** The DNS server links are looked up with (`--dns system --dns-server`); the system's lookup without. */
  dnsServer?: string | null;
  /** The service clock (ms): reports' times, and how long link answers are kept. */
  now(): number;
  /** Run the offline checks on a thread of their own (default true). */
  thread?: boolean;
}

/** A check's status: its worst finding (`ok` with none). */
function statusOf(findings: CheckFinding[]): MessageCheck['status'] {
  return SEVERITIES.find((s) => findings.some((f) => f.severity === s)) ?? 'ok';
}

const SEVERITY_ORDER = (f: CheckFinding) => SEVERITIES.indexOf(f.severity);

/** The report of a message's checks, each in its place, with its summary. */
export function reportOf(messageId: string, checkedAt: string, checks: MessageCheck[]): MessageChecks {
  const sorted = [...checks].sort((a, b) => CHECK_IDS.indexOf(a.id) - CHECK_IDS.indexOf(b.id));
  const count = (s: CheckFinding['severity']) =>
    sorted.reduce((n, c) => n + c.findings.filter((f) => f.severity === s).length, 0);
  return {
    message_id: messageId,
    checked_at: checkedAt,
    summary: {
      errors: count('error'),
      warnings: count('warning'),
      notices: count('notice'),
      score: sorted.find((c) => c.id === 'html-compatibility')?.score ?? null,
    },
    checks: sorted,
  };
}

export function createCheckRunner(opts: CheckRunnerOptions): Checker & { close(): Promise<void> } {
  const offline = createOfflineRunner({
    thread: opts.thread ?? true,
    log: opts.log,
    deadlineMs: opts.checksDeadlineMs,
    memoryMb: opts.checksMemoryMb,
  });
  let closed = false;
  const links = createLinkChecker({
    privateLinks: opts.privateLinks,
    timeoutMs: opts.linkTimeoutMs,
    deadlineMs: opts.linksDeadlineMs,
    now: opts.now,
    dnsServer: opts.dnsServer,
  });

  const checked = (id: CheckId, findings: CheckFinding[], extra: Partial<MessageCheck> = {}): MessageCheck => ({
    id,
    status: statusOf(findings),
    checked_at: iso(opts.now()),
    ...extra,
    findings: [...findings].sort((a, b) => SEVERITY_ORDER(a) - SEVERITY_ORDER(b)),
  });
  const skipped = (id: CheckId, reason: string): MessageCheck => ({
    id,
    status: 'skipped',
    reason,
    checked_at: iso(opts.now()),
    findings: [],
  });
  // Checks that could not run or finish for a passing reason (spamd or DNS not answering, a check that failed or ran out
  // of time): a report with one is answered but not kept, so the next request makes it again.
  const passing = new WeakSet<MessageCheck>();
  const notNow = (c: MessageCheck) => {
    passing.add(c);
    return c;
  };
  // A check that failed or ran out of time on the message says so with a finding, not by being skipped: such mail is
  // not let through a `--fail-on warning` gate unchecked.
  const failed = (id: CheckId, err: unknown, what = 'The check') =>
    notNow(checked(id, [unfinished(what, failureOf(err))]));
  const findingLinks = "Finding the message's links";
  const fromOutcome = <T>(id: CheckId, o: Outcome<T>, make: (v: T) => MessageCheck) =>
    'ok' in o ? make(o.ok) : notNow(checked(id, [unfinished('The check', o)]));
  const outcome = (report: MessageChecks) => ({ report, complete: !report.checks.some((c) => passing.has(c)) });

  async function linksCheck(input: CheckInput, urls: FoundUrl[], refresh: boolean): Promise<MessageCheck> {
    try {
      const fromDomain = /@([^@>\s]+)>?\s*$/.exec(input.from ?? '')?.[1]?.toLowerCase() ?? null;
      const out = await links.check(urls, { live: input.live, fromDomain, tracked: new Set(input.tracked), refresh });
      if (out.skipped !== null) return { ...skipped('links', out.skipped), links: out.links };
      const c = checked('links', out.findings, { links: out.links });
      return out.inTime ? c : notNow(c);
    } catch (err) {
      return failed('links', err);
    }
  }

  async function authentication(input: CheckInput, dns: CheckDns): Promise<MessageCheck> {
    try {
      const fromDomain = /@([^@>\s]+)>?\s*$/.exec(input.from ?? '')?.[1]?.toLowerCase() ?? null;
      const out = await authenticationCheck(
        {
          raw: input.raw,
          mailFrom: input.envelope.mailFrom,
          clientIp: input.envelope.clientIp,
          helo: input.envelope.helo,
          fromDomain,
        },
        dns.resolve,
        dns.name,
      );
      if (out.skipped !== null) return notNow(skipped('authentication', out.skipped));
      return checked('authentication', out.findings, { results: out.results });
    } catch (err) {
      return failed('authentication', err);
    }
  }

  async function spam(input: CheckInput): Promise<MessageCheck> {
    const spamd = opts.spamd;
    if (!spamd) {
      return skipped(
        'spam',
        'No spamd: start svc serve with --spamd HOST:PORT (a SpamAssassin spamd) to score messages.',
      );
    }
    try {
      const v = await askSpamd(spamd, input.raw);
      return checked('spam', spamFindings(v), { spam_score: v.score, spam_threshold: v.threshold });
    } catch (err) {
      const e = err as NodeJS.ErrnoException;
      return notNow(skipped('spam', `spamd at ${spamd.host}:${spamd.port} did not answer: ${e.code ?? e.message}.`));
    }
  }

  return {
    /** Every check of a message; `complete` false when one could not run for a passing reason. */
    async run(input: CheckInput, dns: CheckDns) {
      const checkedAt = iso(opts.now());
      const network = Promise.all([authentication(input, dns), spam(input)]);
      const { messageId, raw: _raw, envelope: _e, live: _l, tracked: _t, ...offlineInput } = input;
      let result;
      try {
        result = await offline.run(offlineInput);
      } catch (err) {
        const noHtml = 'The message has no HTML part.';
        return outcome(
          reportOf(messageId, checkedAt, [
            ...(await network),
            input.html === null ? skipped('html-compatibility', noHtml) : failed('html-compatibility', err),
            failed('content', err),
            input.html === null ? skipped('accessibility', noHtml) : failed('accessibility', err),
            failed('links', err, findingLinks),
          ]),
        );
      }
      const noHtml = 'The message has no HTML part: there is no markup to check.';
      const compatibility = result.compatibility
        ? fromOutcome('html-compatibility', result.compatibility, (c) =>
            checked('html-compatibility', c.findings, {
              score: c.score,
              data_version: c.dataVersion,
              clients: c.clients,
            }),
          )
        : skipped('html-compatibility', noHtml);
      const content = fromOutcome('content', result.content, (f) => checked('content', f));
      const accessibility = result.accessibility
        ? fromOutcome('accessibility', result.accessibility, (f) => checked('accessibility', f))
        : skipped('accessibility', noHtml);
      const [linksResult, [auth, spamResult]] = await Promise.all([linksCheck(input, result.urls, false), network]);
      return outcome(
        reportOf(messageId, checkedAt, [compatibility, linksResult, auth, content, accessibility, spamResult]),
      );
    },

    /** The report with its links check run again (the links asked again, not taken from what is kept). */
    async refreshLinks(report: MessageChecks, input: CheckInput) {
      const { messageId: _m, raw: _r, envelope: _e, live: _l, tracked: _t, ...offlineInput } = input;
      let urls: FoundUrl[];
      try {
        urls = (await offline.run({ ...offlineInput, only: 'urls' })).urls;
      } catch (err) {
        const others = report.checks.filter((c) => c.id !== 'links');
        return outcome(reportOf(report.message_id, report.checked_at, [...others, failed('links', err, findingLinks)]));
      }
      const fresh = await linksCheck(input, urls, true);
      return outcome(
        reportOf(report.message_id, report.checked_at, [...report.checks.filter((c) => c.id !== 'links'), fresh]),
      );
    },

    warm() {
      if (closed) return;
      // The threads first: they load on the other core while this one loads mailauth and undici.
      void offline.warm();
      void loadMailauth().catch(() => {});
      links.warm();
    },

    async close(): Promise<void> {
      closed = true;
      await offline.close();
      await links.close();
    },
  };
}
export type CheckRunner = ReturnType<typeof createCheckRunner>;
