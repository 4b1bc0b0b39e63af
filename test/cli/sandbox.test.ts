// svc sandbox … against the real server with its admin token: each command's effect is checked where a user would
// see it (a signup with the printed invite code, a suspended workspace refused, a domain verified after a publish,
// deliveries signed with the printed secret, an empty sink).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Workspace } from '../../src/contract/auth.js';
import { verifyWebhook } from '../../src/contract/signature.js';
import { ClockState, MovedClock } from '../../src/contract/clock.js';
import { Invite } from '../../src/contract/workspaces.js';
import { WebhookEndpoint } from '../../src/contract/webhook-endpoints.js';
import { sandboxChaosClearRun, sandboxChaosListRun, sandboxChaosSetRun } from '../../src/cli/commands/sandbox/chaos.js';
import { sandboxClockRun } from '../../src/cli/commands/sandbox/clock.js';
import { sandboxDnsPublishRun, sandboxDnsRemoveRun, sandboxDnsSetRun } from '../../src/cli/commands/sandbox/dns.js';
import { sandboxInvitesCreateRun } from '../../src/cli/commands/sandbox/invites.js';
import { sandboxMessagesClearRun } from '../../src/cli/commands/sandbox/messages.js';
import {
  sandboxWebhooksAddRun,
  sandboxWebhooksEnableRun,
  sandboxWebhooksListRun,
  sandboxWebhooksRemoveRun,
  sandboxWebhooksRotateSecretRun,
} from '../../src/cli/commands/sandbox/webhooks.js';
import { sandboxWorkspacesCreateRun, sandboxWorkspaceStatusRun } from '../../src/cli/commands/sandbox/workspaces.js';
import { startReceiver, type Receiver } from '../helpers/receiver.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { cli, tempDirs } from './helpers.js';

