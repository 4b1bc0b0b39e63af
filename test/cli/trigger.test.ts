// svc trigger TYPE against the real server: each type's event is produced by the sandbox's own pipeline — it is in
// GET /v1/events, in the message's timeline, and delivered, signed, to a webhook endpoint — and a server that is not a
// sandbox is refused before anything is made.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { triggerRun } from '../../src/cli/commands/trigger.js';
import { TRIGGER_LINK, TRIGGER_TYPES, type TriggerResult } from '../../src/client/trigger.js';
import { verifyWebhook } from '../../src/contract/signature.js';
import { startReceiver, type Receiver } from '../helpers/receiver.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import type { WallClock } from '../../src/cli/context.js';
import { cli, fakeClock, tempDirs } from './helpers.js';

describe('svc trigger', () => {
  let s: TestServer;
  let rx: Receiver;
  let secret: string;
  const dirs = tempDirs();
  let configDir: string;
  beforeAll(async () => {
    s = await startTestServer();
    rx = await startReceiver();
    configDir = dirs.make();
    const hook = await s.admin('POST', '/sandbox/webhooks', { workspace_id: s.seed!.workspace_id, url: rx.url });
    secret = hook.body.secret;
  });
  afterAll(async () => {
    await rx.close();
    await s.close();
    dirs.cleanup();
  });

  const trigger = async (type: string, extra: Record<string, unknown> = {}, clock?: WallClock) => {
    const c = await cli(s, {
      configDir,
      clock,
      globals: { json: true },
      env: { SVC_API_KEY: s.seed!.api_key_test, SVC_ADMIN_TOKEN: s.adminToken },
    });
    const code = await c.run(triggerRun, { type, wait: true, ...extra });
    return { code, stdout: c.stdout(), stderr: c.stderr() };
  };
  const key = () => s.seed!.api_key_test;

  /** The event with this id as the endpoint received it, its signature checked. */
  const delivered = async (id: string) => {
    for (;;) {
      const hit = rx.received.find((r) => JSON.parse(r.body).id === id);
      if (hit) {
        expect(() =>
          verifyWebhook({ secret, header: hit.headers['service-signature'] as string, body: hit.body }),
        ).not.toThrow();
        return JSON.parse(hit.body);
      }
      await rx.waitFor(rx.received.length + 1);
    }
  };

  it.each(TRIGGER_TYPES)('%s: the event comes from the real pipeline', async (type) => {
    const r = await trigger(type);
    expect(r.stderr).not.toMatch(/error/);
    expect(r.code).toBe(0);
    const result = JSON.parse(r.stdout) as TriggerResult;
    expect(result.type).toBe(type);
    const event = result.event!;
    expect(event.type).toBe(type);

    const listed = await s.call('GET', `/v1/events?type=${type}&limit=100`, { token: key() });
    expect(listed.body.data.map((e: { id: string }) => e.id)).toContain(event.id);
    expect((await delivered(event.id)).type).toBe(type);

    const [made] = result.created;
    if (type.startsWith('email.')) {
      expect(made!.kind).toBe('email');
      expect(event.data.message_id).toBe(made!.id);
      const email = await s.call('GET', `/v1/emails/${made!.id}`, { token: key() });
      expect(email.body.events.map((e: { type: string }) => e.type)).toContain(type);
      if (type === 'email.clicked') expect(event.data.url).toBe(TRIGGER_LINK);
    } else {
      expect(made!.kind).toBe('domain');
      expect(event.data.domain_id).toBe(made!.id);
      const domain = await s.call('GET', `/v1/domains/${made!.id}`, { token: key() });
      expect(domain.body.status).toBe(type.slice('domain.'.length));
    }
  });

  it('sends from the domain given; refuses a domain.verified for one verified already', async () => {
    const added = await s.call('POST', '/v1/domains', { token: key(), body: { name: 'given.test' } });
    const verified = await trigger('domain.verified', { domain: 'given.test' });
    expect(verified.code).toBe(0);
    expect(JSON.parse(verified.stdout).created).toEqual([]);
    expect(JSON.parse(verified.stdout).event.data.domain_id).toBe(added.body.id);

    const sent = JSON.parse((await trigger('email.delivered', { domain: added.body.id })).stdout) as TriggerResult;
    expect(sent.created[0]).toMatchObject({ kind: 'email', from: 'trigger@given.test' });

    const again = await trigger('domain.verified', { domain: 'given.test' });
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/given\.test is verified already/);
    expect(again.stderr).toMatch(/svc trigger domain\.degraded --domain given\.test/);
  });

  it('--no-wait prints what it made without waiting; an unknown type is a usage error listing the types', async () => {
    const r = await trigger('email.bounced', { wait: false });
    expect(r.code).toBe(0);
    const result = JSON.parse(r.stdout) as TriggerResult;
    expect(result.event).toBeUndefined();
    expect(result.created[0]!.kind).toBe('email');

    const unknown = await trigger('contact.unsubscribed');
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/cannot produce "contact\.unsubscribed"/);
    expect(unknown.stderr).toMatch(/email\.bounced/);
  });

  it('says which event did not come when the time runs out (exit 1)', async () => {
    // A clock whose waits end at once: the 5 s run out before the message is even delivered.
    const r = await trigger('email.delivered', { timeout: 5_000 }, fakeClock());
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/no email\.delivered event for msg_\w+ within 5 s/);
    expect(r.stderr).toMatch(/svc emails get msg_/);
  });

  it('refuses a server that is not a sandbox, before making anything', async () => {
    const seen: string[] = [];
    const service: Server = createServer((req, res) => {
      seen.push(`${req.method} ${req.url}`);
      res.writeHead(200, { 'content-type': 'application/json', 'service-version': '2026-09-01' });
      res.end(JSON.stringify({ data: [], has_more: false }));
    });
    await new Promise<void>((resolve) => service.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = service.address() as AddressInfo;
      const c = await cli(s, {
        configDir,
        env: { SVC_BASE_URL: `http://127.0.0.1:${port}/v1`, SVC_API_KEY: key(), SVC_ADMIN_TOKEN: s.adminToken },
      });
      for (const type of ['email.bounced', 'domain.verified']) {
        expect(await c.run(triggerRun, { type, wait: true })).toBe(1);
        expect(c.stderr()).toMatch(/is not a local sandbox: svc trigger only drives `svc serve`/);
      }
      expect(seen.every((r) => r.startsWith('GET /v1/domains'))).toBe(true);
    } finally {
      service.close();
    }
  });
});
