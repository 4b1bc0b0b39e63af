// The fast path of the mailparser seam (mailparser.ts): the fields of a caught message's header block, decoded by
// mailparser's own header code run directly. The block is split into lines by mailsplit's Headers (its public API, the
// lines mailparser's splitter makes), and the fields the sink stores are decoded by MailParser#processHeaders, the
// method mailparser's stream calls on each part's lines: a private method, written against the version mailparser.ts
// pins. In one synchronous call, where a parse through mailparser's stream (the stock path) costs more than the
// decoding itself: its splitter, its transform steps and a turn of the event loop each, for every message caught.
import { createRequire } from 'node:module';
import type { MailParser } from 'mailparser';

type Line = { key: string; line: string };
type ProcessHeaders = (lines: Line[]) => Map<string, unknown>;
type Mailsplit = typeof import('@zone-eu/mailsplit');

/** The fields the sink stores parsed; mailparser decodes each field on its own, so the others are not passed. */
const PARSED_FIELDS = new Set(['message-id', 'subject', 'from', 'to', 'cc']);

/**
 * The first private part of mailparser this file uses that `MailParser` lacks, or null: processHeaders, as a method
 * that turns a list of lines into a Map of decoded values (tried on an encoded Subject).
 */
export function missingParts(MailParser: unknown): string | null {
  const prototype = (MailParser as { prototype?: { processHeaders?: unknown } } | undefined)?.prototype;
  if (typeof prototype?.processHeaders !== 'function') return 'MailParser.prototype.processHeaders';
  const parser = new (MailParser as new () => { processHeaders: ProcessHeaders })();
  const map = parser.processHeaders([{ key: 'subject', line: 'Subject: =?UTF-8?Q?Gr=C3=BC=C3=9Fe?=' }]);
  return map instanceof Map && map.get('subject') === 'Grüße' ? null : 'MailParser#processHeaders as it decodes a line';
}

const require = createRequire(import.meta.url);
let loaded: { Headers: Mailsplit['Headers']; parser: { processHeaders: ProcessHeaders } } | undefined;
// processHeaders only reads the parser's libmime instance: one parser serves every call, made for the first message
// caught (mailparser and its charset tables are loaded then, not with the server).
const libs = () =>
  (loaded ??= {
    Headers: (require('@zone-eu/mailsplit') as Mailsplit).Headers,
    parser: new (require('mailparser') as { MailParser: typeof MailParser }).MailParser() as unknown as {
      processHeaders: ProcessHeaders;
    },
  });

/** The header fields of a header block (mailparser.ts, HeaderFields): every line, and the fields the sink stores, decoded. */
export function readHeaderFields(block: Buffer): { lines: Line[]; fields: Map<string, unknown> } {
  const { Headers, parser } = libs();
  const lines = new Headers(block).getList() as Line[];
  return { lines, fields: parser.processHeaders(lines.filter((h) => PARSED_FIELDS.has(h.key))) };
}
