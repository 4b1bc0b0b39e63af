// The mailparser seam: how the sink decodes the header block of a message it catches (headers.ts). Fast path
// (mailparser-fast.ts): mailparser's header code run directly on the block, in one synchronous call. Stock path:
// mailparser's simpleParser given the block, which is a message with an empty body; the same lines and values.
import { createRequire } from 'node:module';
import type { Logger } from '../../../lib/log.js';
import { type SeamChoice, choosePath, installedVersion, tellPath } from '../../seams/choose.js';
import { missingParts, readHeaderFields } from './mailparser-fast.js';

/** The version mailparser-fast.ts was written against (package.json pins it exactly). */
export const MAILPARSER_PINNED = '3.9.31';

/**
 * A header block as mailparser reads it: every line in order (`key` lower-case, `line` the whole field as it is in the
 * block, folded), and the decoded values by key (of at least Message-ID, Subject, From, To and Cc).
 */
export interface HeaderFields {
  lines: { key: string; line: string }[];
  fields: Map<string, unknown>;
}

export type HeaderReader = (block: Buffer) => HeaderFields | Promise<HeaderFields>;

/** mailparser's own parse of the block, without the work on a body it does not have. */
export const readStock: HeaderReader = async (block) => {
  const { simpleParser } = await import('mailparser');
  const parsed = await simpleParser(block, { skipHtmlToText: true, skipTextToHtml: true, skipTextLinks: true });
  return { lines: parsed.headerLines as HeaderFields['lines'], fields: parsed.headers };
};

/** The seam's path for a given mailparser: its version and its MailParser class. */
export function selectHeaders(
  lib: { version: string | null; MailParser: unknown },
  env?: NodeJS.ProcessEnv,
): SeamChoice {
  return choosePath({
    pins: { mailparser: MAILPARSER_PINNED },
    versions: { mailparser: lib.version },
    probe: () => missingParts(lib.MailParser),
    env,
  });
}

const require = createRequire(import.meta.url);
let chosen: { choice: SeamChoice; read: HeaderReader } | undefined;

/** The path taken in this process, and its reader; mailparser is loaded by the first message caught. */
function choose(): { choice: SeamChoice; read: HeaderReader } {
  if (chosen) return chosen;
  let MailParser: unknown;
  try {
    MailParser = (require('mailparser') as { MailParser?: unknown }).MailParser;
  } catch {
    MailParser = undefined;
  }
  const choice = selectHeaders({ version: installedVersion('mailparser'), MailParser });
  chosen = { choice, read: choice.path === 'fast' ? readHeaderFields : readStock };
  return chosen;
}

/** The path this process takes. */
export const headersPath = (): SeamChoice => choose().choice;

/** The header reader of the path taken; says (once) which it is. */
export function headerReader(log: Logger): HeaderReader {
  const { choice, read } = choose();
  tellPath(log, 'mailparser headers', choice);
  return read;
}
