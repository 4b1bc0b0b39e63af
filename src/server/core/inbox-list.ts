// Caught mail listed: the inbox's pages (filtered and searched), the outbox of `/v1` messages not caught yet, and the
// workspaces a filter can name.
import type { CaughtMessageSummary, OutboxMessage } from '../../contract/inbox.js';
import { iso } from '../../lib/clock.js';
import type { InboxStore, InboxSummaryRow } from '../store/inbox.js';
import { fail, unknownCursor } from './errors.js';
import { parseSearch } from './rules/search.js';

/** A caught message as the inbox lists it. */
export function summaryOf(r: InboxSummaryRow): CaughtMessageSummary {
  return {
    id: r.id,
    message_id: r.svc_message_id,
    from: r.from_addr,
    to: r.to_addrs,
    cc: r.cc_addrs,
    subject: r.subject,
    received_at: iso(r.received_at),
    size: r.size,
    status: r.status,
    workspace: r.workspace_id && r.workspace_name != null ? { id: r.workspace_id, name: r.workspace_name } : null,
    preview: r.preview,
    has_attachments: r.has_attachments === 1,
    read: r.read_at != null,
    claimed: r.claimed_at != null,
    tags: r.tags ?? [],
  };
}

export function createInboxList(deps: { store: InboxStore }) {
  const { store } = deps;

  /** The workspaces a filter names by id or name (404 when none has it); undefined: no filter. */
  function workspacesOf(q: { workspace_id?: string; workspace?: string }): string[] | undefined {
    if (q.workspace === undefined) return q.workspace_id === undefined ? undefined : [q.workspace_id];
    const named = store.workspacesNamed(q.workspace);
    if (named.length === 0) {
      fail('not_found', `No workspace has the id or name "${q.workspace.slice(0, 128)}"; \`svc whoami\` names yours.`);
    }
    return q.workspace_id ? named.filter((id) => id === q.workspace_id) : named;
  }

  return {
    /**
     * GET /sandbox/messages: newest first, filtered and searched, paged by the last id seen. `workspace` names a
     * workspace by id or name (404 when none has it).
     */
    list(q: {
      to?: string;
      workspace_id?: string;
      workspace?: string;
      since?: string;
      claimed?: 'true' | 'false';
      limit?: number;
      after?: string;
      q?: string;
    }) {
      const limit = q.limit ?? 20;
      const workspaceId = workspacesOf(q);
      if (workspaceId?.length === 0) return { data: [], has_more: false };
      const rows =
        store.list({
          to: q.to,
          workspaceId,
          since: q.since ? Date.parse(q.since) : undefined,
          claimed: q.claimed === undefined ? undefined : q.claimed === 'true',
          limit,
          after: q.after,
          search: q.q ? (parseSearch(q.q) ?? undefined) : undefined,
        }) ?? unknownCursor();
      return { data: rows.slice(0, limit).map(summaryOf), has_more: rows.length > limit };
    },

    /** GET /sandbox/outbox: the `/v1` messages not caught yet, the last sent first. */
    outbox(q: { to?: string; workspace?: string; limit?: number }): { data: OutboxMessage[]; has_more: boolean } {
      const limit = q.limit ?? 20;
      const workspaceId = workspacesOf(q);
      if (workspaceId?.length === 0) return { data: [], has_more: false };
      const rows = store.outbox({ to: q.to, workspaceId, limit: limit + 1 });
      return {
        data: rows.slice(0, limit).map((r) => ({
          id: r.id,
          status: r.status,
          from: r.from_header,
          to: r.to_addrs,
          cc: r.cc_addrs,
          subject: r.subject,
          created_at: iso(r.created_at),
          scheduled_at: r.scheduled_at === null ? null : iso(r.scheduled_at),
          workspace: { id: r.workspace_id, name: r.workspace_name },
        })),
        has_more: rows.length > limit,
      };
    },

    workspacesOf,
    /** The workspaces whose mail the inbox holds, by name (the inbox's workspace filter). */
    workspaces: () => store.workspaces(),
  };
}
