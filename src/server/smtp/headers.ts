// The header block of a caught message, parsed the way mailparser parses it (its header code, run directly):
// the sink needs only the headers when it catches a message, and mailparser's stream machinery costs more than
// the parse itself. The body is parsed by mailparser in full when the message is first read.
import { createRequire } from 'node:module';
import type { AddressObject, MailParser } from 'mailparser';

const require = createRequire(import.meta.url);
type HeaderList = new (raw: Buffer) => { getList(): { key: string; line: string }[] };
let headerList: HeaderList | undefined;
const mailsplitHeaders = () => (headerList ??= (require('@zone-eu/mailsplit') as { Headers: HeaderList }).Headers);

export interface CaughtHeaders {
  messageId: string | null;
  subject: string | null;
  /** The From header as text (`"Shop" <orders@example.test>`). */
  from: string | null;
  to: string[];
  cc: string[];
  /** Every header line, unfolded, in order. */
  lines: { name: string; value: string }[];
  /** Whether the header block has a DKIM-Signature field (verified later, when the message is first read). */
  signed: boolean;
}

// processHeaders only reads the parser's libmime instance: one parser serves every call, made for the first message
// caught (mailparser and its charset tables are loaded then, not with the server).
let parser: { processHeaders(lines: { key: string; line: string }[]): Map<string, unknown> } | undefined;
const headerParser = () =>
  (parser ??= new (require('mailparser') as { MailParser: typeof MailParser }).MailParser() as unknown as NonNullable<
    typeof parser
  >);

function addresses(field: unknown): string[] {
  const list = (Array.isArray(field) ? field : field ? [field] : []) as AddressObject[];
  const out: string[] = [];
  const walk = (values: AddressObject['value']) => {
    for (const v of values) {
      if (v.address) out.push(v.address);
      if (v.group) walk(v.group);
    }
  };
  for (const a of list) walk(a.value);
  return out;
}

/** The header block of a message: up to and including the blank line that ends it. */
export function headerBlock(raw: Buffer): Buffer {
  const crlf = raw.indexOf('\r\n\r\n');
  const lf = raw.indexOf('\n\n');
  const end = crlf >= 0 && (lf < 0 || crlf < lf) ? crlf + 4 : lf >= 0 ? lf + 2 : raw.length;
  return raw.subarray(0, end);
}

/** The fields the sink stores parsed; mailparser decodes each field on its own, so the others are not passed. */
const PARSED_FIELDS = new Set(['message-id', 'subject', 'from', 'to', 'cc']);

/** The header fields of a message whose header block (headerBlock) is `block`. */
export function parseHeaders(raw: Buffer, block = headerBlock(raw)): CaughtHeaders {
  const list = new (mailsplitHeaders())(block).getList();
  const map = headerParser().processHeaders(list.filter((h) => PARSED_FIELDS.has(h.key)));
  const from = map.get('from') as AddressObject | undefined;
  return {
    messageId: (map.get('message-id') as string | undefined) ?? null,
    subject: (map.get('subject') as string | undefined) ?? null,
    from: from?.text || null,
    to: addresses(map.get('to')),
    cc: addresses(map.get('cc')),
    signed: list.some((h) => h.key === 'dkim-signature'),
    lines: list.map((h) => {
      const i = h.line.indexOf(':');
      return {
        name: h.line.slice(0, i),
        value: h.line
          .slice(i + 1)
          .replace(/\r?\n[ \t]/g, ' ')
          .trim(),
      };
    }),
  };
}
