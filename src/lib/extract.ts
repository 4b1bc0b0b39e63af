// A caught message read as a person reads it (`svc inbox wait --extract`, svc-mail/testing's `inbox.waitFor`, `svc
// mcp`'s `wait_for_message`): the one-time code they would type, judged by the words around it and not by where it
// stands, and the links they see — each with its words, its real target (a click-tracking redirect decoded) and its
// role — and the one they would click. No browser, no HTML parser: a scanner of the few tags that matter, linear in the
// message's length. docs/command-line.md#behaviour-in-detail has the rules for users.
import { decodeEntities, htmlText, withoutSkipped } from './html.js';

/** What is read of a message. */
export interface MailParts {
  subject: string | null;
  text: string | null;
  html: string | null;
}

// ——— Codes ———

/**
 * A code-like token: a short letter prefix and digits (`G-605112`: the digits), digits in groups (`90 31 17`,
 * `551-209`, `4 8 2 9 1 3` — a digit a box in HTML: joined), 4 to 10 digits, or capitals and digits (`ZX81QA`). Standing alone: not part of a word or of a
 * longer number, nor joined by `-`, `.`, `,` or `/` to more of one (dates, decimals, `INV-2024/7`), nor a time.
 */
const TOKEN =
  /(?<![\p{L}\p{N}_])(?<![\p{L}\p{N}][-.,/])(?:(?<prefixed>\p{Lu}{1,3}-(?<digits>\d{4,10}))|(?<grouped>\d{2,4}(?:[ \u00a0\u2010\u2011\u2013-]\d{2,4}){1,4}|\d(?:[ \u00a0]\d){3,9})|(?<plain>\d{4,10})|(?<mixed>(?=[A-Z\d]*\d)(?=[A-Z\d]*[A-Z])[A-Z\d]{4,10}))(?![\p{L}\p{N}_])(?![-.,/][\p{L}\p{N}])(?!:\d)/gu;

/** Words that say a number is a code to type (`Enter 482913 to continue`). */
const CODE_WORDS =
  /\b(?:codes?|passcodes?|pass codes?|one[- ]?time|otp|pins?|verification|verify|security|sign[- ]?in|signin|log[- ]?in|login|2fa|mfa|two[- ]factor|authentication|enter|type)\b/gi;
/** Words that say it is something else: an id, a phone number, part of an address, a date, a time, an amount. */
const OTHER_WORDS =
  /\b(?:orders?|invoices?|receipts?|bills?|tickets?|cases?|accounts?|acct|reference|ref|booking|reservations?|itinerary|tracking|shipments?|parcels?|customer|member(?:ship)?|ids?|phone|tel|telephone|mobile|cell|call|fax|whatsapp|address|street|avenue|road|boulevard|suite|floor|apt|building|p\.?\s?o\.? box|zip|postcode|postal|date|dated|time|amount|total|subtotal|price|paid|charged?|balance|fee|tax|vat|qty|quantity|items?|sku|model|serial|version|build|card|ending|transactions?|employee|patient|policy|claims?|licen[cs]e|iban|routing)\b/gi;
/** What the mail is about when it names a code at all: then an unlabelled number may be it. */
const NAMES_A_CODE = /\b(?:codes?|passcodes?|one[- ]?time|otp|pin)\b/i;
/** Words that only link a value to what the sentence is about (`… is 4821`). */
const LINKED = /^\s*(?:is|are|was|:|=)\s*:?\s*$/i;
/** Words that lead to a value without saying what it is (`Use 4821`, `… is 4821`, `This one: 4821`). */
const CUE = /(?:\b(?:use|is|are)\b|[:=])\s*$/i;
/**
 * Just before a number: an id (`#`, `No.`), an amount, a year (`©`), a phone number (`+1 555 …`), a ZIP (`CA 94103`).
 */
