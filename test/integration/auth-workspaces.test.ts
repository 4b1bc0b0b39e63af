// Several workspaces per user, roles, and workspace suspension, as sessions see them.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { claimsOf, expectProblem, login, newUser, refresh } from './auth-helpers.js';

const me = (s: TestServer, token: string) => s.call('GET', '/v1/auth/me', { token });
const listKeys = (s: TestServer, token: string) => s.call('GET', '/v1/api-keys', { token });
const createKey = (s: TestServer, token: string, name = 'ci') =>
  s.call('POST', '/v1/api-keys', { token, body: { name, scopes: ['emails:send'] } });

async function addWorkspace(s: TestServer, email: string, name: string, role: 'owner' | 'admin' | 'member') {
  const r = await s.admin('POST', '/sandbox/workspaces', { email, name, role });
  expect(r.status, r.text).toBe(201);
  return r.body as { id: string; name: string; slug: string; role: string; status: string };
}

describe('a user in several workspaces', () => {
  let s: TestServer;
  let u: Awaited<ReturnType<typeof newUser>>;
  let w1: { id: string };
  let w2: { id: string; name: string; slug: string; role: string; status: string };
  beforeAll(async () => {
    s = await startTestServer({ openSignup: true });
    u = await newUser(s, { workspace_name: 'First Co', ip: null });
    w1 = u.workspace;
    w2 = await addWorkspace(s, u.email, 'Second Co', 'admin');
  });
  afterAll(() => s.close());

  it('the sandbox adds the user to a new workspace with the given role', () => {
    expect(w2.id).toMatch(/^ws_[0-9A-Za-z]{24}$/);
    expect(w2).toMatchObject({ name: 'Second Co', slug: 'second-co', role: 'admin', status: 'active' });
  });

  it('login without workspace_id: 200 with both workspaces listed and none selected', async () => {
    const r = await login(s, u.email, u.password);
    expect(r.status, r.text).toBe(200);
    expect(r.body).not.toHaveProperty('workspace');
    expect(r.body.workspaces).toHaveLength(2);
    const byId = Object.fromEntries(r.body.workspaces.map((w: { id: string; role: string }) => [w.id, w.role]));
    expect(byId).toEqual({ [w1.id]: 'owner', [w2.id]: 'admin' });
    expect(claimsOf(r.body.access_token).ws).toBeUndefined();

    // The account itself is reachable ...
    const who = await me(s, r.body.access_token);
    expect(who.status).toBe(200);
    expect(who.body.user.id).toBe(u.user.id);
    // ... workspace-scoped endpoints are not.
    expectProblem(await listKeys(s, r.body.access_token), 403, 'workspace_required');
    expectProblem(await createKey(s, r.body.access_token), 403, 'workspace_required');
  });

  it('refresh with workspace_id selects that workspace; later refreshes keep it', async () => {
    const li = await login(s, u.email, u.password);
    const r = await refresh(s, li.body.refresh_token, w2.id);
    expect(r.status, r.text).toBe(200);
    expect(r.body.workspace).toMatchObject({ id: w2.id, role: 'admin', status: 'active' });
    expect(r.body.workspaces).toHaveLength(2);
    expect(claimsOf(r.body.access_token).ws).toBe(w2.id);
    const keys = await listKeys(s, r.body.access_token);
    expect(keys.status, keys.text).toBe(200);
    expect(keys.body.data).toEqual([]); // the second workspace's keys, not the first's

    const next = await refresh(s, r.body.refresh_token);
    expect(next.status).toBe(200);
    expect(next.body.workspace.id).toBe(w2.id);

    // And switching back.
    const back = await refresh(s, next.body.refresh_token, w1.id);
    expect(back.status).toBe(200);
    expect(back.body.workspace).toMatchObject({ id: w1.id, role: 'owner' });
    expect(claimsOf(back.body.access_token).ws).toBe(w1.id);
  });

  it('login with workspace_id selects it', async () => {
    const r = await login(s, u.email, u.password, { workspace_id: w2.id });
    expect(r.status, r.text).toBe(200);
    expect(r.body.workspace).toMatchObject({ id: w2.id, role: 'admin' });
    expect(r.body.workspaces).toHaveLength(2);
    expect(claimsOf(r.body.access_token).ws).toBe(w2.id);
    expect((await listKeys(s, r.body.access_token)).status).toBe(200);
  });

  it('a workspace_id the user is not a member of: 403 not_a_member at login and refresh', async () => {
    const stranger = s.seed!.workspace_id; // exists, but belongs to the seeded owner
    expectProblem(await login(s, u.email, u.password, { workspace_id: stranger }), 403, 'not_a_member');
    expectProblem(
      await login(s, u.email, u.password, { workspace_id: 'ws_doesnotexist000000000000' }),
      403,
      'not_a_member',
    );

    const li = await login(s, u.email, u.password);
    expectProblem(await refresh(s, li.body.refresh_token, stranger), 403, 'not_a_member');
  });

  it('the right password is still required with a workspace_id', async () => {
    expectProblem(await login(s, u.email, 'wrong password!!', { workspace_id: w1.id }), 401, 'invalid_credentials');
  });
});

