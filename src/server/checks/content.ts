// `content`: what a reader and a receiving server make of the message as written — its parts, images' alt text, size,
// unsubscribe headers, sender, subject and preheader, and valid HTML (docs/checks.md).
import { findCodes, findLinks } from '../../lib/extract.js';
import type { CheckFinding } from '../../contract/checks.js';
import { MAX_DEPTH, type Markup, collapse, placeOf, preheaderOf } from './markup.js';

/** Gmail clips a message whose HTML is larger than this, behind a "View entire message" link. */
export const GMAIL_CLIP_BYTES = 102 * 1024;
/** A subject longer than this is cut short by most clients (mobile ones show 30–40 characters, desktop ones 60–70). */
const SUBJECT_MAX = 70;
/** A preheader shorter than this lets the body's first words fill the preview; longer than the other, it is cut. */
const PREHEADER_MIN = 30;
const PREHEADER_MAX = 140;
/** Findings of one kind listed one by one at most this many times. */
const MAX_EACH = 20;

export interface ContentInput {
  subject: string | null;
  /** The From field as written. */
  from: string | null;
  headers: { name: string; value: string }[];
  text: string | null;
  /** The HTML as its author wrote it (tracking undone), parsed; null without an HTML part. */
  markup: Markup | null;
  /** The size of the HTML as it was sent (with tracking), in bytes: what Gmail measures. */
  sentHtmlBytes: number | null;
}

const header = (input: ContentInput, name: string) =>
  input.headers.find((h) => h.name.toLowerCase() === name)?.value ?? null;

/** A URL as two parts would both write it: no trailing slash, host in lower case. */
function normal(url: string): string {
  try {
    const u = new URL(url);
    return `${u.protocol}//${u.host}${u.pathname.replace(/\/$/, '')}${u.search}`;
  } catch {
    return url;
  }
}

export function contentFindings(input: ContentInput): CheckFinding[] {
  const out: CheckFinding[] = [];
  const { markup: m, text } = input;
  const hasText = Boolean(text?.trim());

  if (m && !hasText) {
    out.push({
      severity: 'warning',
      rule: 'text-part-missing',
      title: 'No text part',
      detail:
        'The message is HTML only. Clients and readers that do not show HTML get nothing readable, and spam filters ' +
        'score HTML-only mail higher: add a text/plain alternative.',
    });
  }

  if (m && hasText) {
    const html = m.html;
    const inText = new Map(findLinks({ text, html: null }).map(({ url }) => [normal(url), url]));
    const inHtml = new Map(findLinks({ text: null, html }).map(({ url }) => [normal(url), url]));
    const links: CheckFinding[] = [];
    for (const [key, url] of inHtml) {
      if (!inText.has(key))
        links.push({ severity: 'notice', rule: 'link-only-in-html', title: 'A link only the HTML has', url });
    }
    for (const [key, url] of inText) {
      if (!inHtml.has(key))
        links.push({ severity: 'notice', rule: 'link-only-in-text', title: 'A link only the text part has', url });
    }
    for (const f of links.slice(0, MAX_EACH)) {
      out.push({
        ...f,
        detail: `${f.url} is in one part and not the other: a reader of the other part cannot follow it.`,
      });
    }
    const textCodes = findCodes({ subject: input.subject, text, html: null });
    const htmlCodes = findCodes({ subject: input.subject, text: null, html });
    for (const code of textCodes.filter((c) => !htmlCodes.includes(c)).slice(0, MAX_EACH)) {
      out.push({
        severity: 'warning',
        rule: 'code-only-in-text',
        title: `The code ${code} is in the text part only`,
        detail: 'A reader of the HTML does not see it.',
      });
    }
    for (const code of htmlCodes.filter((c) => !textCodes.includes(c)).slice(0, MAX_EACH)) {
      out.push({
        severity: 'warning',
        rule: 'code-only-in-html',
        title: `The code ${code} is in the HTML only`,
        detail: 'A reader of the text part does not see it.',
      });
    }
  }

  if (m) {
    const noAlt = m.elements.filter((e) => e.name === 'img' && e.attribs.alt === undefined);
    for (const e of noAlt.slice(0, MAX_EACH)) {
      out.push({
        severity: 'warning',
        rule: 'img-alt-missing',
        title: 'An image without alt text',
        detail:
          `${e.attribs.src ?? 'An image'} has no alt attribute: with images off (the default of many clients) and ` +
          'to a screen reader it says nothing, or its file name. Describe it, or give alt="" to a decorative one.',
        ...placeOf(m, e),
        ...(noAlt.length > MAX_EACH && e === noAlt[MAX_EACH - 1] ? { occurrences: noAlt.length - MAX_EACH + 1 } : {}),
      });
    }
  }

  if (m?.tooDeep) {
    out.push({
      severity: 'error',
      rule: 'html-nesting-deep',
      title: `Elements nested more than ${MAX_DEPTH} deep`,
      detail:
        `Here an element opens inside ${MAX_DEPTH} others (unclosed tags, most often). The browser engines mail ` +
        `clients show HTML with stop nesting there (Chromium's and WebKit's at ${MAX_DEPTH}) and put deeper elements ` +
        'beside, so the message is not laid out as written. The checks read the HTML up to here.',
      ...m.tooDeep,
    });
  }

  if (input.sentHtmlBytes !== null && input.sentHtmlBytes > GMAIL_CLIP_BYTES) {
    out.push({
      severity: 'warning',
      rule: 'html-clipped',
      title: 'Gmail clips this message',
      detail:
        `Its HTML is ${Math.round(input.sentHtmlBytes / 1024)} KB as sent; Gmail shows the first ${GMAIL_CLIP_BYTES / 1024} KB ` +
        'and hides the rest (the footer and its unsubscribe link with it) behind "View entire message".',
    });
  }

  out.push(...unsubscribeFindings(input));

  const fromAddress = /<([^>]+)>\s*$/.exec(input.from ?? '')?.[1] ?? input.from ?? '';
  if (/^(no[-_.]?reply|do[-_.]?not[-_.]?reply)\b/i.test(fromAddress)) {
    out.push({
      severity: 'notice',
      rule: 'from-no-reply',
      title: 'Sent from a no-reply address',
      detail: `${fromAddress} tells people not to answer: replies are lost, and some filters and readers trust such mail less. Set Reply-To to an address that is read.`,
    });
  }

  const subject = input.subject?.trim() ?? '';
  if (!subject) {
    out.push({
      severity: 'warning',
      rule: 'subject-missing',
      title: 'No subject',
      detail: 'Clients show "(no subject)", and spam filters score it.',
    });
  } else if ([...subject].length > SUBJECT_MAX) {
    out.push({
      severity: 'notice',
      rule: 'subject-long',
      title: `The subject is ${[...subject].length} characters long`,
      detail: `Clients cut it at 30–${SUBJECT_MAX} characters: put what matters first.`,
    });
  }

  const preheader = m ? preheaderOf(m) : null;
  if (preheader !== null) {
    const n = [...preheader].length;
    if (n < PREHEADER_MIN || n > PREHEADER_MAX) {
      out.push({
        severity: 'notice',
        rule: n < PREHEADER_MIN ? 'preheader-short' : 'preheader-long',
        title: `The preheader is ${n} characters long`,
        detail:
          n < PREHEADER_MIN
            ? `Clients show about ${PREHEADER_MIN}–${PREHEADER_MAX} characters beside the subject: the body's first words fill the rest.`
            : `Clients show about ${PREHEADER_MIN}–${PREHEADER_MAX} characters beside the subject: the rest is cut.`,
      });
    }
  }

  return out;
}

