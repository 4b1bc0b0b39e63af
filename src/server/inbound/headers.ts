// The header block of a caught message, parsed the way mailparser parses it: the sink needs only the headers when it
// catches a message. Through the mailparser seam (seams/mailparser.ts): mailparser's header code run directly, or its
// own parse of the block. The body is parsed by mailparser in full when the message is first read.
import type { AddressObject } from 'mailparser';
import { type Logger, silentLogger } from '../../lib/log.js';
import { headerBlock } from '../core/rules/caught-body.js';
import { headerReader } from './seams/mailparser.js';

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

/** The header fields of a message whose header block (headerBlock) is `block`; `log` hears the seam's path. */
export async function parseHeaders(
  raw: Buffer,
  block = headerBlock(raw),
  log: Logger = silentLogger,
): Promise<CaughtHeaders> {
  const { lines: list, fields: map } = await headerReader(log)(block);
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
