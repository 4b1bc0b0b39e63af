// svc webhooks listen, its run function against the real server and a real receiver: events from "now" (or --after,
// --since), one line each, forwarded signed with the profile's secret; retries of a failing receiver; NDJSON with
// --json. What the real server cannot do on demand (refuse `wait`, fail with 503, reset the connection) is played by
// undici's MockAgent in front of it; every other request goes through to the real server.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { MockAgent } from 'undici';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { Event } from '../../src/contract/events.js';
import { verifyWebhook } from '../../src/contract/signature.js';
import { webhooksListenRun, type WebhooksListenOptions } from '../../src/cli/commands/webhooks/listen.js';
import type { WallClock } from '../../src/cli/context.js';
import { VERSION } from '../../src/lib/version.js';
import { startReceiver, type Receiver } from '../helpers/receiver.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { cli, fakeClock, tempDirs, type Cli } from './helpers.js';

const ANSI = /\x1b\[/;

describe('svc webhooks listen', () => {
  let s: TestServer;
  let rx: Receiver;
  const dirs = tempDirs();
  let configDir: string;
  const agents: MockAgent[] = [];
  beforeAll(async () => {
    s = await startTestServer();
    rx = await startReceiver();
    configDir = dirs.make();
  });
  afterEach(async () => {
    rx.received.length = 0;
    rx.answer = () => 200;
    for (const a of agents.splice(0)) await a.close();
  });
  afterAll(async () => {
    await rx.close();
    await s.close();
    dirs.cleanup();
  });

  const until = (assertion: () => void) => vi.waitFor(assertion, { timeout: 10_000, interval: 10 });
  const lines = (text: string) => text.split('\n').filter(Boolean);

  /** Sends one message and lets the server deliver it: its queued, sent and delivered events (one per recipient). */
  async function send(to: string | string[] = 'ada@example.org'): Promise<string> {
    const r = await s.call('POST', '/v1/emails', {
      token: s.seed!.api_key_test,
      body: { from: 'orders@example.test', to, subject: 'Hi', text: 'hi' },
    });
    expect(r.status, r.text).toBe(202);
    await s.settle();
    return r.body.id;
  }

  /** GET /v1/events to the end: the events and the raw text of each page. */
  async function listing(): Promise<{ events: Event[]; text: string }> {
    const events: Event[] = [];
    let text = '';
    for (let after = ''; ; ) {
      const r = await s.call('GET', `/v1/events?limit=100${after}`, { token: s.seed!.api_key_test });
      text += r.text;
      events.push(...r.body.data);
      if (!r.body.has_more) return { events, text };
      after = `&after=${r.body.data.at(-1).id}`;
    }
  }

  /** Starts the command as `svc webhooks listen …` would, waits for its Ready line; `stop()` is Ctrl-C. */
  async function listen(o: WebhooksListenOptions, extra: Partial<Parameters<typeof cli>[1]> = {}) {
    const interrupt = new AbortController();
    const c = await cli(s, {
      configDir,
      interrupt: interrupt.signal,
      ...extra,
      env: { SVC_API_KEY: s.seed!.api_key_test, ...extra.env },
    });
    let code: number | undefined;
    const done = c.run(webhooksListenRun, o, 'svc webhooks listen').then((n) => (code = n));
    await until(() => expect(code === undefined ? c.stderr() : `exited ${code}: ${c.stderr()}`).toContain('Ready!'));
    return {
      c,
      stop: async () => {
        interrupt.abort();
        return done;
      },
    };
  }

  async function printSecret(o: { profile?: string; json?: boolean } = {}): Promise<Cli> {
    const c = await cli(s, { configDir, globals: { profile: o.profile, json: o.json } });
    expect(await c.run(webhooksListenRun, { printSecret: true })).toBe(0);
    return c;
  }

  it('forwards each new event once, signed with the profile secret, the body exactly as listed; one line per event', async () => {
    const secret = (await printSecret()).stdout().trim();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    const before = (await listing()).events.map((e) => e.id);
    expect(before.length).toBeGreaterThan(0);

    const l = await listen({ forwardTo: rx.url });
    expect(l.c.stderr()).toBe(
      `Ready! Forwarding events to ${rx.url}. Your webhook signing secret is ${secret} (^C to quit)\n`,
    );
    await send();
    await until(() => expect(lines(l.c.stdout())).toHaveLength(3));
    expect(await l.stop()).toBe(0);

    const { events, text } = await listing();
    const fresh = events.filter((e) => !before.includes(e.id));
    expect(fresh.map((e) => e.type)).toEqual(['email.queued', 'email.sent', 'email.delivered']);
    expect(rx.received.map((r) => r.headers['service-event-id'])).toEqual(fresh.map((e) => e.id));
    for (const [i, r] of rx.received.entries()) {
      expect(r.headers['content-type']).toBe('application/json');
      expect(r.headers['user-agent']).toBe(`svc-webhooks-listen/${VERSION}`);
      expect(r.headers['service-delivery-attempt']).toBe('1');
      expect(() =>
        verifyWebhook({ secret, header: r.headers['service-signature'] as string, body: r.body }),
      ).not.toThrow();
      // Byte for byte what GET /v1/events lists.
      expect(text).toContain(r.body);
      expect(JSON.parse(r.body)).toEqual(fresh[i]);
    }
    expect(lines(l.c.stdout()).map((line) => line.split('\t').slice(0, 4))).toEqual(
      fresh.map((e) => [e.created_at, e.type, e.id, '200']),
    );
    expect(lines(l.c.stdout()).every((line) => /\t\d+$/.test(line))).toBe(true);
    expect(lines(l.c.stderr())).toHaveLength(1);
  });

  it('draws its lines for a person on a terminal, in colour unless NO_COLOR', async () => {
    const plain = await listen({ forwardTo: rx.url }, { tty: true, env: { NO_COLOR: '1' } });
    await send();
    await until(() => expect(lines(plain.c.stdout())).toHaveLength(3));
    expect(await plain.stop()).toBe(0);
    expect(plain.c.stdout()).not.toMatch(ANSI);
    expect(plain.c.stderr()).toMatch(
      /^Ready! Forwarding events to .* Your webhook signing secret is whsec_\S+ \(\^C to quit\)\n$/,
    );
    expect(lines(plain.c.stdout())[2]).toMatch(/^\S+Z {2}email\.delivered +evt_\w{24} {2}→ 200 \d+ ms$/);

    const coloured = await listen({}, { tty: true });
    await send();
    await until(() => expect(lines(coloured.c.stdout())).toHaveLength(3));
    expect(await coloured.stop()).toBe(0);
    expect(coloured.c.stdout()).toMatch(ANSI);
    expect(coloured.c.stderr()).toMatch(ANSI);
  });

  it("prints NDJSON with --json: each event exactly as listed on stdout, the receiver's answers on stderr", async () => {
    const l = await listen({ forwardTo: rx.url }, { globals: { json: true } });
    await send(['ada@example.org', 'bob@example.org']);
    await until(() => expect(lines(l.c.stdout())).toHaveLength(4));
    expect(await l.stop()).toBe(0);
    const out = lines(l.c.stdout());
    expect(out.map((line) => Event.parse(JSON.parse(line)).type)).toEqual([
      'email.queued',
      'email.sent',
      'email.delivered',
      'email.delivered',
    ]);
    expect(out).toEqual(rx.received.map((r) => r.body));
    const { text } = await listing();
    for (const line of out) expect(text).toContain(line);
    expect(lines(l.c.stderr()).slice(1)).toEqual(
      out.map((line) => expect.stringMatching(new RegExp(`^${JSON.parse(line).id} → 200 \\(\\d+ ms\\)$`))),
    );
  });

  it('takes only the --events types', async () => {
    const l = await listen({ forwardTo: rx.url, events: ['email.delivered'] });
    await send(['ada@example.org', 'bob@example.org']);
    await send('cy@example.org');
    await until(() => expect(lines(l.c.stdout())).toHaveLength(3));
    expect(await l.stop()).toBe(0);
    expect(rx.received.map((r) => [JSON.parse(r.body).type, JSON.parse(r.body).data.to])).toEqual([
      ['email.delivered', 'ada@example.org'],
      ['email.delivered', 'bob@example.org'],
      ['email.delivered', 'cy@example.org'],
    ]);
  });

  it('starts after an event with --after, and at a time with --since (service clock)', async () => {
    await send('early@example.org');
    await s.advance(3600);
    const later = await send('later@example.org');
    const { events } = await listing();
    const laterEvents = events.filter((e) => e.data.message_id === later);
    expect(laterEvents).toHaveLength(3);

    const since = await listen({ since: laterEvents[0]!.created_at });
    await until(() => expect(lines(since.c.stdout())).toHaveLength(3));
    expect(await since.stop()).toBe(0);
    expect(lines(since.c.stdout()).map((line) => line.split('\t')[2])).toEqual(laterEvents.map((e) => e.id));

    const after = await listen({ after: laterEvents[0]!.id });
    await until(() => expect(lines(after.c.stdout())).toHaveLength(2));
    expect(await after.stop()).toBe(0);
    expect(lines(after.c.stdout()).map((line) => line.split('\t')[2])).toEqual(laterEvents.slice(1).map((e) => e.id));
  });

  it('keeps one secret per profile in the credential store: the same on every run, another for another profile', async () => {
    const first = (await printSecret()).stdout();
    expect((await printSecret()).stdout()).toBe(first);
    const staging = (await printSecret({ profile: 'staging' })).stdout();
    expect(staging).toMatch(/^whsec_/);
    expect(staging).not.toBe(first);
    expect(JSON.parse((await printSecret({ profile: 'staging', json: true })).stdout())).toEqual({
      secret: staging.trim(),
    });
    const stored = JSON.parse(readFileSync(join(configDir, 'secrets', 'credentials.json'), 'utf8'));
    expect(stored).toMatchObject({ 'default/listen_secret': first.trim(), 'staging/listen_secret': staging.trim() });
  });

  it('tries a failed forward again (attempt 2 after a 500), and gives up on an event after 4 attempts, moving on', async () => {
    const clock = fakeClock();
    const firstId = { value: '' };
    rx.answer = (n, r) => {
      const id = r.headers['service-event-id'] as string;
      if (n === 1) firstId.value = id;
      // The first event fails for good; the second fails once.
      if (id === firstId.value) return 500;
      return rx.received.filter((x) => x.headers['service-event-id'] === id).length === 1 ? 503 : 200;
    };
    const secret = (await printSecret()).stdout().trim();
    const l = await listen({ forwardTo: rx.url }, { clock });
    await send();
    await until(() => expect(lines(l.c.stdout())).toHaveLength(3));
    expect(await l.stop()).toBe(0);

    const byEvent = new Map<string, string[]>();
    for (const r of rx.received)
      byEvent.set(r.headers['service-event-id'] as string, [
        ...(byEvent.get(r.headers['service-event-id'] as string) ?? []),
        r.headers['service-delivery-attempt'] as string,
      ]);
    expect([...byEvent.values()]).toEqual([
      ['1', '2', '3', '4'],
      ['1', '2'],
      ['1', '2'],
    ]);
    for (const r of rx.received)
      expect(() =>
        verifyWebhook({ secret, header: r.headers['service-signature'] as string, body: r.body }),
      ).not.toThrow();
    expect(
      new Set(rx.received.filter((r) => r.headers['service-event-id'] === firstId.value).map((r) => r.body)).size,
    ).toBe(1);

    expect(lines(l.c.stdout()).map((line) => line.split('\t')[3])).toEqual(['500', '200', '200']);
    const err = l.c.stderr();
    expect(err).toContain(`warning: ${firstId.value}: attempt 1 to ${rx.url} failed (HTTP 500); trying again in`);
    expect(err).toContain(
      `warning: ${firstId.value}: attempt 4 to ${rx.url} failed (HTTP 500); giving up on this event and moving on`,
    );
    expect(err).toMatch(/attempt 1 to \S+ failed \(HTTP 503\); trying again in/);
    expect(clock.slept).toHaveLength(3 + 1 + 1);
  });

  it('says when the receiver is not there, and goes on listening', async () => {
    const closed = await startReceiver();
    const url = closed.url;
    await closed.close();
    const l = await listen({ forwardTo: url }, { clock: fakeClock(), globals: { json: true } });
    await send();
    await until(() => expect(lines(l.c.stdout())).toHaveLength(3));
    expect(await l.stop()).toBe(0);
    expect(l.c.stderr()).toMatch(/attempt 4 to \S+ failed \(connection refused\); giving up/);
    expect(l.c.stderr()).toMatch(/evt_\w+ → no response \(\d+ ms\)/);
  });

  it('lists every few seconds instead when the service refuses `wait` (no long poll)', async () => {
    const agent = new MockAgent();
    agent.enableNetConnect();
    agents.push(agent);
    const problem = {
      type: 'https://docs.svc.dev/errors/invalid_request',
      title: 'Invalid request',
      status: 400,
      code: 'invalid_request',
      detail: 'Unknown query parameter: wait',
      request_id: 'req_mock',
      errors: [{ path: 'wait', code: 'unrecognized_keys', message: 'is not a known field' }],
    };
    agent
      .get(s.origin)
      .intercept({
        method: 'GET',
        path: (p) => p.startsWith('/v1/events') && new URL(p, s.origin).searchParams.has('wait'),
      })
      .reply(400, problem, { headers: { 'content-type': 'application/json' } })
      .persist();
    // Pauses happen only between plain listings. During the first the world changes; the next lasts until Ctrl-C.
    const pauses: number[] = [];
    const clock: WallClock = {
      now: () => Date.now(),
      sleep: async (ms, signal) => {
        pauses.push(ms);
        if (pauses.length === 1) return void (await send());
        await new Promise((resolve) => signal?.addEventListener('abort', resolve, { once: true }));
        throw signal?.reason;
      },
    };
    const l = await listen({}, { clock, client: { dispatcher: agent } });
    await until(() => expect(lines(l.c.stdout())).toHaveLength(3));
    expect(await l.stop()).toBe(0);
    expect(lines(l.c.stdout()).map((line) => line.split('\t')[1])).toEqual([
      'email.queued',
      'email.sent',
      'email.delivered',
    ]);
    expect(l.c.stderr()).toContain(
      'note: the service does not hold GET /events open (no long poll); listing every 2s instead',
    );
    expect(pauses).toEqual([2000, 2000]);
  });

  it('reconnects after a 503 and a reset connection, and resumes after the last event: none lost, none twice', async () => {
    const agent = new MockAgent();
    agent.enableNetConnect();
    agents.push(agent);
    const pool = agent.get(s.origin);
    const longPoll = (p: string) => p.startsWith('/v1/events') && new URL(p, s.origin).searchParams.has('wait');
    // The first two long polls fail (a proxy's 503 during a deploy, then a reset); mail is sent meanwhile.
    pool
      .intercept({ method: 'GET', path: longPoll })
      .reply(503, 'upstream unavailable', { headers: { 'content-type': 'text/plain' } });
    pool
      .intercept({ method: 'GET', path: longPoll })
      .replyWithError(Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' }));
    const clock = fakeClock(async () => {
      if (clock.slept.length === 1) await send('during@example.org');
    });
    const l = await listen({ forwardTo: rx.url }, { clock, client: { dispatcher: agent } });
    await until(() => expect(lines(l.c.stdout())).toHaveLength(3));
    await send('after@example.org');
    await until(() => expect(lines(l.c.stdout())).toHaveLength(6));
    expect(await l.stop()).toBe(0);

    const ids = rx.received.map((r) => r.headers['service-event-id']);
    expect(new Set(ids).size).toBe(6);
    expect(rx.received.map((r) => JSON.parse(r.body).data.to)).toEqual([
      ['during@example.org'],
      ['during@example.org'],
      'during@example.org',
      ['after@example.org'],
      ['after@example.org'],
      'after@example.org',
    ]);
    expect(l.c.stderr()).toMatch(
      /\nwarning: Service Unavailable \(503 unexpected_response\): upstream unavailable; reconnecting, then resuming after the last event seen\nReconnected\.\n/,
    );
    expect(clock.slept).toHaveLength(2);
  });

  it('exits 4 when the key is refused, 2 for an unknown --events type', async () => {
    const c = await cli(s, { configDir, env: { SVC_API_KEY: 'svc_test_00000000000000000000000000000000' } });
    expect(await c.run(webhooksListenRun, { forwardTo: rx.url }, 'svc webhooks listen')).toBe(4);
    expect(c.stderr()).toMatch(/^error: svc webhooks listen: Invalid API key .*\[invalid_api_key, req_\w+\]/);
    expect(c.stderr()).not.toContain('Ready!');

    const typo = await cli(s, { configDir, env: { SVC_API_KEY: s.seed!.api_key_test } });
    expect(await typo.run(webhooksListenRun, { events: ['email.delivred'] }, 'svc webhooks listen')).toBe(2);
    expect(typo.stderr()).toMatch(/--events: unknown event type "email\.delivred"/);
  });
});
