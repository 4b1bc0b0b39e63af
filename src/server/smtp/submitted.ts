// A message handed in over SMTP submission, turned into the fields of a send request (`POST /v1/emails`), so that it
// goes through the one pipeline every message takes: the same rules, the same stored form, composed and DKIM-signed
// at delivery like any other (docs/smtp.md, "What happens to the message").
//
// A message of one text or HTML part (what nodemailer makes of `html` alone, Supabase Auth's mail, Django's plain
// EmailMessage) is read by postal-mime, in one go. mailparser hands a message through a chain of streams that yields
// to the event loop six times for a 2 KB one, and under load each of those turns waits behind everything else the
// server does: submitted messages waited on their parse more than on anything else. Every other message is read by
// mailparser, as it is where postal-mime's reading differs: postal-mime keeps the line break before a multipart
// delimiter in the part before it (RFC 2046 section 5.1.1 gives it to the delimiter), so each part of a multipart
// would gain a line break at its end, and a text attachment has its line ends changed; it also ends format=flowed text
// with a line break where mailparser does not. submitted.test.ts holds both readers to the same result.
import { simpleParser, type AddressObject } from 'mailparser';
import type { Address } from 'postal-mime';
import { IDEMPOTENCY_HEADER, type SendEmailRequest } from '../../contract/emails.js';

/** A submitted message as a send request, with the Idempotency-Key its header carried. */
export interface Submitted {
  /** Not yet checked against the contract's schema: the caller validates it as the API validates a body. */
  request: SendEmailRequest;
  idempotencyKey: string | undefined;
}

/** A message the submission cannot make a send request of, in words for the client. */
export class SubmittedMessageError extends Error {}

/**
 * Header fields the service sets itself or takes from fields of their own; the rest of the client's header fields
 * travel as the request's custom headers. Transport fields (Received, Return-Path, a signature the service would
 * invalidate) stay behind.
 */
const NOT_CUSTOM = new Set([
  'from',
  'to',
  'cc',
  'bcc',
  'reply-to',
  'subject',
  'date',
  'message-id',
  'mime-version',
  'content-type',
  'content-transfer-encoding',
  'content-disposition',
  'content-id',
  'dkim-signature',
  'domainkey-signature',
  'arc-seal',
  'arc-message-signature',
  'arc-authentication-results',
  'authentication-results',
  'received',
  'return-path',
  'delivered-to',
  'sender',
  'x-svc-tags',
  IDEMPOTENCY_HEADER.toLowerCase(),
]);

/** `Name <address>` with the display name quoted (as core's address parser reads it), or the bare address. */
function formatted(a: Address): string[] {
  if (a.group) return a.group.flatMap(formatted);
  if (!a.address) return [];
  const name = a.name.replace(/[\r\n]+/g, ' ').trim();
  return [name ? `"${name.replace(/["\\]/g, '\\$&')}" <${a.address}>` : a.address];
}

/** The addresses of a header field as mailparser gives them (its entries are shaped as postal-mime's). */
function parsedAddresses(field: AddressObject | AddressObject[] | undefined): Address[] {
  if (!field) return [];
  return (Array.isArray(field) ? field : [field]).flatMap((f) => f.value as Address[]);
}

/** What a send request is made of, whichever parser read the message. */
interface Parsed {
  from: Address[];
  to: Address[];
  cc: Address[];
  replyTo: Address[];
  subject?: string;
  text?: string;
  html?: string;
  /** Every header field as written: its lowercased name, and its whole line. */
  headerLines: readonly { key: string; line: string }[];
  attachments: { filename?: string; contentType: string; contentId?: string; content: Buffer }[];
}

let postalMime: Promise<typeof import('postal-mime')> | undefined;

/** A top-level Content-Type postal-mime reads as mailparser does: one text or HTML part, not format=flowed. */
const ONE_PART = /^\s*text\/(plain|html)\s*(;|$)/i;
const FLOWED = /;\s*format\s*=\s*"?flowed/i;

/** postal-mime's reading of a message of one text or HTML part, else mailparser's. */
async function parse(raw: Buffer): Promise<Parsed> {
  // Loaded with the first message: a server that is never sent one does not load it.
  const { default: PostalMime } = await (postalMime ??= import('postal-mime'));
  const light = await PostalMime.parse(raw, { attachmentEncoding: 'arraybuffer', forceRfc822Attachments: true });
  const type = light.headers.find((h) => h.key === 'content-type')?.value ?? 'text/plain';
  if (light.attachments.length === 0 && ONE_PART.test(type) && !FLOWED.test(type)) {
    return {
      from: light.from ? [light.from] : [],
      to: light.to ?? [],
      cc: light.cc ?? [],
      replyTo: light.replyTo ?? [],
      subject: light.subject,
      text: light.text,
      html: light.html,
      headerLines: light.headerLines,
      attachments: [],
    };
  }
  const full = await simpleParser(raw, {
    skipHtmlToText: true,
    skipTextToHtml: true,
    // Keep `cid:` references as they are: the inline image goes along as an attachment with its Content-ID.
    skipImageLinks: true,
  });
  return {
    from: parsedAddresses(full.from),
    to: parsedAddresses(full.to),
    cc: parsedAddresses(full.cc),
    replyTo: parsedAddresses(full.replyTo),
    subject: full.subject,
    text: full.text,
    html: typeof full.html === 'string' ? full.html : undefined,
    headerLines: full.headerLines,
    attachments: full.attachments,
  };
}

