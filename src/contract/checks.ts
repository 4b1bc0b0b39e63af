// The report of a caught message's checks (`GET /sandbox/messages/{id}/checks`, docs/checks.md): will it render in
// the clients people use, do its links work, would a receiver authenticate it, is its content sound, would a spam
// filter take it. Shared by the server that computes it, the client, `svc inbox check`, `svc-mail/testing` and `svc mcp`.
import * as z from 'zod';
import { lazySchema } from './lazy.js';
import { Timestamp } from './common.js';
import { SEVERITIES } from './severity.js';

export { SEVERITIES, type Severity, findingsAtOrAbove } from './severity.js';

/** The checks, in the order a report lists them. */
export const CHECK_IDS = ['html-compatibility', 'links', 'authentication', 'content', 'accessibility', 'spam'] as const;
export type CheckId = (typeof CHECK_IDS)[number];

export const CheckFinding = lazySchema(() =>
  z.object({
    severity: z.enum(SEVERITIES),
    /** A stable name of what was found (`css-display-flex`, `link-broken`, `img-alt-missing`, …). */
    rule: z.string(),
    title: z.string(),
    detail: z.string().optional(),
    /** The mail clients concerned, as `family.platform` (`outlook.windows`). */
    clients: z.array(z.string()).optional(),
    /** Where in the message's HTML (from 1), when the finding points at markup: its first occurrence. */
    line: z.number().int().optional(),
    column: z.number().int().optional(),
    /** How many times it occurs, when more than once. */
    occurrences: z.number().int().optional(),
    docs_url: z.string().optional(),
    /** The link or image a finding of the links check is about, and the HTTP status it answered. */
    url: z.string().optional(),
    status: z.number().int().optional(),
  }),
);
export type CheckFinding = z.infer<typeof CheckFinding>;

/** How well one mail client supports the HTML and CSS the message uses. */
export const ClientSupport = lazySchema(() =>
  z.object({
    /** `family.platform`, as caniemail names clients (`outlook.windows`, `gmail.android`). */
    client: z.string(),
    family: z.string(),
    platform: z.string(),
    /** `Outlook (Windows)`. */
    name: z.string(),
    /** The share (0–1) of the message's features it supports, a partly supported one counting half. */
    support: z.number(),
    /** Its share of opened mail in percent, as the score weighs it; null where none is published. */
    market_share: z.number().nullable(),
  }),
);
export type ClientSupport = z.infer<typeof ClientSupport>;

/** One link or image URL of the message, and what it answered. */
export const LinkResult = lazySchema(() =>
  z.object({
    /** As the author wrote it (a tracked link decoded back to its target). */
    url: z.string(),
    kind: z.enum(['link', 'image']),
    /** Whether the service rewrote it for click tracking. */
    tracked: z.boolean(),
    /** Where it first appears in the HTML; null for a link of the text part only. */
    line: z.number().int().nullable(),
    column: z.number().int().nullable(),
    /** The final answer's HTTP status; null when none came (not checked, refused, timed out). */
    status: z.number().int().nullable(),
    /** The redirects followed, each hop's URL in order (the last is where it ends). */
    redirects: z.array(z.string()),
    /** Why there is no status, or what went wrong (`timeout`, `TLS: …`, `not checked: …`). */
    error: z.string().nullable(),
  }),
);
export type LinkResult = z.infer<typeof LinkResult>;

/** One check's result: its worst finding is its status (`ok` with none), or `skipped` with the reason it could not run. */
export const MessageCheck = lazySchema(() =>
  z.object({
    id: z.enum(CHECK_IDS),
    status: z.enum(['ok', ...SEVERITIES, 'skipped']),
    /** Why it was skipped. */
    reason: z.string().optional(),
    /** When it ran (service clock). */
    checked_at: Timestamp,
    /** `html-compatibility`: the share (0–100) of the HTML's features supported, weighted by the clients' market share. */
    score: z.number().optional(),
    /** `html-compatibility`: the support data it judged by, and its version. */
    data_version: z.string().optional(),
    /** `html-compatibility`: each client's support, least supported first. */
    clients: z.array(ClientSupport).optional(),
    /** `links`: every link and image URL and its answer. */
    links: z.array(LinkResult).optional(),
    /** `authentication`: each mechanism's result as a receiver would record it (`pass`, `fail`, `none`, …). */
    results: z.object({ spf: z.string(), dkim: z.string(), dmarc: z.string() }).optional(),
    /** `spam`: SpamAssassin's score and the score at which it calls a message spam. */
    spam_score: z.number().optional(),
    spam_threshold: z.number().optional(),
    findings: z.array(CheckFinding),
  }),
);
export type MessageCheck = z.infer<typeof MessageCheck>;

/** `GET /sandbox/messages/{id}/checks`: every check of one caught message. */
export const MessageChecks = lazySchema(() =>
  z.object({
    /** The caught message (`eml_…`). */
    message_id: z.string(),
    /** When the report was made (service clock); a later read answers the kept report, with the same time. */
    checked_at: Timestamp,
    summary: z.object({
      errors: z.number().int(),
      warnings: z.number().int(),
      notices: z.number().int(),
      /** The HTML compatibility score (0–100); null for a message without HTML. */
      score: z.number().nullable(),
    }),
    checks: z.array(MessageCheck),
  }),
);
export type MessageChecks = z.infer<typeof MessageChecks>;

/** `refresh=links` runs the links check again (the others keep their results). */
export const ChecksQuery = lazySchema(() => z.strictObject({ refresh: z.enum(['links']).optional() }));
