// The checks that need no network — html-compatibility, content, accessibility — and the message's URLs for the links
// check, in one pass over the parsed HTML: CPU work, run on a thread of their own (offline-runner.ts, offline-thread.ts).
import type { CheckFinding, ClientSupport } from '../../contract/checks.js';
import { accessibilityFindings } from './accessibility.js';
import type { CheckInput } from '../core/checks.js';
import { contentFindings } from './content.js';
import { DATA_VERSION, htmlCompatibility } from './html-compatibility.js';
import { type FoundUrl, parseMarkup, textUrls, urlsOf } from './markup.js';
import { attempt, type Outcome } from './outcome.js';

/** What the offline checks read of a message (its parts and header fields). */
export type StaticInput = Pick<CheckInput, 'html' | 'sentHtmlBytes' | 'text' | 'subject' | 'from' | 'headers'> & {
  /** Only find the URLs (for the links check run again), no check. */
  only?: 'urls';
};

export interface StaticResult {
  compatibility: Outcome<{
    score: number;
    clients: ClientSupport[];
    findings: CheckFinding[];
    dataVersion: string;
  }> | null;
  content: Outcome<CheckFinding[]>;
  accessibility: Outcome<CheckFinding[]> | null;
  urls: FoundUrl[];
}

/**
 * Runs the offline checks but html-validate's part (null for the HTML ones of a message without HTML): that part runs
 * beside it (offline-runner.ts) and `withValidation` adds it.
 */
export function runOffline(input: StaticInput): StaticResult {
  const markup = input.html !== null ? parseMarkup(input.html) : null;
  const urls = [...(markup ? urlsOf(markup) : []), ...textUrls(input.text ?? '')];
  if (input.only === 'urls') return { compatibility: null, content: { ok: [] }, accessibility: null, urls };
  return {
    compatibility: markup ? attempt(() => ({ ...htmlCompatibility(markup), dataVersion: DATA_VERSION })) : null,
    content: attempt(() => contentFindings({ ...input, markup })),
    accessibility: markup ? attempt(() => accessibilityFindings(markup)) : null,
    urls,
  };
}