describe('roles', () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer({ openSignup: true });
  });
  afterAll(() => s.close());

  it('a member may list keys but not create or revoke them: 403 forbidden', async () => {
    const u = await newUser(s, { ip: null });
    const ws = await addWorkspace(s, u.email, 'Readers', 'member');
    expect(ws.role).toBe('member');
    // A key in that workspace, made by the service itself (no owner or admin there can make one over HTTP).
    const key = s.core.keys.create(ws.id, null, { name: 'existing', scopes: ['emails:send'] });

    const li = await login(s, u.email, u.password, { workspace_id: ws.id });
    expect(li.status, li.text).toBe(200);
    expect(li.body.workspace.role).toBe('member');
    expect(li.body.user.role).toBe('member');
    const token = li.body.access_token;

    const list = await listKeys(s, token);
    expect(list.status, list.text).toBe(200);
    expect(list.body.data.map((k: { id: string }) => k.id)).toEqual([key.id]);

    expectProblem(await createKey(s, token), 403, 'forbidden');
    expectProblem(await s.call('DELETE', `/v1/api-keys/${key.id}`, { token }), 403, 'forbidden');

    // Nothing changed.
    const after = await listKeys(s, token);
    expect(after.body.data).toHaveLength(1);
    expect(after.body.data[0].revoked).toBe(false);
  });

  it('an owner and an admin may create and revoke keys', async () => {
    const u = await newUser(s, { ip: null });
    const ownerToken = u.session.access_token;
    const made = await createKey(s, ownerToken);
    expect(made.status, made.text).toBe(201);
    expect((await s.call('DELETE', `/v1/api-keys/${made.body.id}`, { token: ownerToken })).status).toBe(204);

    const ws = await addWorkspace(s, u.email, 'Admins', 'admin');
    const li = await login(s, u.email, u.password, { workspace_id: ws.id });
    const adminToken = li.body.access_token;
    const made2 = await createKey(s, adminToken);
    expect(made2.status, made2.text).toBe(201);
    expect((await s.call('DELETE', `/v1/api-keys/${made2.body.id}`, { token: adminToken })).status).toBe(204);
  });

  it('the role follows the selected workspace: the same user is owner in one and member in another', async () => {
    const u = await newUser(s, { ip: null });
    const ws = await addWorkspace(s, u.email, 'Other', 'member');
    const li = await login(s, u.email, u.password);
    const asMember = await refresh(s, li.body.refresh_token, ws.id);
    expectProblem(await createKey(s, asMember.body.access_token), 403, 'forbidden');
    const asOwner = await refresh(s, asMember.body.refresh_token, u.workspace.id);
    expect((await createKey(s, asOwner.body.access_token)).status).toBe(201);
  });
});

