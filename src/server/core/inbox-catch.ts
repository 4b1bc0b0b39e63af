// Caught mail stored: what the SMTP sink hands over, kept with its search entry before the sink answers.
import type { Clock } from '../../lib/clock.js';
import { timeOrderedIds } from '../../lib/ids.js';
import type { GroupCommit } from '../store/db.js';
import type { InboxAttachment, InboxStore } from '../store/inbox.js';
import type { WaitedRow } from './inbox-wait.js';
import type { CaughtOrigin } from './rules/message-ids.js';
import { tagsField } from './rules/search.js';

/** A message as the SMTP sink hands it over: its envelope, its header fields and a glance at its body. */
export interface CaughtMail {
  raw: Buffer;
  /** The envelope, and the client that gave it: its address and the name it said HELO/EHLO with. */
  envelope: { mailFrom: string | null; rcptTo: string[]; clientIp?: string | null; helo?: string | null };
  messageIdHeader: string | null;
  from: string | null;
  to: string[];
  cc: string[];
  subject: string | null;
  /** Every header field, in order. */
  headers: { name: string; value: string }[];
  /** Whether it has a DKIM-Signature field (verified when the message is first read). */
  signed: boolean;
  preview: string | null;
  hasAttachments: boolean;
  /** The body text the search finds it by. */
  text: string;
  /** The workspace whose API key the sending client logged in with (AUTH); null or absent for anonymous mail. */
  workspaceId?: string | null;
}

export interface CatchDeps {
  store: InboxStore;
  clock: Clock;
  /** Group commit for caught mail (one commit for the messages caught in one turn); without it, one transaction each. */
  commit?: GroupCommit;
  /** Reads a Message-ID header: the `/v1` message it carries, or the service's own mail (a second copy is ignored). */
  origin?: (messageIdHeader: string) => CaughtOrigin;
  /** Called after a message is stored. */
  onCaught?: (id: string) => void;
  /** Wakes the waits held for caught mail that might take this message, once it is committed (inbox-wait.ts caught). */
  caught?: (row: WaitedRow) => void;
  /** Resolves once the waits held for caught mail have what the catch woke them with (inbox-wait.ts served). */
  served?: () => Promise<void>;
  /**
   * Called in the transaction that stores a message, for work that must commit with it (a relay rule's job); what it
   * throws is caught there, so that it never costs the message.
   */
  onStored?: (caught: StoredCatch) => void;
}

/** Up to this size, a message a held wait takes is read for it before the sink answers the sender. */
const SERVED_FIRST_BYTES = 1024 * 1024;

/** What onStored is told of a message it stores. */
export interface StoredCatch {
  id: string;
  svc_message_id: string | null;
  mail_from: string | null;
  rcpt_to: string[];
}

/**
 * The inbox's `catch`: stores a caught message and its search entry before the sink answers; its id, or null for a
 * second copy of the service's own mail (same Message-ID), which is not stored.
 */
export function createCatch(deps: CatchDeps): (mail: CaughtMail) => Promise<string | null> {
  const { store, clock } = deps;
  // Ids in the order mail arrived, after those already kept, whatever the clock does (docs/api.md).
  const nextId = timeOrderedIds('eml', store.newestId());
  const storedHook = (caught: StoredCatch) => {
    try {
      deps.onStored?.(caught);
    } catch {
      // Its own work failed, not the catch: core/relay.ts logs what it could not do.
    }
  };

  return async (mail) => {
    const origin = mail.messageIdHeader ? deps.origin?.(mail.messageIdHeader) : undefined;
    // Time-ordered: caught mail arrives fast and in order, and each id lands at the end of the table's id index.
    const now = clock.now();
    const id = nextId(now);
    const caught = {
      id,
      message_id_header: mail.messageIdHeader,
      svc_message_id: origin?.messageId ?? null,
      from_service: origin?.fromService ? 1 : 0,
      // A `/v1` message is its sender's; other mail is the workspace whose key the client logged in with, if any.
      workspace_id: origin?.workspaceId ?? mail.workspaceId ?? null,
      mail_from: mail.envelope.mailFrom,
      rcpt_to: mail.envelope.rcptTo,
      client_ip: mail.envelope.clientIp ?? null,
      helo: mail.envelope.helo ?? null,
      from_addr: mail.from,
      to_addrs: mail.to,
      cc_addrs: mail.cc,
      subject: mail.subject,
      text: null,
      html: null,
      headers: mail.headers,
      parsed: 0,
      attachments: [] as InboxAttachment[],
      // Signatures are verified when the message is first read (inbox-read.ts firstRead): most caught mail is never
      // opened, and verification is the largest part of catching a message.
      dkim: mail.signed ? 'pending' : 'none',
      size: mail.raw.length,
      raw: mail.raw,
      received_at: now,
      preview: mail.preview,
      has_attachments: mail.hasAttachments ? 1 : 0,
      tags: tagsField(mail.headers),
    } as const;
    const index = { body: mail.text };
    const commit = deps.commit;
    const stored = commit
      ? await commit(() => {
          const seq = store.add(caught);
          // The search entry is written at the end of the transaction, with those of the other messages it commits.
          // FTS5 writes out what it holds at every savepoint, and each write of a group commit has its own, so entries
          // written with their messages made one index segment (and merges) a message: replaying the sink's writes
          // eight messages a commit, the index cost 75–84 µs a message that way and 36–43 µs at the end.
          if (seq !== null) commit.atEnd(() => store.index(seq, caught, index));
          if (seq !== null) storedHook(caught);
          return seq !== null;
        })
      : store.insert(caught, index);
    // Without a group commit (core's tests), what commits with a message runs once it is stored.
    if (stored && !commit) storedHook(caught);
    if (!stored) return null;
    deps.onCaught?.(id);
    deps.caught?.(caught);
    // A test waiting for this message has it before the sink answers the sender (a big one's read would keep the
    // sender waiting: it is answered first).
    if (mail.raw.length <= SERVED_FIRST_BYTES) await deps.served?.();
    return id;
  };
}
