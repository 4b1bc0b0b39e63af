// The built binary, as separate processes (execa): `svc webhooks listen --forward-to` a real receiver while
// `svc serve` is stopped and started again on the same data directory and port; `webhooks verify` reading stdin;
// `events list` and `sandbox` commands with their exit codes.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { listOf } from '../../src/contract/common.js';
import { Event } from '../../src/contract/events.js';
import { MovedClock } from '../../src/contract/clock.js';
import { signWebhook, verifyWebhook } from '../../src/contract/signature.js';
import { BIN, ensureBuilt, killAll, ROOT, serve, stop, type Served } from '../helpers/binary.js';
import { startReceiver, type Receiver } from '../helpers/receiver.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

describe('svc webhooks and events, the built binary', () => {
  const dirs: string[] = [];
  const tmp = () => {
    const d = mkdtempSync(join(tmpdir(), 'svc-e2e-webhooks-'));
    dirs.push(d);
    return d;
  };
  let rx: Receiver;
  /** Listeners a failed test may leave running. */
  const listeners: { kill(signal?: NodeJS.Signals): boolean }[] = [];
  beforeAll(async () => {
    ensureBuilt();
    rx = await startReceiver();
  }, 120_000);
  afterAll(async () => {
    for (const l of listeners) l.kill('SIGKILL');
    killAll();
    await rx.close();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  /** Only what is given: no D-Bus, no SVC_* of the machine running the tests. */
  const envOf = (home: string, extra: Record<string, string>) => ({
    PATH: process.env.PATH!,
    HOME: home,
    SVC_CONFIG_DIR: join(home, 'config'),
    SVC_DATA_DIR: join(home, 'data'),
    SVC_CREDENTIAL_STORE: 'file',
    ...extra,
  });
  const svc = (home: string, args: string[], env: Record<string, string>, input = '') =>
    execa(process.execPath, [BIN, ...args], {
      env: envOf(home, env),
      extendEnv: false,
      input,
      reject: false,
      cwd: ROOT,
    });

  const until = (assertion: () => void | Promise<void>, timeout = 20_000) =>
    vi.waitFor(assertion, { timeout, interval: 25 });

  it('forwards every event exactly once while svc serve is restarted mid-stream, signed with the printed secret; SIGINT exits 0', async () => {
    const home = tmp();
    const data = join(home, 'served');
    let server: Served = await serve(['--data-dir', data, '--clock', 'manual']);
    const api = server.ready.api;
    const seed = server.ready.seed!;
    const env = { SVC_BASE_URL: api, SVC_API_KEY: seed.api_key_test! };

    const printed = await svc(home, ['webhooks', 'listen', '--print-secret'], env);
    expect(printed.exitCode, printed.stderr).toBe(0);
    const secret = printed.stdout.trim();

    const get = (path: string) => fetch(`${api}${path}`, { headers: { authorization: `Bearer ${seed.api_key_test}` } });
    const sendMail = async (to: string): Promise<string> => {
      const r = await fetch(`${api}/emails`, {
        method: 'POST',
        headers: { authorization: `Bearer ${seed.api_key_test}`, 'content-type': 'application/json' },
        body: JSON.stringify({ from: 'orders@example.test', to, subject: 'Restart', text: 'hi' }),
      });
      expect(r.status).toBe(202);
      return ((await r.json()) as { id: string }).id;
    };
    /** Every message's last event (its delivery) has reached the receiver. */
    const delivered = (messages: string[]) =>
      until(() => {
        const seen = rx.received
          .map((r) => JSON.parse(r.body))
          .filter((e) => e.type === 'email.delivered')
          .map((e) => e.data.message_id);
        expect(seen).toEqual(expect.arrayContaining(messages));
      });
    const before = listOf(Event)
      .parse(await (await get('/events?limit=100')).json())
      .data.map((e) => e.id);

    const listener = execa(process.execPath, [BIN, 'webhooks', 'listen', '--forward-to', rx.url, '--json'], {
      env: envOf(home, env),
      extendEnv: false,
      reject: false,
      cwd: ROOT,
    });
    listeners.push(listener);
    let stderr = '';
    listener.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
    await until(() =>
      expect(stderr).toContain(`Ready! Forwarding events to ${rx.url}. Your webhook signing secret is ${secret}`),
    );

    const messages = [await sendMail('one@example.org'), await sendMail('two@example.org')];
    await delivered(messages);
    // One more, and the server goes away at once: its events are listed (and forwarded) after the restart.
    messages.push(await sendMail('three@example.org'));
    await stop(server);
    server = await serve(['--data-dir', data, '--clock', 'manual', '--port', new URL(api).port]);
    expect(server.ready.api).toBe(api);
    messages.push(await sendMail('four@example.org'), await sendMail('five@example.org'));
    await delivered(messages);

    listener.kill('SIGINT');
    const exited = await listener;
    expect(exited.exitCode, stderr).toBe(0);

    // What GET /v1/events lists after the listener started, byte for byte, is what the receiver got, each once.
    const listed = await get('/events?limit=100');
    const text = await listed.text();
    const events = listOf(Event)
      .parse(JSON.parse(text))
      .data.filter((e) => !before.includes(e.id));
    expect(events.filter((e) => e.type === 'email.delivered')).toHaveLength(5);
    const ids = rx.received.map((r) => r.headers['service-event-id']);
    expect(ids).toEqual(events.map((e) => e.id));
    for (const r of rx.received) {
      expect(text).toContain(r.body);
      expect(JSON.parse(r.body).id).toBe(r.headers['service-event-id']);
      expect(r.headers['service-delivery-attempt']).toBe('1');
      expect(() =>
        verifyWebhook({ secret, header: r.headers['service-signature'] as string, body: r.body }),
      ).not.toThrow();
    }
    // NDJSON on stdout: the same events, the same bytes.
    expect(exited.stdout.split('\n').filter(Boolean)).toEqual(rx.received.map((r) => r.body));
    await stop(server);
  }, 90_000);

  describe('against a local server', () => {
    let s: TestServer;
    beforeAll(async () => {
      s = await startTestServer();
    });
    afterAll(async () => {
      await s.close();
    });
    const withKey = () => ({ SVC_BASE_URL: s.api, SVC_API_KEY: s.seed!.api_key_test });

    it('webhooks verify reads the raw body from stdin: valid exits 0, a tampered body 1 with the reason, no --secret 2', async () => {
      const home = tmp();
      const secret = `whsec_${Buffer.alloc(32, 1).toString('base64')}`;
      const body = '{"id":"evt_1","type":"email.sent","data":{}}';
      const header = `Service-Signature: ${signWebhook({ secret, body })}`;
      const valid = await svc(home, ['webhooks', 'verify', '--secret', secret, '--header', header], {}, body);
      expect([valid.exitCode, valid.stdout, valid.stderr]).toEqual([0, 'valid', '']);
      const tampered = await svc(
        home,
        ['webhooks', 'verify', '--secret', secret, '--header', header],
        {},
        body.replace('sent', 'bounced'),
      );
      expect([tampered.exitCode, tampered.stdout]).toEqual([1, '']);
      expect(tampered.stderr).toBe(
        'error: svc webhooks verify: No signature in the header matches the body with this secret; check the secret and that the body is the raw bytes received.',
      );
      const usage = await svc(home, ['webhooks', 'verify', '--header', header], {}, body);
      expect(usage.exitCode).toBe(2);
      expect(usage.stderr).toContain("required option '--secret <whsec>' not specified");
    });

    it('webhooks listen --print-secret is the same on every run of a profile and differs between profiles', async () => {
      const home = tmp();
      const first = await svc(home, ['webhooks', 'listen', '--print-secret'], {});
      const again = await svc(home, ['webhooks', 'listen', '--print-secret'], {});
      const other = await svc(home, ['--profile', 'staging', 'webhooks', 'listen', '--print-secret'], {});
      expect([first.exitCode, again.exitCode, other.exitCode]).toEqual([0, 0, 0]);
      expect(first.stdout).toMatch(/^whsec_\S{44}$/);
      expect(again.stdout).toBe(first.stdout);
      expect(other.stdout).toMatch(/^whsec_/);
      expect(other.stdout).not.toBe(first.stdout);
    });

    it('events list --json prints the API body; without a credential it exits 4', async () => {
      const home = tmp();
      const r = await svc(home, ['--json', 'events', 'list', '--type', 'domain.verified'], withKey());
      expect(r.exitCode, r.stderr).toBe(0);
      expect(
        listOf(Event)
          .parse(JSON.parse(r.stdout))
          .data.map((e) => e.type),
      ).toEqual(['domain.verified']);
      const none = await svc(home, ['events', 'list'], { SVC_BASE_URL: s.api });
      expect(none.exitCode).toBe(4);
      expect(none.stdout).toBe('');
    });

    it('sandbox commands take the admin token from SVC_ADMIN_TOKEN, and exit 4 without one', async () => {
      const home = tmp();
      const env = { SVC_BASE_URL: s.api, SVC_ADMIN_TOKEN: s.adminToken };
      const moved = await svc(home, ['--json', 'sandbox', 'clock', 'advance', '90s'], env);
      expect(moved.exitCode, moved.stderr).toBe(0);
      const clock = MovedClock.parse(JSON.parse(moved.stdout));
      const shown = await svc(home, ['sandbox', 'clock'], env);
      expect(shown.stdout).toBe(`now\t${clock.now}\nmode\tmanual`);
      const invite = await svc(home, ['sandbox', 'invites', 'create'], env);
      expect(invite.exitCode).toBe(0);
      expect(invite.stdout).toMatch(/^\S+$/);
      const none = await svc(home, ['sandbox', 'invites', 'create'], { SVC_BASE_URL: s.api });
      expect(none.exitCode).toBe(4);
      expect(none.stderr).toContain(
        'or set SVC_ADMIN_TOKEN (or pass --admin-token) to the admin_token of the ready line',
      );
    });
  });
});