describe('workspace suspension', () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer({ openSignup: true });
  });
  afterAll(() => s.close());

  it('a suspended workspace gets 403 workspace_suspended on workspace-scoped calls; /auth/* still works; activate restores', async () => {
    const u = await newUser(s, { ip: null });
    const token = u.session.access_token;
    const ws = u.workspace.id;
    expect((await listKeys(s, token)).status).toBe(200);

    const sus = await s.admin('POST', `/sandbox/workspaces/${ws}/suspend`);
    expect(sus.status, sus.text).toBe(200);
    expect(sus.body).toMatchObject({ id: ws, status: 'suspended' });

    // An access token issued before the suspension is refused right away.
    expectProblem(await listKeys(s, token), 403, 'workspace_suspended');
    expectProblem(await createKey(s, token), 403, 'workspace_suspended');
    expectProblem(await s.call('DELETE', '/v1/api-keys/key_whatever', { token }), 403, 'workspace_suspended');

    // The account endpoints still work, and show the status.
    const who = await me(s, token);
    expect(who.status, who.text).toBe(200);
    expect(who.body.user.id).toBe(u.user.id);
    const li = await login(s, u.email, u.password);
    expect(li.status, li.text).toBe(200);
    expect(li.body.workspace).toMatchObject({ id: ws, status: 'suspended' });
    const rf = await refresh(s, li.body.refresh_token);
    expect(rf.status, rf.text).toBe(200);
    expect((await s.call('POST', '/v1/auth/resend-verification', { token })).status).toBe(202);
    // A fresh session is refused on workspace-scoped calls too.
    expectProblem(await listKeys(s, rf.body.access_token), 403, 'workspace_suspended');

    const act = await s.admin('POST', `/sandbox/workspaces/${ws}/activate`);
    expect(act.status, act.text).toBe(200);
    expect(act.body).toMatchObject({ id: ws, status: 'active' });
    expect((await listKeys(s, token)).status).toBe(200);
    expect((await createKey(s, rf.body.access_token)).status).toBe(201);
  });

  it('an API key of a suspended workspace gets 403 workspace_suspended too (GET /v1/domains); activate restores', async () => {
    const key = s.seed!.api_key_test;
    const before = await s.call('GET', '/v1/domains', { token: key });
    expect(before.status, before.text).toBe(200);

    expect((await s.admin('POST', `/sandbox/workspaces/${s.seed!.workspace_id}/suspend`)).status).toBe(200);
    expectProblem(await s.call('GET', '/v1/domains', { token: key }), 403, 'workspace_suspended');
    expectProblem(await s.call('GET', '/v1/domains', { token: s.seed!.api_key_live }), 403, 'workspace_suspended');
    // The owner's session is refused on the same endpoint, while /auth/me answers.
    const li = await login(s, s.seed!.email, s.seed!.password);
    expect(li.status).toBe(200);
    expectProblem(await s.call('GET', '/v1/domains', { token: li.body.access_token }), 403, 'workspace_suspended');
    expect((await me(s, li.body.access_token)).status).toBe(200);

    expect((await s.admin('POST', `/sandbox/workspaces/${s.seed!.workspace_id}/activate`)).status).toBe(200);
    const after = await s.call('GET', '/v1/domains', { token: key });
    expect(after.status, after.text).toBe(200);
  });

  it('suspending one workspace leaves the user’s other workspaces working', async () => {
    const u = await newUser(s, { ip: null });
    const other = await addWorkspace(s, u.email, 'Unaffected', 'owner');
    expect((await s.admin('POST', `/sandbox/workspaces/${u.workspace.id}/suspend`)).status).toBe(200);
    const li = await login(s, u.email, u.password, { workspace_id: other.id });
    expect((await listKeys(s, li.body.access_token)).status).toBe(200);
    expectProblem(await listKeys(s, u.session.access_token), 403, 'workspace_suspended');
  });

  it('a closed workspace is refused too', async () => {
    const u = await newUser(s, { ip: null });
    const r = await s.admin('POST', `/sandbox/workspaces/${u.workspace.id}/close`);
    expect(r.status).toBe(200);
    expect(r.body.status).toBe('closed');
    const refused = await listKeys(s, u.session.access_token);
    expect(refused.status).toBe(403);
    expect(refused.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect((await me(s, u.session.access_token)).status).toBe(200);
  });

  it('unknown workspace in the sandbox: 404', async () => {
    const r = await s.admin('POST', '/sandbox/workspaces/ws_nope/suspend');
    expectProblem(r, 404, 'not_found');
  });
});
