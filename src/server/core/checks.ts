// The checks of caught mail, kept: a message's report is made the first time it is asked for (by the checks module,
// server/checks, which the composition root hands in as the Checker) and kept with the message, which takes it along
// when it goes; one a check of which could not run for the moment is made again next time. `refresh=links` runs the
// links check again (docs/checks.md).
import type { MessageChecks } from '../../contract/checks.js';
import type { CheckStore } from '../store/checks.js';
import type { EmailStore } from '../store/emails.js';
import type { InboxStore } from '../store/inbox.js';
import type { Resolver } from './deps.js';
import { viewSource } from './rules/caught-body.js';
import { fail } from './errors.js';
import type { Tracking } from './tracking.js';

/** A caught message as the checks read it. */
export interface CheckInput {
  /** The caught message (`eml_…`). */
  messageId: string;
  raw: Buffer;
  /** The HTML as its author wrote it (click tracking undone, the open pixel out); null without an HTML part. */
  html: string | null;
  /** The size of the HTML as it was sent, in bytes (what Gmail measures). */
  sentHtmlBytes: number | null;
  text: string | null;
  subject: string | null;
  /** The From field as written. */
  from: string | null;
  headers: { name: string; value: string }[];
  /** The envelope's MAIL FROM, and the SMTP client's address and HELO/EHLO name. */
  envelope: { mailFrom: string | null; clientIp: string | null; helo: string | null };
  /** Live mail (a `/v1` message sent with a live key); false for test mail; null for mail from another program. */
  live: boolean | null;
  /** The URLs the service rewrote for click tracking, as their authors wrote them. */
  tracked: string[];
}

/** The DNS the authentication check looks records up in: the sandbox zone or real DNS. */
export interface CheckDns {
  name: 'sandbox' | 'system';
  resolve(name: string, rrtype: string): Promise<unknown>;
}

/**
 * A report as the checker made it; `complete` false when a check could not run or finish for a passing reason (spamd or
 * DNS not answering, a check that failed or ran out of time, links not answered in time): such a report is answered,
 * not kept.
 */
export interface CheckedReport {
  report: MessageChecks;
  complete: boolean;
}

/** What computes reports (server/checks). */
export interface Checker {
  run(input: CheckInput, dns: CheckDns): Promise<CheckedReport>;
  refreshLinks(report: MessageChecks, input: CheckInput): Promise<CheckedReport>;
  /** Loads, in the background, what a first report would load on its way. */
  warm(): void;
}

export interface ChecksDeps {
  store: CheckStore;
  inbox: InboxStore;
  tracking: Pick<Tracking, 'untrack'>;
  emails: Pick<EmailStore, 'get'>;
  resolver: Resolver;
  checker?: Checker;
}

export function createChecks(deps: ChecksDeps) {
  // One computation per message at a time: a second request while the first is running waits for the same report.
  const running = new Map<string, Promise<MessageChecks>>();

  async function inputOf(id: string): Promise<CheckInput> {
    const missing = () => fail('not_found', 'No caught message has this id; `svc inbox` lists them.');
    const row = deps.inbox.get(id) ?? missing();
    const raw = deps.inbox.raw(id) ?? missing();
    // The parts as sent: no text made from the HTML when there is no text part, `cid:` images as written; read from the
    // same bounded copy as the message's views (caught-body.ts), so a message mailparser refuses is checked as far as
    // it reads. mailparser is loaded by the first check, not with the server.
    const { simpleParser } = await import('mailparser');
    const source = await viewSource(raw).catch(() => ({ raw }));
    const parsed = await simpleParser(source.raw, {
      skipHtmlToText: true,
      skipTextToHtml: true,
      skipImageLinks: true,
      keepCidLinks: true,
      // A structure it cannot read at all is checked as a message without a body (the content check says so).
    }).catch(() => ({ html: false as const, text: undefined }));
    const html = typeof parsed.html === 'string' ? parsed.html : null;
    const untracked = html !== null ? deps.tracking.untrack(html) : null;
    const sent = row.svc_message_id ? deps.emails.get(row.svc_message_id) : undefined;
    return {
      messageId: id,
      raw,
      html: untracked?.html ?? null,
      sentHtmlBytes: html !== null ? Buffer.byteLength(html) : null,
      text: parsed.text ?? null,
      subject: row.subject,
      from: row.headers.find((h) => h.name.toLowerCase() === 'from')?.value ?? row.from_addr,
      headers: row.headers,
      envelope: { mailFrom: row.mail_from, clientIp: row.client_ip ?? null, helo: row.helo ?? null },
      live: sent ? sent.mode === 'live' : null,
      tracked: untracked?.tracked ?? [],
    };
  }

  async function compute(id: string, refresh: 'links' | undefined): Promise<MessageChecks> {
    const checker = deps.checker ?? fail('unavailable', 'This server does not check messages.');
    const input = await inputOf(id);
    const kept = deps.store.get(id);
    const { report, complete } =
      kept && refresh === 'links'
        ? await checker.refreshLinks(kept, input)
        : await checker.run(input, { name: deps.resolver.name, resolve: (n, t) => deps.resolver.resolve(n, t) });
    if (!complete) return report;
    // A message deleted while its checks ran keeps no report: it is gone.
    if (!deps.store.put(id, report)) fail('not_found', 'The message was deleted while it was being checked.');
    return report;
  }

  return {
    /** Loads what the checks need in the background, so that the first report does not wait for it. */
    warm(): void {
      deps.checker?.warm();
    },

    /**
     * GET /sandbox/messages/{id}/checks: the kept report, or a new one made now and kept; with `refresh: 'links'`, the
     * links check run again.
     */
    get(id: string, refresh?: 'links'): Promise<MessageChecks> {
      if (!refresh) {
        const kept = deps.store.get(id);
        if (kept) return Promise.resolve(kept);
      }
      const key = `${id} ${refresh ?? ''}`;
      let p = running.get(key);
      if (!p) {
        p = compute(id, refresh).finally(() => running.delete(key));
        running.set(key, p);
      }
      return p;
    },
  };
}
export type Checks = ReturnType<typeof createChecks>;
