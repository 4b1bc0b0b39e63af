// The Message-ID headers the service writes, and what it reads back from them when the sink catches its own mail:
// `<msg_…@{sending domain}>` for a /v1 message, `<sys_…@svc.test>` for the service's own mail (verification, notices).
import { newId } from '../../../lib/ids.js';

const MESSAGE = /^<?(msg_[0-9A-Za-z]{24})@[^>]+>?$/;
const SYSTEM = /^<?sys_[0-9A-Za-z]{24}@svc\.test>?$/;

/** The Message-ID of a `/v1` message sent from `domain`. */
export function messageIdHeader(messageId: string, domain: string): string {
  return `<${messageId}@${domain}>`;
}

/** A new Message-ID for the service's own mail; fixed when its job is written, so a resend is the same message. */
export function systemMessageIdHeader(): string {
  return `<${newId('sys')}@svc.test>`;
}

/** Whose a Message-ID header is: a `/v1` message's (with its id), the service's own mail's, or neither's. */
export function readMessageIdHeader(
  header: string,
): { kind: 'message'; messageId: string } | { kind: 'system' } | null {
  const messageId = MESSAGE.exec(header)?.[1];
  if (messageId) return { kind: 'message', messageId };
  return SYSTEM.test(header) ? { kind: 'system' } : null;
}

/** What the sink records about a caught message, from its Message-ID. */
export interface CaughtOrigin {
  /** The service sent it (a second copy, a resend after a crash, is not stored again). */
  fromService: boolean;
  /** The `/v1` message and its workspace, when it is one that exists. */
  messageId: string | null;
  workspaceId: string | null;
}

/** The origin of a caught message with this Message-ID; `workspaceOf` looks a `/v1` message up. */
export function caughtOrigin(header: string, workspaceOf: (messageId: string) => string | undefined): CaughtOrigin {
  const read = readMessageIdHeader(header);
  const workspaceId = read?.kind === 'message' ? workspaceOf(read.messageId) : undefined;
  if (read?.kind === 'message' && workspaceId) return { fromService: true, messageId: read.messageId, workspaceId };
  return { fromService: read?.kind === 'system', messageId: null, workspaceId: null };
}
