// The nodemailer seam: how a message's MIME is written once nodemailer's composer has laid out its tree. Fast path
// (nodemailer-fast.ts): in one synchronous pass over MimeNode's private fields, into one Buffer with room left before it
// for the DKIM-Signature field. Stock path: nodemailer's own build (MailComposer#compile().build(), its stream pipeline),
// attachments given in pieces joined first; the same bytes.
import { createRequire } from 'node:module';
import type MailComposer from 'nodemailer/lib/mail-composer';
import type Mail from 'nodemailer/lib/mailer/index.js';
import type { Logger } from '../../../lib/log.js';
import { crlfLines } from '../dkim-sign.js';
import { type SeamChoice, choosePath, installedVersion, tellPath } from '../../seams/choose.js';
import { missingParts, writeMime as writeInOnePass } from './nodemailer-fast.js';

/** The version nodemailer-fast.ts was written against (package.json pins it exactly). */
export const NODEMAILER_PINNED = '10.6.0';

/**
 * Writes the MIME of `mail`. `pieces` stand in for attachment contents, by index (compose.ts, ComposeRequest); with
 * `crlf`, every line ends in CRLF; `room` bytes are asked to be kept free before the message (the room it got, 0 or
 * `room`, is returned with it).
 */
export type MimeWriter = (
  mail: Mail.Options,
  pieces: (Buffer[] | undefined)[] | undefined,
  crlf: boolean,
  room: number,
) => Promise<{ mime: Buffer; room: number }>;

// nodemailer is loaded by the first message composed (on the compose thread, under `svc serve`), not with the server.
const require = createRequire(import.meta.url);
const load = (path: string): unknown => {
  try {
    return require(path);
  } catch {
    return undefined;
  }
};

/** nodemailer's own build, joining the pieces of an attachment into its content. */
export const writeStock: MimeWriter = async (mail, pieces, crlf) => {
  const attachments = (mail.attachments ?? []).map((a, i) => {
    const list = pieces?.[i];
    return list ? { ...a, content: Buffer.concat(list) } : a;
  });
  const Composer = require('nodemailer/lib/mail-composer') as typeof MailComposer;
  const built = await new Composer({ ...mail, attachments }).compile().build();
  return { mime: crlf ? crlfLines(built) : built, room: 0 };
};

/** The seam's path for a given nodemailer: its version, its composer and its quoted-printable module. */
export function selectMime(
  lib: { version: string | null; MailComposer: unknown; qp: unknown },
  env?: NodeJS.ProcessEnv,
): SeamChoice {
  return choosePath({
    pins: { nodemailer: NODEMAILER_PINNED },
    versions: { nodemailer: lib.version },
    probe: () => missingParts(lib),
    env,
  });
}

let chosen: { choice: SeamChoice; write: MimeWriter } | undefined;

/** The path taken in this process (thread), and its writer. */
function choose(): { choice: SeamChoice; write: MimeWriter } {
  if (chosen) return chosen;
  const choice = selectMime({
    version: installedVersion('nodemailer'),
    MailComposer: load('nodemailer/lib/mail-composer'),
    qp: load('nodemailer/lib/qp'),
  });
  chosen = { choice, write: choice.path === 'fast' ? writeInOnePass : writeStock };
  return chosen;
}

/** The path this process (thread) takes. */
export const mimePath = (): SeamChoice => choose().choice;

/** The MIME writer of the path taken; says (once) which it is. */
export function mimeWriter(log: Logger): MimeWriter {
  const { choice, write } = choose();
  tellPath(log, 'nodemailer MIME', choice);
  return write;
}
