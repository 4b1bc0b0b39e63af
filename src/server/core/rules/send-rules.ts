// The rules of a send request that need no database: its shape against the contract's schema (400/422), each field's
// (422 naming every bad one) and the abuse filter's (451). core/emails.ts applies them, then the rules of the
// workspace (its domains, its key, its owner).
import type { FieldError } from '../../../contract/common.js';
import { type Attachment, SendEmailRequest } from '../../../contract/emails.js';
import { decodePieces, includesAcross, PIECE_BYTES } from '../../../lib/base64.js';
import { DAY } from '../../../lib/clock.js';
import { isLoopbackHost } from '../../../lib/loopback.js';
import { parseAddress, type ParsedAddress } from './addresses.js';
import { type AttachmentUrlPolicy, urlRefusal } from './attachment-urls.js';
import { contentTypeOf } from './content-type.js';
import { ServiceError, fail } from '../errors.js';
import { validate } from './validate.js';

export const GTUBE = 'XJS*C4JDBQADN1.NSBN3*2IDNEN*GTUBE-STANDARD-ANTI-UBE-TEST-EMAIL*C.34X';
export const EICAR = 'X5O!P%@AP[4\\PZX54(P^)7CC)7}$EICAR-STANDARD-ANTIVIRUS-TEST-FILE!$H+H*';
const EICAR_BYTES = Buffer.from(EICAR, 'latin1');
/** An attachment as core takes it: its content in base64 (the API's JSON) or as its bytes (SMTP submission's). */
export type SendAttachment = Omit<Attachment, 'content'> & { content?: string | Buffer };
/**
 * A send request as core takes it: a long text or HTML may come as its UTF-8 bytes, as the API reads it from the
 * request body (http/long-strings.ts), and is stored from them without ever being a string; an attachment's content
 * may come as its bytes, stored as they are (never encoded to base64 and decoded again).
 */
export type SendInput = Omit<SendEmailRequest, 'text' | 'html' | 'attachments'> & {
  text?: string | Buffer;
  html?: string | Buffer;
  attachments?: SendAttachment[];
};

/** Header fields the service sets itself: a send's custom headers may not name them. */
export const RESERVED_HEADERS: ReadonlySet<string> = new Set([
  'from',
  'to',
  'cc',
  'bcc',
  'subject',
  'date',
  'message-id',
  'mime-version',
  'content-type',
  'content-transfer-encoding',
  'dkim-signature',
  'return-path',
  // The service's own header (tags travel in it); a custom one would forge them.
  'x-svc-tags',
]);
const HEADER_NAME = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]{1,76}$/;
/**
 * Padded base64 (RFC 4648 section 4). A length check and one character class rather than a repeated group: attachments run
 * to 40 MiB, and a pattern that backtracks over groups of four overflows the stack on a few megabytes.
 */
const isBase64 = (s: string) => s.length % 4 === 0 && /^[A-Za-z0-9+/]*={0,2}$/.test(s);
const MAX_SCHEDULE_AHEAD = 30 * DAY;
export interface StoredAttachment {
  filename: string;
  /** Base64, in messages stored before attachment bytes were kept apart (store/emails.ts insertChunk). */
  content?: string;
  url?: string;
  content_type: string;
  content_id?: string;
}
/** An attachment of a send as checkFields answers it: described as stored, with its content as the send gave it. */
export type CheckedAttachment = Omit<StoredAttachment, 'content'> & { content?: string | Buffer };

const isRecord = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

/**
 * A send request checked against the contract's schema, as the API checks a body (400 for its shape, 422 for a
 * value): its members given as bytes (a text or HTML, an attachment's content) stand as '' for the schema, which
 * takes any string there, and go back in after.
 */
export function checkedInput(value: unknown): SendInput {
  if (!isRecord(value)) return validate(SendEmailRequest, value, 'body');
  const standIn: Record<string, unknown> = { ...value };
  for (const member of ['text', 'html']) if (Buffer.isBuffer(value[member])) standIn[member] = '';
  const given = Array.isArray(value.attachments) ? (value.attachments as unknown[]) : [];
  const bytesOf = (a: unknown) => (isRecord(a) && Buffer.isBuffer(a.content) ? a.content : undefined);
  if (given.some(bytesOf)) standIn.attachments = given.map((a) => (bytesOf(a) ? { ...(a as object), content: '' } : a));
  const input: SendInput = validate(SendEmailRequest, standIn, 'body');
  if (Buffer.isBuffer(value.text)) input.text = value.text;
  if (Buffer.isBuffer(value.html)) input.html = value.html;
  input.attachments?.forEach((a, i) => {
    const bytes = bytesOf(given[i]);
    if (bytes) a.content = bytes;
  });
  return input;
}

/**
 * An attachment's bytes in pieces of whole base64 lines (lib/base64.ts PIECE_BYTES), as they are stored: base64 text
 * decoded a piece at a time, bytes cut where they lie (no copy, nothing decoded).
 */
export function* attachmentPieces(content: string | Buffer): Generator<Buffer> {
  if (typeof content === 'string') yield* decodePieces(content);
  else for (let i = 0; i < content.length; i += PIECE_BYTES) yield content.subarray(i, i + PIECE_BYTES);
}

/**
 * Every rule of a send request that does not need the database; 422 naming each bad field. Answers the request's
 * addresses parsed, its attachments as they are stored, and when it is scheduled.
 */