/** The bare address of `Name <address>`, lowercased, to match header recipients with envelope ones. */
const bare = (a: string) => (/<([^<>]*)>$/.exec(a)?.[1] ?? a).toLowerCase();

/** A filename the API takes (no path, no control characters), or one made from the part's position and type. */
function filenameOf(name: string | undefined, i: number, contentType: string): string {
  const base = (name ?? '')
    .split(/[/\\]/)
    .pop()!
    .replace(/[\u0000-\u001f]/g, '')
    .trim();
  if (base) return base.slice(0, 255);
  const sub = /^[a-z]+\/([a-z0-9.+-]+)/i.exec(contentType)?.[1];
  return `attachment-${i + 1}${sub ? `.${sub.replace(/^.*\+/, '')}` : ''}`;
}

/**
 * The send request a submitted message makes. From, Subject, Reply-To, the text and HTML parts, attachments (inline
 * ones keep their Content-ID, so `cid:` images still show) and the other header fields come from the message; the
 * recipients from the envelope: those named in To or Cc are `to` and `cc`, every other one is `bcc` (so Bcc works as
 * mail clients expect, and no header names it). A message with neither a text nor an HTML part is sent with an empty
 * text part.
 */
export async function submittedRequest(raw: Buffer, rcptTo: string[]): Promise<Submitted> {
  const parsed = await parse(raw);
  const from = parsed.from.flatMap(formatted);
  if (from.length === 0) {
    throw new SubmittedMessageError('The message has no From address; set a From header with a verified domain.');
  }
  const envelope = rcptTo.map((r) => r.toLowerCase());
  const inEnvelope = (list: string[]) => list.filter((a) => envelope.includes(bare(a)));
  const to = inEnvelope(parsed.to.flatMap(formatted));
  const cc = inEnvelope(parsed.cc.flatMap(formatted)).filter((a) => !to.some((t) => bare(t) === bare(a)));
  const named = new Set([...to, ...cc].map(bare));
  const bcc = [...new Set(envelope)].filter((r) => !named.has(r));
  if (to.length === 0) {
    throw new SubmittedMessageError(
      'None of the recipients (RCPT TO) is in the To header; name at least one of them in To, and the others in Cc or Bcc.',
    );
  }

  const headers: Record<string, string> = {};
  const seen = new Set<string>();
  let idempotencyKey: string | undefined;
  for (const { key, line } of parsed.headerLines) {
    const value = line
      .slice(line.indexOf(':') + 1)
      .replace(/\r?\n[ \t]+/g, ' ')
      .trim();
    if (key === IDEMPOTENCY_HEADER.toLowerCase()) idempotencyKey ??= value;
    else if (!NOT_CUSTOM.has(key) && !seen.has(key)) {
      // The field's name as the client wrote it; a field given twice keeps its first value.
      seen.add(key);
      headers[line.slice(0, line.indexOf(':')).trim()] = value;
    }
  }

  const attachments = parsed.attachments.map((a, i) => ({
    filename: filenameOf(a.filename, i, a.contentType),
    content: a.content.toString('base64'),
    content_type: a.contentType,
    ...(a.contentId ? { content_id: a.contentId.replace(/^<|>$/g, '') } : {}),
  }));
  const html = parsed.html;
  // An empty text part beside an HTML one is none (mailparser gives one where the message has none).
  const text = parsed.text || (html === undefined ? '' : undefined);
  const replyTo = parsed.replyTo.flatMap(formatted);
  const request: SendEmailRequest = {
    from: from[0]!,
    to,
    ...(cc.length ? { cc } : {}),
    ...(bcc.length ? { bcc } : {}),
    ...(replyTo.length ? { reply_to: replyTo } : {}),
    ...(parsed.subject !== undefined ? { subject: parsed.subject } : {}),
    ...(text !== undefined ? { text } : {}),
    ...(html !== undefined ? { html } : {}),
    ...(attachments.length ? { attachments } : {}),
    ...(Object.keys(headers).length ? { headers } : {}),
  };
  return { request, idempotencyKey };
}
