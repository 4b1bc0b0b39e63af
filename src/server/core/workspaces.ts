import { SERVICE_VERSION } from '../../contract/common.js';
import type { Role, Workspace } from '../../contract/auth.js';
import type { Clock } from '../../lib/clock.js';
import { newId } from '../../lib/ids.js';
import type { AccountStore, MemberWorkspaceRow, WorkspaceRow } from '../store/accounts.js';
import { fail, invalidField } from './errors.js';

export function toWorkspace(w: WorkspaceRow, role: Role): Workspace {
  return { id: w.id, name: w.name, slug: w.slug, role, status: w.status };
}

/** Lowercase ASCII, non-alphanumerics collapsed to `-`, trimmed, 1–63 characters. */
export function slugify(name: string): string {
  const s = name
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 63)
    .replace(/-+$/, '');
  return s || 'workspace';
}

/** Workspaces: the one a signup or the seed creates, and the sandbox's new workspaces and status changes. */
export function createWorkspaces(deps: { store: AccountStore; clock: Clock }) {
  const { store, clock } = deps;

  function uniqueSlug(name: string): string {
    const base = slugify(name);
    if (!store.slugTaken(base)) return base;
    for (let i = 2; ; i++) {
      const suffix = `-${i}`;
      const s = base.slice(0, 63 - suffix.length).replace(/-+$/, '') + suffix;
      if (!store.slugTaken(s)) return s;
    }
  }

  /** Creates a workspace with `userId` in `role`. Call inside a transaction. */
  function create(userId: string, name: string, role: Role): MemberWorkspaceRow {
    const now = clock.now();
    const w: WorkspaceRow = {
      id: newId('ws'),
      name,
      slug: uniqueSlug(name),
      status: 'active',
      pinned_version: SERVICE_VERSION,
      created_at: now,
    };
    store.insertWorkspace(w);
    store.addMember(userId, w.id, role, now);
    return { ...w, role };
  }

  return {
    create,

    /** Sandbox: adds an existing user to a new workspace; an email no user has is a 422 naming `email`. */
    add(email: string, name: string, role: Role): Workspace {
      const user = store.userByEmail(email);
      if (!user) throw invalidField('email', 'no user has this email address; sign one up first (`svc signup`)');
      const w = store.transaction(() => create(user.id, name, role));
      return toWorkspace(w, role);
    },

    /** Sandbox: suspend, activate or close a workspace. */
    setStatus(id: string, status: WorkspaceRow['status']): Workspace {
      if (!store.setWorkspaceStatus(id, status)) fail('not_found', 'No workspace has this id.');
      const w = store.workspaceById(id)!;
      // The operator is no member: the Workspace shows the role of the user it was created for.
      return toWorkspace(w, store.firstMemberRole(id) ?? 'owner');
    },
  };
}
