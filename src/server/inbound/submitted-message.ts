// A message handed in over SMTP submission, turned into the fields of a send request (`POST /v1/emails`), so that it
// goes through the one pipeline every message takes: the same rules, the same stored form, composed and DKIM-signed
// at delivery like any other (docs/smtp.md, "What happens to the message"). Its attachments stay the bytes mailparser
// decoded, which core stores as they are.
import type { AddressObject, EmailAddress } from 'mailparser';
import { IDEMPOTENCY_HEADER } from '../../contract/emails.js';
import { RESERVED_HEADERS, type SendInput } from '../core/rules/send-rules.js';

/** A submitted message as a send request, with the Idempotency-Key its header carried. */
export interface Submitted {
  /** Not yet checked against the contract's schema: core's entry of a send checks it as it checks an API body. */
  request: SendInput;
  idempotencyKey: string | undefined;
}

/** A message the submission cannot make a send request of, in words for the client, with its reply (550 5.6.0). */
export class SubmittedMessageError extends Error {
  constructor(
    message: string,
    readonly reply: [code: number, enhanced: string] = [550, '5.6.0'],
  ) {
    super(message);
  }
}

/**
 * A message past mailparser's limits (mailsplit's: 1000 MIME parts, the nested ones counted, and 1 MiB for the header
 * block of the message or of a part) is no better the next time it is sent: refused for good, saying which limit.
 */
function pastLimits(err: unknown): SubmittedMessageError | null {
  const { code, message } = err as { code?: unknown; message?: unknown };
  if (code !== 'EMAXLEN') return null;
  const what = String(message);
  if (/child nodes/i.test(what)) {
    return new SubmittedMessageError(
      'The message has more than 1000 MIME parts (nested parts count too), the most this service reads; send fewer attachments, or one archive of them.',
      [554, '5.6.0'],
    );
  }
  if (/header/i.test(what)) {
    return new SubmittedMessageError(
      'A header block of the message is over 1 MiB, the most this service reads of one; shorten its header fields.',
      [552, '5.3.4'],
    );
  }
  return new SubmittedMessageError(`The message is past what this service reads (${what}).`, [554, '5.6.0']);
}

/**
 * Header fields the service sets itself (core's reserved ones) or takes from fields of their own; the rest of the
 * client's header fields travel as the request's custom headers. Transport fields (Received, Return-Path, a signature
 * the service would invalidate) stay behind.
 */
const NOT_CUSTOM = new Set([
  ...RESERVED_HEADERS,
  'reply-to',
  'content-disposition',
  'content-id',
  'domainkey-signature',
  'arc-seal',
  'arc-message-signature',
  'arc-authentication-results',
  'authentication-results',
  'received',
  'delivered-to',
  'sender',
  IDEMPOTENCY_HEADER.toLowerCase(),
]);

/** `Name <address>` with the display name quoted (as core's address parser reads it), or the bare address. */
function formatted(a: EmailAddress): string[] {
  if (a.group) return a.group.flatMap(formatted);
  if (!a.address) return [];
  const name = a.name.replace(/[\r\n]+/g, ' ').trim();
  return [name ? `"${name.replace(/["\\]/g, '\\$&')}" <${a.address}>` : a.address];
}

function addresses(field: AddressObject | AddressObject[] | undefined): string[] {
  if (!field) return [];
  return (Array.isArray(field) ? field : [field]).flatMap((f) => f.value.flatMap(formatted));
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

/** mailparser, loaded with the first submitted message (most servers never take one, and it is slow to load), then kept. */
let mailparser: Promise<typeof import('mailparser')> | undefined;

/**
 * The send request a submitted message makes. From, Subject, Reply-To, the text and HTML parts, attachments (inline
 * ones keep their Content-ID, so `cid:` images still show) and the other header fields come from the message; the
 * recipients from the envelope: those named in To or Cc are `to` and `cc`, every other one is `bcc` (so Bcc works as
 * mail clients expect, and no header names it). A message with neither a text nor an HTML part is sent with an empty
 * text part.
 */
export async function submittedRequest(raw: Buffer, rcptTo: string[]): Promise<Submitted> {
  const { simpleParser } = await (mailparser ??= import('mailparser'));
  const parsed = await simpleParser(raw, {
    skipHtmlToText: true,
    skipTextToHtml: true,
    // Keep `cid:` references as they are: the inline image goes along as an attachment with its Content-ID.
    skipImageLinks: true,
  }).catch((err: unknown) => {
    throw pastLimits(err) ?? err;
  });
  const [from] = addresses(parsed.from);
  if (!from) {
    throw new SubmittedMessageError('The message has no From address; set a From header with a verified domain.');
  }
  const envelope = rcptTo.map((r) => r.toLowerCase());
  const inEnvelope = (list: string[]) => list.filter((a) => envelope.includes(bare(a)));
  const to = inEnvelope(addresses(parsed.to));
  const cc = inEnvelope(addresses(parsed.cc)).filter((a) => !to.some((t) => bare(t) === bare(a)));
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
    content: a.content,
    content_type: a.contentType,
    ...(a.contentId ? { content_id: a.contentId.replace(/^<|>$/g, '') } : {}),
  }));
  const html = typeof parsed.html === 'string' ? parsed.html : undefined;
  // mailparser gives an HTML-only message an empty text (with skipHtmlToText): it is sent as HTML alone, as written.
  const text = parsed.text || (html === undefined ? '' : undefined);
  const replyTo = addresses(parsed.replyTo);
  const request: SendInput = {
    from,
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