describe('svc sandbox', () => {
  let s: TestServer;
  let rx: Receiver;
  const dirs = tempDirs();
  let configDir: string;
  beforeAll(async () => {
    s = await startTestServer();
    rx = await startReceiver();
    configDir = dirs.make();
  });
  afterAll(async () => {
    await rx.close();
    await s.close();
    dirs.cleanup();
  });

  const admin = (o: Partial<Parameters<typeof cli>[1]> = {}) =>
    cli(s, { configDir, ...o, env: { SVC_ADMIN_TOKEN: s.adminToken, ...o.env } });
  const key = () => s.seed!.api_key_test;
  const signup = (code: string, label: string) =>
    s.call('POST', '/v1/auth/signup', {
      body: {
        email: `${label}@example.org`,
        password: `pw-${label}-long-enough-1`,
        workspace_name: label,
        invite_code: code,
      },
    });
  const login = async (workspaceId: string) =>
    (
      await s.call('POST', '/v1/auth/login', {
        body: { email: s.seed!.email, password: s.seed!.password, workspace_id: workspaceId },
      })
    ).body.access_token as string;

  it('invites create prints a code that signs up, as many times as --max-uses says', async () => {
    const one = await admin();
    expect(await one.run(sandboxInvitesCreateRun, {})).toBe(0);
    const code = one.stdout().trim();
    expect(one.stderr()).toMatch(
      new RegExp(`^Invite inv_\\w+: one signup\\. Use it with: svc signup --invite-code ${code}\\n$`),
    );
    expect((await signup(code, 'first')).status).toBe(201);
    expect((await signup(code, 'second')).body.code).toBe('invite_required');

    const two = await admin({ globals: { json: true } });
    expect(await two.run(sandboxInvitesCreateRun, { maxUses: 2, expiresAt: '2099-01-01T00:00:00Z' })).toBe(0);
    const invite = Invite.parse(JSON.parse(two.stdout()));
    expect(invite).toMatchObject({ max_uses: 2, expires_at: '2099-01-01T00:00:00.000Z' });
    expect((await signup(invite.code, 'third')).status).toBe(201);
    expect((await signup(invite.code, 'fourth')).status).toBe(201);
    expect((await signup(invite.code, 'fifth')).status).toBe(403);
  });

  it('workspaces create adds the user to a new workspace; suspend refuses its calls, activate lets them through again', async () => {
    const c = await admin();
    expect(await c.run(sandboxWorkspacesCreateRun, { email: s.seed!.email, name: 'Second shop', role: 'admin' })).toBe(
      0,
    );
    const fields = Object.fromEntries(
      c
        .stdout()
        .trimEnd()
        .split('\n')
        .map((l) => l.split('\t')),
    );
    expect(fields).toMatchObject({ name: 'Second shop', slug: 'second-shop', role: 'admin', status: 'active' });
    const ws = fields.id as string;

    const suspend = await admin();
    expect(await suspend.run(sandboxWorkspaceStatusRun, { id: ws, action: 'suspend' })).toBe(0);
    expect(suspend.stdout()).toBe(`${ws}\tsuspended\n`);
    const refused = await s.call('GET', '/v1/domains', { token: await login(ws) });
    expect([refused.status, refused.body.code]).toEqual([403, 'workspace_suspended']);

    const activate = await admin({ globals: { json: true } });
    expect(await activate.run(sandboxWorkspaceStatusRun, { id: ws, action: 'activate' })).toBe(0);
    expect(Workspace.parse(JSON.parse(activate.stdout())).status).toBe('active');
    expect((await s.call('GET', '/v1/domains', { token: await login(ws) })).status).toBe(200);

    const close = await admin({ tty: true, env: { NO_COLOR: '1' } });
    expect(await close.run(sandboxWorkspaceStatusRun, { id: ws, action: 'close' })).toBe(0);
    expect(close.stdout()).toBe(`${ws}  closed\n`);

    const unknown = await admin();
    expect(
      await unknown.run(
        sandboxWorkspacesCreateRun,
        { email: 'nobody@example.org', name: 'X', role: 'member' },
        'svc sandbox workspaces create',
      ),
    ).toBe(1);
    expect(unknown.stderr()).toMatch(/^error: svc sandbox workspaces create: .*\[\w+, req_\w+\]/);
  });

  it('clock shows the service clock; advance and set move it and run what became due', async () => {
    const show = await admin();
    expect(await show.run(sandboxClockRun, {})).toBe(0);
    const before = Object.fromEntries(
      show
        .stdout()
        .trimEnd()
        .split('\n')
        .map((l) => l.split('\t')),
    );
    expect(before.mode).toBe('manual');

    const at = new Date(Date.parse(before.now) + 30 * 60_000).toISOString();
    const scheduled = await s.call('POST', '/v1/emails', {
      token: key(),
      body: { from: 'orders@example.test', to: 'later@example.org', subject: 'Later', text: 'x', scheduled_at: at },
    });
    expect(scheduled.body.status).toBe('scheduled');

    const advance = await admin();
    expect(await advance.run(sandboxClockRun, { advance: 3_600_000 })).toBe(0);
    expect(advance.stdout()).toBe(`${new Date(Date.parse(before.now) + 3_600_000).toISOString()}\n`);
    expect(advance.stderr()).toMatch(/^The clock reads \S+; [1-9]\d* jobs? that became due ran\.\n$/);
    expect((await s.call('GET', `/v1/emails/${scheduled.body.id}`, { token: key() })).body.status).toBe('delivered');

    const set = await admin({ globals: { json: true } });
    expect(await set.run(sandboxClockRun, { to: '2030-01-01T10:00:00+02:00' })).toBe(0);
    expect(MovedClock.parse(JSON.parse(set.stdout())).now).toBe('2030-01-01T08:00:00.000Z');
    const json = await admin({ globals: { json: true } });
    expect(await json.run(sandboxClockRun, {})).toBe(0);
    expect(ClockState.parse(JSON.parse(json.stdout()))).toEqual({ now: '2030-01-01T08:00:00.000Z', mode: 'manual' });
  });

  it('clock advance on a server with a real clock says how to get a manual one (exit 1)', async () => {
    const real = await startTestServer({ clock: 'real', seed: false });
    try {
      const c = await cli(real, { configDir, env: { SVC_ADMIN_TOKEN: real.adminToken } });
      expect(await c.run(sandboxClockRun, { advance: 1000 }, 'svc sandbox clock advance')).toBe(1);
      expect(c.stderr()).toMatch(
        /^error: svc sandbox clock advance: .*svc serve --clock manual.*\[conflict, req_\w+\]/,
      );
    } finally {
      await real.close();
    }
  });

  it('dns publish makes a domain verifiable; set and remove break it the ways a person might', async () => {
    const added = await s.call('POST', '/v1/domains', { token: key(), body: { name: 'zone.test' } });
    expect(added.status, added.text).toBe(201);
    const id = added.body.id as string;
    const verify = async () => (await s.call('POST', `/v1/domains/${id}/verify`, { token: key() })).body;
    const finding = async (kind: string) =>
      (await verify()).findings.find((f: { kind: string }) => f.kind === kind).status;

    const propagating = await admin();
    expect(await propagating.run(sandboxDnsPublishRun, { domainId: id, propagating: true })).toBe(0);
    expect((await verify()).propagating).toBe(true);

    const publish = await admin({ tty: true, env: { NO_COLOR: '1' } });
    expect(await publish.run(sandboxDnsPublishRun, { domainId: id })).toBe(0);
    expect(publish.stdout()).toMatch(/HOST {2,}TYPE {2,}VALUES {2,}STATE/);
    expect(publish.stdout()).toMatch(/_svc-verification\.zone\.test {2,}TXT {2,}svc-verification=\S+ {2,}visible/);
    expect(publish.stderr()).toContain(`check them with: svc domains verify ${id}`);
    expect((await verify()).verified).toBe(true);

    const set = await admin();
    expect(
      await set.run(sandboxDnsSetRun, { host: '_dmarc.zone.test', type: 'TXT', values: ['v=DMARC1; p=reject;'] }),
    ).toBe(0);
    expect(set.stdout()).toBe('_dmarc.zone.test\tTXT\tv=DMARC1; p=reject;\tvisible\n');
    expect(await finding('dmarc')).toBe('mismatch');

    const remove = await admin();
    expect(await remove.run(sandboxDnsRemoveRun, { host: '_svc-verification.zone.test', type: 'TXT' })).toBe(0);
    expect(remove.stderr()).toBe('Removed TXT _svc-verification.zone.test from the sandbox zone.\n');
    expect(await finding('ownership')).toBe('missing');
  });

  it('webhooks add prints the secret deliveries are signed with; list shows the attempts; rotate, enable, remove', async () => {
    const ws = s.seed!.workspace_id;
    const add = await admin();
    expect(await add.run(sandboxWebhooksAddRun, { workspace: ws, url: rx.url, events: ['email.delivered'] })).toBe(0);
    const secret = add.stdout().trim();
    expect(secret).toMatch(/^whsec_/);
    const id = /Created (whk_\w+): email\.delivered to /.exec(add.stderr())![1]!;

    const deliver = async (n: number) => {
      await s.call('POST', '/v1/emails', {
        token: key(),
        body: { from: 'orders@example.test', to: 'hook@example.org', subject: 'Hook', text: 'x' },
      });
      await s.settle();
      return (await rx.waitFor(n))[n - 1]!;
    };
    const first = await deliver(1);
    expect(JSON.parse(first.body).type).toBe('email.delivered');
    expect(() =>
      verifyWebhook({ secret, header: first.headers['service-signature'] as string, body: first.body }),
    ).not.toThrow();

    const list = await admin();
    expect(await list.run(sandboxWebhooksListRun, { workspace: ws })).toBe(0);
    const rows = list
      .stdout()
      .trimEnd()
      .split('\n')
      .map((l) => l.split('\t'));
    expect(rows[0]).toEqual(['endpoint', id, ws, rx.url, 'email.delivered', 'active']);
    expect(rows[1]).toEqual([
      'attempt',
      id,
      expect.any(String),
      JSON.parse(first.body).id,
      'email.delivered',
      '1',
      '200',
      expect.stringMatching(/^\d+$/),
      '-',
    ]);

    const table = await admin({ tty: true, env: { NO_COLOR: '1' } });
    expect(await table.run(sandboxWebhooksListRun, {})).toBe(0);
    expect(table.stdout()).toMatch(
      new RegExp(`${id} {2,}${ws} {2,}${rx.url.replace(/[./]/g, '\\$&')} {2,}email\\.delivered {2,}active`),
    );
    expect(table.stdout()).toMatch(/Recent attempts, newest first\n/);
    expect(table.stdout()).toMatch(/ENDPOINT {2,}AT {2,}EVENT {2,}TYPE {2,}ATTEMPT {2,}STATUS {2,}MS {2,}ERROR/);

    const rotate = await admin();
    expect(await rotate.run(sandboxWebhooksRotateSecretRun, { id })).toBe(0);
    const rotated = rotate.stdout().trim();
    expect(rotated).toMatch(/^whsec_/);
    expect(rotated).not.toBe(secret);
    expect(rotate.stderr()).toMatch(
      /^New secret for whk_\w+; until \S+ \(service clock\) deliveries are also signed with the previous one\.\n$/,
    );
    const second = await deliver(2);
    expect(() =>
      verifyWebhook({ secret: rotated, header: second.headers['service-signature'] as string, body: second.body }),
    ).not.toThrow();

    const enable = await admin({ globals: { json: true } });
    expect(await enable.run(sandboxWebhooksEnableRun, { id })).toBe(0);
    expect(WebhookEndpoint.parse(JSON.parse(enable.stdout())).status).toBe('active');

    const remove = await admin();
    expect(await remove.run(sandboxWebhooksRemoveRun, { id })).toBe(0);
    expect(remove.stderr()).toBe(`Removed ${id}.\n`);
    const empty = await admin({ tty: true });
    expect(await empty.run(sandboxWebhooksListRun, {})).toBe(0);
    expect(empty.stdout()).toBe('');
    expect(empty.stderr()).toContain('No webhook endpoints yet');

    const typo = await admin();
    expect(
      await typo.run(
        sandboxWebhooksAddRun,
        { workspace: ws, url: rx.url, events: ['email.delivery'] },
        'svc sandbox webhooks add',
      ),
    ).toBe(2);
  });

  it('messages clear empties the sink', async () => {
    await s.call('POST', '/v1/emails', {
      token: key(),
      body: { from: 'orders@example.test', to: 'caught@example.org', subject: 'x', text: 'x' },
    });
    await s.settle();
    expect((await s.admin('GET', '/sandbox/messages')).body.data.length).toBeGreaterThan(0);
    const c = await admin();
    expect(await c.run(sandboxMessagesClearRun, {})).toBe(0);
    expect(c.stdout()).toBe('');
    expect((await s.admin('GET', '/sandbox/messages')).body.data).toEqual([]);
  });

  it('chaos set prints the rule as a table on a terminal; list shows its remaining; clear empties it', async () => {
    const set = await admin({ tty: true, env: { NO_COLOR: '1' } });
    expect(await set.run(sandboxChaosSetRun, { path: '/v1/emails/{id}', delay: 10, probability: 0.5, seed: 3 })).toBe(
      0,
    );
    expect(set.stdout()).toMatch(/^INDEX {2}MATCH {2,}ACTION {2,}PROBABILITY {2}REMAINING\n/);
    expect(set.stdout()).toMatch(/\n0 {5,}any \/v1\/emails\/\{id\} {2,}delay 10 ms {2,}0\.5 {9,}no limit\n$/);
    expect(set.stderr()).toContain('Chaos rule 0 set (seed 3)');

    const smtp = await admin();
    expect(await smtp.run(sandboxChaosSetRun, { smtp: 'data', code: 554, times: 3 })).toBe(0);
    const list = await admin({ tty: true, env: { NO_COLOR: '1' } });
    expect(await list.run(sandboxChaosListRun, {})).toBe(0);
    expect(list.stdout()).toMatch(/\n0 {5,}smtp data {2,}554 {2,}- {2,}3\n$/);
    expect(list.stderr()).toMatch(/^Seed \d+\.\n$/);

    const usage = await admin();
    expect(
      await usage.run(sandboxChaosSetRun, { status: 503, retryAfter: 1, reset: true }, 'svc sandbox chaos set'),
    ).toBe(2);
    expect(usage.stderr()).toMatch(/give one action: --status and --reset cannot go together/);

    const clear = await admin();
    expect(await clear.run(sandboxChaosClearRun, {})).toBe(0);
    const empty = await admin({ tty: true });
    expect(await empty.run(sandboxChaosListRun, {})).toBe(0);
    expect(empty.stdout()).toBe('');
    expect(empty.stderr()).toContain('No chaos rules: every request is handled as usual.');
  });

  it('without the admin token, says where one comes from (exit 4)', async () => {
    const c = await cli(s, { configDir, env: { SVC_DATA_DIR: dirs.make() } });
    expect(await c.run(sandboxInvitesCreateRun, {}, 'svc sandbox invites create')).toBe(4);
    expect(c.stderr()).toMatch(
      /hint: start one with `svc serve`, or set SVC_ADMIN_TOKEN \(or pass --admin-token\) to the admin_token of the ready line/,
    );
  });
});
