// svc events list against the real server: the events of real sends, oldest first, filtered by type, paged with
// --after; a table on a terminal, tab-separated lines piped, the API's body with --json.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listOf } from '../../src/contract/common.js';
import { Event } from '../../src/contract/events.js';
import { loginRun } from '../../src/cli/commands/auth/login.js';
import { eventsListRun } from '../../src/cli/commands/events/list.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { createKey } from '../helpers/tenants.js';
import { cli, tempDirs } from './helpers.js';

describe('svc events list', () => {
  let s: TestServer;
  const dirs = tempDirs();
  let configDir: string;
  let messageId: string;
  beforeAll(async () => {
    s = await startTestServer();
    configDir = dirs.make();
    const sent = await s.call('POST', '/v1/emails', {
      token: s.seed!.api_key_test,
      body: { from: 'orders@example.test', to: ['ada@example.org', 'bob@example.org'], subject: 'Events', text: 'hi' },
    });
    expect(sent.status).toBe(202);
    messageId = sent.body.id;
    await s.settle();
  });
  afterAll(async () => {
    await s.close();
    dirs.cleanup();
  });

  const withKey = (o: Partial<Parameters<typeof cli>[1]> = {}) =>
    cli(s, { configDir, ...o, env: { SVC_API_KEY: s.seed!.api_key_test, ...o.env } });
  const listed = async (query = '') =>
    (await s.call('GET', `/v1/events${query}`, { token: s.seed!.api_key_test })).body.data as Event[];

  it('prints the API body with --json, oldest first, the same as GET /v1/events', async () => {
    const c = await withKey({ globals: { json: true } });
    expect(await c.run(eventsListRun, {})).toBe(0);
    const page = listOf(Event).parse(JSON.parse(c.stdout()));
    expect(page.data.map((e) => e.type)).toEqual([
      'domain.verified',
      'email.queued',
      'email.sent',
      'email.delivered',
      'email.delivered',
    ]);
    expect(page.data).toEqual(await listed());
    expect(c.stderr()).toBe('');
  });

  it('prints a tab-separated line per event when piped, with what it is about and the recipients', async () => {
    const c = await withKey();
    expect(await c.run(eventsListRun, { types: ['email.queued', 'email.delivered'] })).toBe(0);
    const rows = c
      .stdout()
      .trimEnd()
      .split('\n')
      .map((l) => l.split('\t'));
    expect(rows.map((r) => [r[1], r[3], r[4]])).toEqual([
      ['email.queued', messageId, 'ada@example.org, bob@example.org'],
      ['email.delivered', messageId, 'ada@example.org'],
      ['email.delivered', messageId, 'bob@example.org'],
    ]);
    expect(rows.every((r) => /^evt_\w{24}$/.test(r[0]!) && !Number.isNaN(Date.parse(r[2]!)))).toBe(true);
  });

  it('draws a table on a terminal and says how to get the next page', async () => {
    const c = await withKey({ tty: true, env: { NO_COLOR: '1' } });
    expect(await c.run(eventsListRun, { limit: 2 })).toBe(0);
    expect(c.stdout()).toMatch(/ID {2,}TYPE {2,}CREATED {2,}ABOUT {2,}TO/);
    expect(c.stdout()).toMatch(/^evt_\w+ {2,}domain\.verified {2,}\S+ {2,}example\.test {2,}-$/m);
    expect(c.stdout()).toMatch(/^evt_\w+ {2,}email\.queued {2,}/m);
    const second = (await listed())[1]!.id;
    expect(c.stderr()).toBe(`More: svc events list --limit 2 --after ${second}\n`);

    const next = await withKey({ globals: { json: true } });
    expect(await next.run(eventsListRun, { after: second, limit: 2 })).toBe(0);
    expect(
      listOf(Event)
        .parse(JSON.parse(next.stdout()))
        .data.map((e) => e.type),
    ).toEqual(['email.sent', 'email.delivered']);
  });

  it('works with a session too; a key without emails:read is refused (exit 1), none at all is exit 4', async () => {
    const session = await cli(s, { configDir: dirs.make(), stdin: s.seed!.password });
    expect(await session.run(loginRun, { email: s.seed!.email, passwordStdin: true })).toBe(0);
    const viaSession = await cli(s, { configDir: session.ctx.configDir, globals: { json: true } });
    expect(await viaSession.run(eventsListRun, { types: ['domain.verified'] })).toBe(0);
    expect(listOf(Event).parse(JSON.parse(viaSession.stdout())).data).toHaveLength(1);

    const sendOnly = await createKey(
      s,
      { email: s.seed!.email, password: s.seed!.password, workspace_id: s.seed!.workspace_id },
      { scopes: ['emails:send'] },
    );
    const refused = await cli(s, { configDir: dirs.make(), env: { SVC_API_KEY: sendOnly.key } });
    expect(await refused.run(eventsListRun, {}, 'svc events list')).toBe(1);
    expect(refused.stderr()).toMatch(/^error: svc events list: Insufficient scope.*\[insufficient_scope, req_\w+\]/);

    const nobody = await cli(s, { configDir: dirs.make() });
    expect(await nobody.run(eventsListRun, {}, 'svc events list')).toBe(4);
    expect(nobody.stderr()).toMatch(/hint: sign in with `svc login`, or give an API key/);
  });

  it('refuses an unknown --type before asking the service (exit 2), naming the types there are', async () => {
    const c = await withKey();
    expect(await c.run(eventsListRun, { types: ['email.sent', 'email.send'] }, 'svc events list')).toBe(2);
    expect(c.stderr()).toMatch(
      /^error: svc events list: --type: unknown event type "email\.send"; hint: the types are email\.queued, email\.sent/,
    );
    expect(c.stdout()).toBe('');
  });

  it('says which cursor is unknown (exit 1)', async () => {
    const c = await withKey();
    expect(await c.run(eventsListRun, { after: 'evt_000000000000000000000000' }, 'svc events list')).toBe(1);
    expect(c.stderr()).toMatch(
      /^error: svc events list: Invalid request — No item of this list has the id given in `after`; list again without it\. \[invalid_request, req_\w+\]$/m,
    );
  });
});
