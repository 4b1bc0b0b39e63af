// The rules of caught mail as mail clients read it (docs/mailbox.md) on core over `:memory:`: who a password logs in
// as, which mailboxes each sees, UIDs that are never reused, pages of a big mailbox, and the read mark and deletion
// shared with the inbox page.
import { afterEach, describe, expect, it } from 'vitest';
import { SCOPES } from '../../contract/keys.js';
import { caughtMail, memoryCore, type MemoryCore } from '../../../test/helpers/core.js';
import { MAILBOX_PAGE, type MailboxOwner } from './mailbox.js';

let c: MemoryCore;
afterEach(() => c.close());

const ADMIN = 'adm_the-admin-token';
const isAdmin = (p: string) => p === ADMIN;

const catchOne = async (subject: string, workspaceId: string | null) =>
  (await c.core.inbox.catch(caughtMail({ subject, workspaceId })))!;

/** A second account's workspace and a key of it. */
async function otherWorkspace() {
  const { user, workspace } = await c.core.accounts.seedOwner('bo@example.test', 'sandbox-password-2', 'Other');
  const { key } = c.core.keys.create(workspace.id, user.id, { name: 'k', scopes: [...SCOPES], mode: 'test' });
  return { workspaceId: workspace.id, key };
}

describe('a login', () => {
  it('is the admin with the admin token, a workspace with one of its API keys, refused otherwise', async () => {
    c = await memoryCore();
    const { mailbox, keys } = c.core;
    const { key } = keys.create(c.seed.workspaceId, c.seed.userId, { name: 'mail', scopes: [], mode: 'live' });
    expect(await mailbox.login(ADMIN, '127.0.0.1', isAdmin)).toEqual({ kind: 'admin' });
    expect(await mailbox.login(key, '127.0.0.1', isAdmin)).toEqual({
      kind: 'workspace',
      workspaceId: c.seed.workspaceId,
    });
    await expect(mailbox.login('hunter2', '127.0.0.1', isAdmin)).rejects.toMatchObject({ code: 'invalid_token' });
  });

  it('is refused for a while after too many failed logins from one address, as SMTP AUTH is', async () => {
    c = await memoryCore();
    const failures = [];
    for (let i = 0; i < 30; i++) failures.push(c.core.mailbox.login('wrong', '10.0.0.7', isAdmin).catch((e) => e.code));
    expect(new Set(await Promise.all(failures))).toEqual(new Set(['invalid_token']));
    await expect(c.core.mailbox.login('wrong', '10.0.0.7', isAdmin)).rejects.toMatchObject({ code: 'rate_limited' });
    // Another address is not held back.
    await expect(c.core.mailbox.login('wrong', '10.0.0.8', isAdmin)).rejects.toMatchObject({ code: 'invalid_token' });
  });
});

describe('the mailboxes', () => {
  it('a workspace sees its own mail in INBOX; the admin every message, and one folder per workspace', async () => {
    c = await memoryCore();
    const other = await otherWorkspace();
    const mine = await catchOne('mine', c.seed.workspaceId);
    const theirs = await catchOne('theirs', other.workspaceId);
    const nobodys = await catchOne('anonymous', null);
    const owner = await c.core.mailbox.login(other.key, '127.0.0.1', isAdmin);
    const ids = (o: MailboxOwner, i = 0) => [...c.core.mailbox.entries(c.core.mailbox.folders(o)[i]!)].map((e) => e.id);

    expect(c.core.mailbox.folders(owner)).toEqual([{ name: 'INBOX', workspaceId: other.workspaceId }]);
    expect(ids(owner)).toEqual([theirs]);
    const admin = { kind: 'admin' } as const;
    expect(c.core.mailbox.folders(admin).map((f) => f.name)).toEqual(['INBOX', 'Other', 'Sandbox']);
    expect(ids(admin)).toEqual([mine, theirs, nobodys]);
    expect(ids(admin, 2)).toEqual([mine]);
  });

  it('gives UIDs in the order mail was caught, never reused after a deletion; UIDVALIDITY stays', async () => {
    c = await memoryCore();
    const inbox = { name: 'INBOX', workspaceId: null };
    const a = await catchOne('a', null);
    const b = await catchOne('b', null);
    const validity = c.core.mailbox.uidValidity();
    const [ua, ub] = [...c.core.mailbox.entries(inbox)].map((e) => e.uid);
    expect(ub).toBeGreaterThan(ua!);
    c.core.mailbox.remove(b);
    expect(c.core.mailbox.status(inbox)).toEqual({ count: 1, uidNext: ub! + 1 });
    await catchOne('c', null);
    const uids = [...c.core.mailbox.entries(inbox)].map((e) => e.uid);
    expect(uids).toEqual([ua, ub! + 1]);
    expect(c.core.mailbox.uidValidity()).toBe(validity);
    expect(c.core.mailbox.source(a)?.toString()).toContain('Subject: a');
    expect(c.core.mailbox.source(b)).toBeNull();
  });

  it('lists a big mailbox a page at a time, after a UID', async () => {
    c = await memoryCore();
    const inbox = { name: 'INBOX', workspaceId: null };
    for (let i = 0; i < MAILBOX_PAGE + 3; i++) await catchOne(`m${i}`, null);
    const all = [...c.core.mailbox.entries(inbox)];
    expect(all).toHaveLength(MAILBOX_PAGE + 3);
    expect(c.core.mailbox.page(inbox)).toHaveLength(MAILBOX_PAGE);
    expect(c.core.mailbox.page(inbox, all[MAILBOX_PAGE]!.uid).map((e) => e.uid)).toEqual(
      all.slice(MAILBOX_PAGE + 1).map((e) => e.uid),
    );
  });

  it("shares the inbox page's read mark both ways, and tells a watcher of mail caught, marked and deleted", async () => {
    c = await memoryCore();
    const inbox = { name: 'INBOX', workspaceId: null };
    let told = 0;
    const stop = c.core.mailbox.watch(() => told++);
    const id = await catchOne('x', null);
    await new Promise((r) => setImmediate(r)); // the change signal runs its listeners after the turn
    expect(told).toBe(1);
    c.core.mailbox.setSeen(id, true);
    expect(c.core.inbox.list({}).data[0]).toMatchObject({ id, read: true });
    c.core.inbox.markRead(id, false);
    expect([...c.core.mailbox.entries(inbox)][0]!.seen).toBe(false);
    c.core.mailbox.remove(id);
    expect(told).toBe(4); // caught, read, unread, deleted
    expect(c.core.mailbox.source(id)).toBeNull();
    expect(c.core.inbox.list({}).data).toEqual([]);
    stop();
  });
});