export function checkFields(input: SendInput, now: number, urls: AttachmentUrlPolicy) {
  const errors: FieldError[] = [];
  const bad = (path: string, message: string, code = 'invalid') => errors.push({ path, code, message });
  const addr = (value: string, path: string): ParsedAddress | null => {
    const p = parseAddress(value);
    if (!p) bad(path, `"${value.slice(0, 100)}" is not a valid email address`);
    return p;
  };
  const from = addr(input.from, 'from');
  const toList = typeof input.to === 'string' ? [input.to] : input.to;
  const lists = {
    to: toList.map((v, i) => addr(v, typeof input.to === 'string' ? 'to' : `to.${i}`)),
    cc: (input.cc ?? []).map((v, i) => addr(v, `cc.${i}`)),
    bcc: (input.bcc ?? []).map((v, i) => addr(v, `bcc.${i}`)),
    reply_to: (input.reply_to ?? []).map((v, i) => addr(v, `reply_to.${i}`)),
  };
  if (input.subject !== undefined && /[\r\n]/.test(input.subject)) bad('subject', 'must not contain CR or LF');
  if (input.html === undefined && input.text === undefined && input.template_id === undefined) {
    bad('html', 'give at least one of html, text or template_id', 'content_required');
  }
  const attachments: CheckedAttachment[] = (input.attachments ?? []).map(({ path: remote, ...given }, i) => {
    const path = `attachments.${i}`;
    // `path` is another name for `url` (what Resend's SDKs send); one of them, not both.
    if (remote !== undefined && given.url !== undefined) bad(`${path}.path`, 'give url or path, not both');
    const a = { ...given, url: given.url ?? remote };
    const urlPath = given.url === undefined && remote !== undefined ? `${path}.path` : `${path}.url`;
    if (/[/\\]/.test(a.filename) || /[\u0000-\u001f]/.test(a.filename))
      bad(`${path}.filename`, 'must not contain / or \\ or control characters');
    if ((a.content === undefined) === (a.url === undefined)) bad(path, 'give exactly one of content and url (or path)');
    if (typeof a.content === 'string' && !isBase64(a.content)) bad(`${path}.content`, 'must be valid base64');
    if (a.url !== undefined) {
      let u: URL | null = null;
      try {
        u = new URL(a.url);
      } catch {
        bad(urlPath, 'must be an absolute URL');
      }
      if (u && !(u.protocol === 'https:' || (u.protocol === 'http:' && isLoopbackHost(u.hostname)))) {
        bad(urlPath, 'must be https (http only to a loopback host)');
      } else if (u) {
        const refused = urlRefusal(u, urls);
        if (refused) bad(urlPath, refused, 'not_allowed');
      }
    }
    if (a.content_id !== undefined && /[\s<>]/.test(a.content_id))
      bad(`${path}.content_id`, 'must not contain spaces or angle brackets');
    if (a.content_type !== undefined && /[\r\n]/.test(a.content_type))
      bad(`${path}.content_type`, 'must not contain CR or LF');
    return {
      filename: a.filename,
      ...(a.content !== undefined ? { content: a.content } : {}),
      ...(a.url !== undefined ? { url: a.url } : {}),
      content_type: a.content_type ?? contentTypeOf(a.filename),
      ...(a.content_id !== undefined ? { content_id: a.content_id } : {}),
    };
  });
  for (const [name, value] of Object.entries(input.headers ?? {})) {
    if (!HEADER_NAME.test(name)) bad(`headers.${name}`, 'is not a valid header field name');
    else if (RESERVED_HEADERS.has(name.toLowerCase())) bad(`headers.${name}`, 'is reserved and set by the service');
    if (/[\r\n]/.test(value)) bad(`headers.${name}`, 'value must not contain CR or LF');
  }
  let scheduledAt: number | null = null;
  if (input.scheduled_at !== undefined) {
    scheduledAt = Date.parse(input.scheduled_at);
    if (scheduledAt > now + MAX_SCHEDULE_AHEAD) bad('scheduled_at', 'must be at most 30 days ahead');
  }
  if (errors.length) {
    throw new ServiceError('validation_failed', errors.map((e) => `${e.path}: ${e.message}`).join('; '), { errors });
  }
  if (input.template_id !== undefined) {
    fail(
      'template_not_found',
      `No template ${input.template_id.slice(0, 64)}: templates are not served yet; send html or text.`,
      {
        errors: [{ path: 'template_id', code: 'not_found', message: 'unknown template' }],
      },
    );
  }
  const defined = (l: (ParsedAddress | null)[]) => l as ParsedAddress[];
  return {
    from: from!,
    to: defined(lists.to),
    cc: defined(lists.cc),
    bcc: defined(lists.bcc),
    reply_to: defined(lists.reply_to),
    attachments,
    scheduledAt,
  };
}

/** GTUBE in subject/text/html, EICAR in an attachment, or an operator pattern → 451; nothing is stored. */
export function abuseFilter(input: SendInput, attachments: CheckedAttachment[], blockPatterns: RegExp[]): void {
  // GTUBE is ASCII: found in a text's UTF-8 as in the text.
  const texts = [input.subject ?? '', input.text ?? '', input.html ?? ''];
  const blocked = (why: string) =>
    fail('content_blocked', `The message was refused by the abuse filter: ${why}. Remove it and send again.`);
  if (texts.some((t) => t.includes(GTUBE))) blocked('it contains the GTUBE spam test string');
  for (const a of attachments) {
    if (a.content && includesAcross(attachmentPieces(a.content), EICAR_BYTES))
      blocked(`attachment ${a.filename} contains the EICAR test virus`);
  }
  for (const p of blockPatterns) {
    if (texts.some((t) => p.test(t.toString()))) blocked('it matches a blocked pattern of this server');
  }
}
