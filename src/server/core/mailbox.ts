// Caught mail as a mail client reads it, over POP3 and IMAP (inbound/pop3/, inbound/imap/): who logs in, which
// mailboxes they see, the messages of each in pages (a mailbox of 10,000 messages is never held whole), a message's
// source, and the read mark and deletion the inbox page shows — the one inbox, so `\Seen` in a client is "read" on the
// page and back. The rules of a login are SMTP submission's: an API key of a workspace as the password (any username),
// or the admin token for every workspace, the failed logins of an address throttled as sign-in's are.
import type { endpoints } from '../../contract/endpoints.js';
import type { Changes } from '../../lib/changes.js';
import type { Clock } from '../../lib/clock.js';
import type { InboxStore, MailboxRow } from '../store/inbox.js';
import type { Access } from './access.js';
import type { Inbox } from './inbox.js';

/** Who logged in: the admin (every workspace's mail) or an API key's workspace (its mail). */
export type MailboxOwner = { kind: 'admin' } | { kind: 'workspace'; workspaceId: string };

/** A mailbox a login sees: `INBOX`, and for the admin one more per workspace with caught mail, named after it. */
export interface MailboxFolder {
  name: string;
  /** Whose mail it holds; null: every caught message (the admin's INBOX). */
  workspaceId: string | null;
}

/** A message of a mailbox, as a client lists it before reading it. */
export interface MailboxEntry {
  /** Its IMAP UID: the order it was caught in, never reused. (POP3's UIDL is the id: a new data directory numbers anew.) */
  uid: number;
  id: string;
  size: number;
  receivedAt: number;
  seen: boolean;
}

/** How many entries a page holds: a listing of a big mailbox is read a page at a time. */
export const MAILBOX_PAGE = 500;

/** A login needs an API key of a workspace, of any scope, as reading the inbox of its workspace needs. */
const KEY_LOGIN = { auth: 'key', workspace: true } as const satisfies Pick<
  (typeof endpoints)['sendEmail'],
  'auth' | 'workspace'
>;

export function createMailbox(deps: {
  store: InboxStore;
  inbox: Inbox;
  access: Access;
  clock: Clock;
  changes: Changes;
}) {
  const { store, inbox, access, changes } = deps;
  const entryOf = (r: MailboxRow): MailboxEntry => ({
    uid: r.seq,
    id: r.id,
    size: r.size,
    receivedAt: r.received_at,
    seen: r.read_at !== null,
  });

  return {
    /**
     * The owner `password` logs in as: the admin token (compared in constant time, by `isAdminToken`) or an API key of
     * a workspace. A refusal is core's ServiceError: `rate_limited` after too many failed logins from `ip` (with the
     * wait), `invalid_token` for a password that is neither, or why a key may not be used.
     */
    async login(password: string, ip: string, isAdminToken: (password: string) => boolean): Promise<MailboxOwner> {
      if (isAdminToken(password)) return { kind: 'admin' };
      const caller = await access.login(KEY_LOGIN, password, ip);
      return { kind: 'workspace', workspaceId: caller.workspace.id };
    },

    /** The mailboxes `owner` sees, INBOX first. */
    folders(owner: MailboxOwner): MailboxFolder[] {
      if (owner.kind === 'workspace') return [{ name: 'INBOX', workspaceId: owner.workspaceId }];
      return [
        { name: 'INBOX', workspaceId: null },
        ...inbox.workspaces().map((w) => ({ name: w.name, workspaceId: w.id })),
      ];
    },

    /** The entries of `folder` after UID `afterUid`, oldest first, at most `limit` (a page). */
    page(folder: MailboxFolder, afterUid = 0, limit = MAILBOX_PAGE): MailboxEntry[] {
      return store.mailboxPage(folder.workspaceId, afterUid, limit).map(entryOf);
    },

    /** Every entry of `folder`, a page at a time. */
    *entries(folder: MailboxFolder, afterUid = 0): Generator<MailboxEntry> {
      for (let after = afterUid; ; ) {
        const rows = store.mailboxPage(folder.workspaceId, after, MAILBOX_PAGE);
        for (const r of rows) yield entryOf(r);
        if (rows.length < MAILBOX_PAGE) return;
        after = rows[rows.length - 1]!.seq;
      }
    },

    /** How many messages `folder` holds, and the UID the next caught message will get (IMAP's UIDNEXT). */
    status(folder: MailboxFolder): { count: number; uidNext: number } {
      return { count: store.mailboxStats(folder.workspaceId).count, uidNext: store.nextSeq() };
    },

    /** The number that tells a client whether its cached UIDs still hold (IMAP's UIDVALIDITY): one per database. */
    uidValidity: () => store.mailboxEpoch(Math.floor(deps.clock.now() / 1000)),

    /** A message's source as it was caught; null once it is gone (deleted by another client, or pruned). */
    source: (id: string): Buffer | null => store.raw(id) ?? null,

    /** Marks a message read (`\Seen`) or unread: the inbox page shows it, as its own mark shows in the client. */
    setSeen(id: string, seen: boolean): void {
      inbox.markRead(id, seen);
    },

    /** Deletes a message as the inbox page's delete does (POP3's DELE at QUIT, IMAP's EXPUNGE). */
    remove(id: string): void {
      inbox.remove(id);
    },

    /**
     * Calls `fn` whenever a mailbox may have changed: mail caught, a message deleted or marked (here, on the page, or
     * by another client). For IMAP's IDLE and its untagged updates; returns the unsubscribe function.
     */
    watch(fn: () => void): () => void {
      const offCaught = changes.subscribe('sink', fn);
      const offInbox = inbox.listen(fn);
      return () => {
        offCaught();
        offInbox();
      };
    },
  };
}
export type Mailbox = ReturnType<typeof createMailbox>;