/**
 * Bulk mail (a list's headers, or an unsubscribe link or word in it) must say how to unsubscribe in one click: a
 * List-Unsubscribe https URL and `List-Unsubscribe-Post: List-Unsubscribe=One-Click` (RFC 8058), which Gmail and Yahoo
 * require of bulk senders.
 */
function unsubscribeFindings(input: ContentInput): CheckFinding[] {
  const listUnsubscribe = header(input, 'list-unsubscribe');
  const post = header(input, 'list-unsubscribe-post');
  const precedence = header(input, 'precedence');
  const words = `${input.text ?? ''} ${input.markup ? collapse(input.markup.html) : ''}`;
  const bulk =
    header(input, 'list-id') !== null ||
    /^(bulk|list|junk)$/i.test(precedence?.trim() ?? '') ||
    /unsubscribe/i.test(words);
  const https = /<https:\/\/[^>]+>/i.test(listUnsubscribe ?? '');
  const oneClick = /List-Unsubscribe\s*=\s*One-Click/i.test(post ?? '');
  if (!bulk && listUnsubscribe === null) return [];
  if (listUnsubscribe === null) {
    return [
      {
        severity: 'warning',
        rule: 'list-unsubscribe-missing',
        title: 'Bulk mail without List-Unsubscribe',
        detail:
          'It looks like bulk mail (it offers to unsubscribe, or has list headers) but has no List-Unsubscribe header: ' +
          'Gmail and Yahoo require one, with one-click unsubscribe (List-Unsubscribe-Post, RFC 8058), of bulk senders. ' +
          'Add both headers.',
      },
    ];
  }
  if (!https) {
    return [
      {
        severity: 'warning',
        rule: 'list-unsubscribe-no-https',
        title: 'List-Unsubscribe has no https URL',
        detail:
          'One-click unsubscribe (RFC 8058) needs an https URL in List-Unsubscribe, as <https://…>; a mailto: alone is not enough.',
      },
    ];
  }
  if (!oneClick) {
    return [
      {
        severity: 'warning',
        rule: 'list-unsubscribe-post-missing',
        title: 'No one-click unsubscribe',
        detail:
          'List-Unsubscribe has an https URL but there is no "List-Unsubscribe-Post: List-Unsubscribe=One-Click" header ' +
          '(RFC 8058): Gmail and Yahoo require one-click unsubscribe of bulk senders.',
      },
    ];
  }
  return [];
}