const NOT_A_CODE_BEFORE = /(?:[#№$€£¥©]|\+[\d\s().-]*|\b[A-Z]{2}|\b(?:No|Nr)\.)\s*$/u;
/** Just after a number: a unit, a currency, or the letters of a postcode (`1017 CE Amsterdam`). */
const NOT_A_CODE_AFTER =
  /^\s*(?:%|[$€£¥]|(?:usd|eur|gbp|kg|km|mi|lbs?|mb|gb|minutes?|mins?|hours?|hrs?|days?|seconds?|secs?|years?|points?|people|users?|times)\b)/i;
const POSTCODE_AFTER = /^ [A-Z]{2}\b/;
/** A line of an address (a footer, a shipping address): its numbers are not codes unless labelled as one. */
const ADDRESS_WORDS =
  /\b(?:street|avenue|road|boulevard|blvd|lane|drive|suite|ste|floor|p\.?\s?o\.? box|plaza|parkway|rue|inc|llc|ltd|gmbh|corp)\b|(?:straße|strasse|platz|allee|gasse|gracht|laan)\b/i;
const ADDRESS_SHAPES = /\b\p{Lu}\p{Ll}+ (?:St|Ave|Rd|Dr)\b|\b[A-Z]{2} \d{5}\b/u;
/** A year, passed over unless labelled as a code. */
const YEAR = /^(?:19|20)\d\d$/;
/** A date in groups of digits (`2026-08-01`), never a code. */
const DATE = /^\d{4}\D\d{2}\D\d{2}$/;
/** Where a sentence ends within a line (and the separators of a footer). */
const SENTENCE_END = /[.!?…;](?=\s|$)|\s[|•·]\s/g;

/** How far labels are looked for, in words… */
const BEFORE_WORDS = 8;
const AFTER_WORDS = 6;
/** …and at most how many characters away a number's sentence is read. */
const NEAR = 240;

interface Candidate {
  value: string;
  score: number;
  /** Where it was found, in reading order: the subject, then the body. */
  order: number;
}

/**
 * The one-time codes of a message, best first, each once: what reads as a code to a person. A code is judged by the
 * words around it — before it first (`Your verification code is 482913`, `Code: 4821`), else after it (`318604 is
 * your code`), in its sentence, or on the lines beside it when it stands on a line of its own — in the subject and in
 * the body (the text part, else the HTML's words). The nearest label decides: one of a code wins; one of an order,
 * invoice, ticket, account, reference, phone number, address, date, time or amount passes the number over. Digits in
 * groups and a code with a letter prefix or of capitals and digits count only when labelled as a code; a plain number
 * no word labels counts too in a mail that names a code (`Your code` as its subject), after every labelled one, unless
 * it looks like a year or stands in an address. With `pattern`, a code is what the pattern matches whole (a candidate
 * above, or a match of its own standing alone in the mail's words: its first group when it has one, else the match),
 * ranked the same way; an unlabelled match counts whatever the mail names. Best first: labelled within three words,
 * then labelled farther, then unlabelled (a code on a line of its own first); among equals, in reading order.
 */
export function findCodes(m: MailParts, pattern?: RegExp | string): string[] {
  const re = pattern === undefined ? undefined : toRegExp(pattern);
  // The numbers of a URL (`?id=4821`) are no one's to type.
  const subject = withoutUrls(m.subject ?? '');
  const body = withoutUrls(m.text ?? '');
  const html = m.html ? withoutUrls(htmlText(m.html)) : '';
  const namesACode = [subject, body, html].some((t) => NAMES_A_CODE.test(t));
  const found: Candidate[] = [];
  let order = 0;
  const read = (t: string) => {
    for (const c of candidates(t, re, namesACode)) found.push({ ...c, order: order++ });
  };
  read(subject);
  const before = found.length;
  read(body);
  // No text part, or one that holds none (a stub: "view this email in a browser"): the HTML's words.
  if (found.length === before) read(html);
  const best = new Map<string, Candidate>();
  for (const c of found) {
    const had = best.get(c.value);
    if (!had || c.score > had.score) best.set(c.value, had ? { ...c, order: had.order } : c);
  }
  return [...best.values()].sort((a, b) => b.score - a.score || a.order - b.order).map((c) => c.value);
}

/** An http(s) URL in running text (with the punctuation after it: trimUrl). */
const URL_IN_TEXT = /\bhttps?:\/\/[^\s<>"]+/gi;

function withoutUrls(t: string): string {
  return t.replace(URL_IN_TEXT, ' ');
}

/** A pattern as given: a RegExp, or its source (a caller's `--code-pattern`). Throws a SyntaxError for a bad one. */
function toRegExp(p: RegExp | string): RegExp {
  return typeof p === 'string' ? new RegExp(p) : p;
}

/** A regular expression that finds every match of `re`, from the start. */
function global(re: RegExp): RegExp {
  return new RegExp(re.source, `${re.flags.replace(/[gy]/g, '')}g`);
}

/** The candidates of one text (the subject or a body), each scored; the ones that read as something else left out. */
function candidates(t: string, pattern: RegExp | undefined, namesACode: boolean): Omit<Candidate, 'order'>[] {
  const lines = t.split(/\r?\n/);
  const out: Omit<Candidate, 'order'>[] = [];
  const whole = pattern && new RegExp(`^(?:${pattern.source})$`, pattern.flags.replace(/[gy]/g, ''));
  const every = pattern && global(pattern);
  for (const [i, line] of lines.entries()) {
    const tokens: { start: number; end: number; value: string; plain: boolean }[] = [];
    for (const m of line.matchAll(TOKEN)) {
      const g = m.groups!;
      const value = g.digits ?? g.plain ?? g.mixed ?? g.grouped!.replace(/\D/g, '');
      if (g.grouped && (value.length < 4 || value.length > 10 || DATE.test(g.grouped))) continue;
      if (whole && !whole.test(value)) continue;
      tokens.push({ start: m.index, end: m.index + m[0].length, value, plain: g.plain !== undefined });
    }
    if (every) {
      for (const m of line.matchAll(every)) {
        const end = m.index + m[0].length;
        if (!m[0] || /[\p{L}\p{N}]/u.test(line[m.index - 1] ?? '') || /[\p{L}\p{N}]/u.test(line[end] ?? '')) continue;
        tokens.push({ start: m.index, end, value: m[1] ?? m[0], plain: true });
      }
    }
    for (const tok of tokens) {
      const score = scoreOf(lines, i, tok, pattern !== undefined, namesACode);
      if (score !== null) out.push({ value: tok.value, score });
    }
  }
  return out;
}

/**
 * How well a token reads as a code, higher better; null when it does not (labelled as something else, or unlabelled
 * where that does not do).
 */
function scoreOf(
  lines: string[],
  i: number,
  tok: { start: number; end: number; value: string; plain: boolean },
  patterned: boolean,
  namesACode: boolean,
): number | null {
  // Only the words near it are read (each a short slice, so a long line of numbers costs linear time).
  const whole = lines[i]!;
  const from = Math.max(0, tok.start - NEAR);
  const line = whole.slice(from, tok.end + NEAR);
  const [start, end] = [tok.start - from, tok.end - from];
  const { start: sentenceStart, end: sentenceEnd } = sentenceAround(line, start, end);
  const lineBefore = line.slice(0, start);
  const lineAfter = line.slice(end);
  if (NOT_A_CODE_BEFORE.test(lineBefore) || NOT_A_CODE_AFTER.test(lineAfter) || POSTCODE_AFTER.test(lineAfter))
    return null;
  // Labels belong to the number they come before: only the words since the last number are this one's.
  let before = afterLastNumber(line.slice(sentenceStart, start));
  let after = beforeFirstNumber(line.slice(end, sentenceEnd));
  // A code on a line of its own (shown big): its label is on the line above, or below.
  const alone = line.length === whole.length && !/[\p{L}\p{N}]/u.test(lineBefore + lineAfter);
  if (alone) {
    before = afterLastNumber(lastSentence(neighbour(lines, i, -1)));
    after = beforeFirstNumber(firstSentence(neighbour(lines, i, 1)));
  }
  let label = nearestLabel(before, after);
  // `Your one-time passcode for the payment of EUR 1,250.00 … is 58 21 94`: what the sentence is about, when the
  // number only ends it.
  const sentence = alone ? '' : line.slice(sentenceStart, start);
  if (!label && sentence !== before && LINKED.test(before)) {
    const code = labels(sentence)
      .filter((l) => l.code)
      .at(-1);
    if (code) label = { code: true, distance: wordsIn(sentence.slice(code.end)) };
  }
  if (label?.code === false) return null;
  // Labelled: near its label or farther (a code shown on a line of its own first); else in the order of the mail.
  if (label?.code) return (label.distance <= 3 ? 1000 : 900) + (alone ? 5 : 0);
  // Unlabelled: a plain number in a mail about a code (or anything a pattern matched), not in an address, not a year.
  if (!tok.plain || ADDRESS_WORDS.test(line) || ADDRESS_SHAPES.test(line)) return null;
  if (!patterned && (!namesACode || YEAR.test(tok.value))) return null;
  return 100 + (alone ? 50 : 0) + (CUE.test(before) ? 30 : 0);
}

/** The sentence of a line that holds [start, end). */
function sentenceAround(line: string, start: number, end: number): { start: number; end: number } {
  let from = 0;
  let to = line.length;
  for (const m of line.matchAll(SENTENCE_END)) {
    const at = m.index + m[0].length;
    if (at <= start) from = at;
    else if (m.index >= end) {
      to = m.index;
      break;
    }
  }
  return { start: from, end: to };
}

/** The last sentence of a line, without the punctuation that ends it. */
function lastSentence(line: string): string {
  const t = line.replace(/[\s.!?…;]+$/, '');
  return t.slice(sentenceAround(t, t.length, t.length).start);
}

function firstSentence(line: string): string {
  return line.slice(0, sentenceAround(line, 0, 0).end);
}

/** The nearest line above (-1) or below (1) with words on it. */
function neighbour(lines: string[], i: number, step: -1 | 1): string {
  for (let j = i + step; j >= 0 && j < lines.length; j += step) if (lines[j]!.trim()) return lines[j]!;
  return '';
}

function afterLastNumber(s: string): string {
  const all = [...s.matchAll(/\S*\d\S*/g)];
  const last = all.at(-1);
  return last ? s.slice(last.index + last[0].length) : s;
}

function beforeFirstNumber(s: string): string {
  const first = /\S*\d\S*/.exec(s);
  return first ? s.slice(0, first.index) : s;
}

/**
 * The label nearest a number, in words (a comma between counts as three): whether it says code, and how far it is.
 * One before the number wins a tie with one after it. A word of another label within a code's (the `time` of
 * `one-time code`) is part of it.
 */
function nearestLabel(before: string, after: string): { code: boolean; distance: number } | undefined {
  let best: { code: boolean; distance: number } | undefined;
  const consider = (code: boolean, distance: number, limit: number) => {
    if (distance <= limit && (!best || distance < best.distance)) best = { code, distance };
  };
  for (const l of labels(before)) consider(l.code, wordsIn(before.slice(l.end)), BEFORE_WORDS);
  for (const l of labels(after)) consider(l.code, wordsIn(after.slice(0, l.start)), AFTER_WORDS);
  return best;
}

/** How far apart, in words: a comma between counts as three. */
function wordsIn(s: string): number {
  return (s.match(/\S+/g)?.length ?? 0) + 3 * (s.match(/,/g)?.length ?? 0);
}

function labels(s: string): { code: boolean; start: number; end: number }[] {
  const code = [...s.matchAll(CODE_WORDS)].map((m) => ({ code: true, start: m.index, end: m.index + m[0].length }));
  const other = [...s.matchAll(OTHER_WORDS)]
    .map((m) => ({ code: false, start: m.index, end: m.index + m[0].length }))
    .filter((o) => !code.some((c) => o.start < c.end && c.start < o.end));
  return [...code, ...other];
}

// ——— Links ———

/** What a link is for: the action the mail exists for, or boilerplate around it. */
export type LinkRole = 'action' | 'view-in-browser' | 'unsubscribe' | 'preferences' | 'social' | 'image' | 'other';

export interface MessageLink {
  /**
   * The link's words: its text in the HTML (an image's alt text when it holds only an image), or in a text part the
   * words that lead to it (on its line, or on the line above when it stands alone).
   */
  text: string;
  /** Where it leads: the URL as written, or the target of the service's click-tracking redirect that stands for it. */
  url: string;
  /** That redirect, as the message holds it (visiting it records `email.clicked`); null when the link is not tracked. */
  tracked: string | null;
  role: LinkRole;
}

/** How a caller chooses a link rather than the action: by its words, or by its target. */
export interface LinkChoice {
  /** A part of the link's text (any case), or a pattern its text matches. */
  text?: string | RegExp;
  /** A part of the link's real target (any case), or a pattern it matches. */
  match?: string | RegExp;
}

const UNSUBSCRIBE_TEXT = /\bunsubscribe\b|\bopt[- ]?out\b|\bstop (?:receiving|getting)\b|\bremove me\b/i;
const PREFERENCES_TEXT =
  /\bpreferences?\b|\b(?:email|notification|subscription|communication|mailing)s? settings\b|\bmanage (?:your |my )?(?:email|notification|subscription|communication|alert)s?\b|\bupdate your (?:email )?settings\b/i;
const VIEW_TEXT =
  /\bview (?:this |the |it |our )?(?:e-?mail |message |newsletter )?(?:in (?:your |a )?(?:web ?)?browser|online|as a web ?page)\b|\bweb version\b|\btrouble (?:viewing|reading|seeing) (?:this|it)\b/i;
/** The words of a link worded as what the mail is for. */
const ACTION_TEXT =
  /\b(?:confirm|verify|validate|reset|recover|sign[- ]?(?:in|up)|log[- ]?in|login|accept|activate|join|download|get started|continue|complete|finish|approve|authori[sz]e|allow|review|check|set ?up|create|choose|change|claim|redeem|pay|track|start|subscribe|open|go to|launch|secure|it was me|view (?:it|this|them) on|view (?:your |the |this )?(?:invoice|receipt|order|bill|statement|pull request|issue|document|message|comment|ticket|reply|payment)s?|(?:copy|paste)(?: and paste)? (?:this|the|the following) (?:link|url|address))\b/i;
const UNSUBSCRIBE_URL = /unsub|opt-?out/i;
const PREFERENCES_URL = /preference|email-settings|notification|subscription-?cent(?:er|re)|manage-?subscription/i;
const VIEW_URL = /web-?version|view-?in-?browser|view[-_]online|\/webview\b/i;
const ACTION_URL =
  /verif|confirm|reset|password|magic|log-?in|sign-?in|sign_in|auth|invit|accept|activat|join|onboard|[?&](?:token|code|ticket|otp)=/i;
const SOCIAL_HOST =
  /(?:^|\.)(?:twitter\.com|x\.com|facebook\.com|fb\.com|instagram\.com|linkedin\.com|youtube\.com|youtu\.be|tiktok\.com|pinterest\.com|threads\.net|mastodon\.social|bsky\.app)$/i;

/** What a mail is for, by its subject: a link worded the same way is its action (`Reset your password` → `Reset`). */
const PURPOSES = [
  /confirm/i,
  /verif/i,
  /reset|forgot|password/i,
  /sign[- ]?in|log[- ]?in|login|magic/i,
  /sign[- ]?up|regist/i,
  /invit|join|accept/i,
  /activat/i,
  /download/i,
  /\bpay|invoice|receipt|bill/i,
  /track/i,
  /review|check/i,
  /approve|authori/i,
  /subscri/i,
];

/**
 * Every http(s) link of a message, once each by its real target, in the order a person sees them: the HTML's `<a
 * href>` (not those of its head, comments, styles or scripts), then the text part's URLs the HTML does not have (all
 * of them when there is no HTML). A link of the service's click tracking is given its target, the redirect kept
 * beside it. Its role, by its words first, then its target: `unsubscribe`, `preferences`, `view-in-browser`, `social`
 * (a social network's address), `action` (worded as the mail's purpose: confirm, verify, reset, sign in, accept,
 * activate, join, download…), `image` (an image alone: a logo), else by its target (`/verify`, `/reset`, `?token=` …:
 * `action`), else `other`.
 */
export function findLinks(m: Pick<MailParts, 'text' | 'html'>): MessageLink[] {
  const byUrl = new Map<string, MessageLink>();
  for (const raw of [...(m.html ? htmlLinks(m.html) : []), ...(m.text ? textLinks(m.text) : [])]) {
    const target = trackedTarget(raw.href);
    const url = target ?? raw.href;
    const link: MessageLink = {
      text: raw.text,
      url,
      tracked: target ? raw.href : null,
      role: roleOf(raw.text, url, raw.image),
    };
    const had = byUrl.get(url);
    if (!had) byUrl.set(url, link);
    // The same target again (a button, then its URL written out): the better words and role, the redirect if any.
    else {
      if (link.role === 'action' && had.role !== 'action') had.role = 'action';
      if (!had.text || had.text === url) had.text = link.text;
      had.tracked ??= link.tracked;
    }
  }
  return [...byUrl.values()];
}

/**
 * The link a person would click: with a choice, the first link whose text and target match it; else the action —
 * one whose words share the subject's purpose first, then the first — else the first link that is not boilerplate
 * (`other`); null when there is none.
 */
export function chooseLink(links: MessageLink[], subject: string | null, choice: LinkChoice = {}): MessageLink | null {
  if (choice.text !== undefined || choice.match !== undefined) {
    return links.find((l) => matches(l.text, choice.text) && matches(l.url, choice.match)) ?? null;
  }
  const actions = links.filter((l) => l.role === 'action');
  const purposes = PURPOSES.filter((p) => p.test(subject ?? ''));
  return (
    actions.find((l) => purposes.some((p) => p.test(l.text))) ??
    actions[0] ??
    links.find((l) => l.role === 'other') ??
    null
  );
}

function matches(s: string, want: string | RegExp | undefined): boolean {
  if (want === undefined) return true;
  if (typeof want === 'string') return s.toLowerCase().includes(want.toLowerCase());
  return new RegExp(want.source, want.flags.replace(/[gy]/g, '')).test(s);
}

/** What a message lacks when no link is chosen, in words (`… arrived, but it has no link whose text …`). */
export function missingLink(links: MessageLink[], choice: LinkChoice = {}): string {
  const shown = (p: string | RegExp) => (typeof p === 'string' ? `"${p}"` : String(p));
  if (!links.length) return 'no http(s) link';
  if (choice.text !== undefined && choice.match !== undefined)
    return `no link whose text matches ${shown(choice.text)} and whose target matches ${shown(choice.match)}`;
  if (choice.text !== undefined)
    return `no link whose text ${typeof choice.text === 'string' ? 'contains' : 'matches'} ${shown(choice.text)}`;
  if (choice.match !== undefined)
    return `no link whose target ${typeof choice.match === 'string' ? 'contains' : 'matches'} ${shown(choice.match)}`;
  return `no link to act on, only ${[...new Set(links.map((l) => l.role))].join(', ')} links`;
}

/** What a message lacks when no code is found, in words. */
export function missingCode(pattern?: RegExp | string): string {
  if (pattern === undefined) return 'nothing that reads as a one-time code';
  return `no code that ${typeof pattern === 'string' ? `/${pattern}/` : String(pattern)} matches`;
}

/**
 * The target of a link of the service's click tracking (server/core/tracking.ts): `…/t/c/<payload>.<signature>`, the
 * payload the base64url JSON `{m, u}` of the message id and the target. Read without the signature, which only the
 * server can check: the redirect itself is kept beside the target. Null for any other URL.
 */
function trackedTarget(href: string): string | null {
  const t = /^https?:\/\/[^/?#]+\/t\/c\/([\w-]+)\.[\w-]+$/i.exec(href);
  if (!t) return null;
  try {
    const p: unknown = JSON.parse(Buffer.from(t[1]!, 'base64url').toString('utf8'));
    const u = (p as { u?: unknown }).u;
    return typeof (p as { m?: unknown }).m === 'string' && typeof u === 'string' && /^https?:\/\//i.test(u) ? u : null;
  } catch {
    return null;
  }
}

function roleOf(text: string, url: string, image: boolean): LinkRole {
  if (UNSUBSCRIBE_TEXT.test(text)) return 'unsubscribe';
  if (PREFERENCES_TEXT.test(text)) return 'preferences';
  if (VIEW_TEXT.test(text)) return 'view-in-browser';
  let host = '';
  let rest = url;
  try {
    const u = new URL(url);
    host = u.hostname;
    rest = u.pathname + u.search;
  } catch {}
  if (SOCIAL_HOST.test(host)) return 'social';
  if (ACTION_TEXT.test(text)) return 'action';
  if (UNSUBSCRIBE_URL.test(rest)) return 'unsubscribe';
  if (PREFERENCES_URL.test(rest)) return 'preferences';
  if (VIEW_URL.test(rest)) return 'view-in-browser';
  if (image) return 'image';
  return ACTION_URL.test(rest) ? 'action' : 'other';
}

interface RawLink {
  href: string;
  text: string;
  image: boolean;
}

/**
 * The `<a href>` links of an HTML part, with their words. An element ends at its `</a>`, or where the next one opens
 * when it is left open; each search goes forward only, so the scan is linear.
 */
function htmlLinks(html: string): RawLink[] {
  const doc = withoutSkipped(html);
  const open = /<a\b([^<>]*)>/gi;
  const close = /<\/a\s*>/gi;
  const out: RawLink[] = [];
  let closeAt = -1;
  for (let m = open.exec(doc); m; ) {
    const start = m.index + m[0].length;
    const next = open.exec(doc);
    if (closeAt < start) {
      close.lastIndex = start;
      closeAt = close.exec(doc)?.index ?? doc.length;
    }
    const inner = doc.slice(start, Math.min(closeAt, next?.index ?? doc.length));
    const href = decodeEntities(attribute(m[1]!, HREF) ?? '').trim();
    if (/^https?:\/\//i.test(href)) {
      const words = htmlText(inner).replace(/\s+/g, ' ');
      const img = !words && /<img\b([^<>]*)>/i.exec(inner);
      out.push({
        href,
        text: img ? decodeEntities(attribute(img[1]!, ALT) ?? '').trim() : words,
        image: Boolean(img),
      });
    }
    m = next;
  }
  return out;
}

/** An attribute's value in a tag's attributes, by one of these patterns (quoted either way, or bare). */
const attributeOf = (name: string) =>
  new RegExp(`(?:^|\\s)${name}\\s*=\\s*(?:"([^"]*)"|'([^']*)'|([^\\s"'=<>\`]+))`, 'i');
const HREF = attributeOf('href');
const ALT = attributeOf('alt');

function attribute(attrs: string, name: RegExp): string | undefined {
  const m = name.exec(attrs);
  return m ? (m[1] ?? m[2] ?? m[3]) : undefined;
}

/** Closing brackets a URL keeps only when it opened them too (`…/Mail_(protocol)`, not `(see https://…)`). */
const CLOSERS: Record<string, string> = { ')': '(', ']': '[', '}': '{' };

/** A URL found in running text, without the punctuation of the sentence around it. */
function trimUrl(url: string): string {
  const count = (c: string) => url.split(c).length - 1;
  for (;;) {
    const last = url.at(-1)!;
    const opener = CLOSERS[last];
    if (/[.,;:!?'"*]/.test(last) || (opener && count(last) > count(opener))) url = url.slice(0, -1);
    else return url;
  }
}

/** Punctuation and brackets around the words that lead to a URL (`Sign in: `, `[Sign in](`, `Reset <`). */
const EDGES = /^[\s\p{P}\p{S}]+|[\s\p{P}\p{S}]+$/gu;

/**
 * The URLs of a text part, each with the words that lead to it: the last sentence before it on its line since the
 * previous URL, or the line above's when there are none.
 */
function textLinks(text: string): RawLink[] {
  const lines = text.split(/\r?\n/);
  const out: RawLink[] = [];
  for (const [i, line] of lines.entries()) {
    let from = 0;
    for (const m of line.matchAll(URL_IN_TEXT)) {
      let words = lastSentence(line.slice(from, m.index).replace(EDGES, '')).replace(EDGES, '');
      if (!words && from === 0) {
        const above = neighbour(lines, i, -1);
        words = /https?:\/\//i.test(above) ? '' : lastSentence(above.replace(EDGES, '')).replace(EDGES, '');
      }
      const href = trimUrl(m[0]);
      out.push({ href, text: words, image: false });
      from = m.index + href.length;
    }
  }
  return out;
}
