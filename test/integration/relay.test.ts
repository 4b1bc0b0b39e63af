// Releases and relay rules (docs/local-server.md#release-and-relay), against a real SMTP relay on loopback that the
// test starts: the bytes it receives are the caught source, and their DKIM signature verifies on arrival; a relay that
// refuses or is down answers a release with a Problem and defers a relay rule on the one retry policy, each on the
// message's timeline; test-key mail is never relayed; the allow-list is obeyed; the credentials are never shown.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Logger } from '../../src/lib/log.js';
import { verifyDkim } from '../../src/server/checks/mailauth.js';
import { makeCertificate } from '../../src/server/inbound/tls.js';
import { closedPort, RELAY_PASS, startRelay, type TestRelay } from '../helpers/relay.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

/** A logger that keeps every line, to check that no credential is in any. */
function keptLog(): Logger & { lines: string[] } {
  const lines: string[] = [];
  const keep = (level: string) => (msg: string, fields?: object) =>
    lines.push(`${level} ${msg} ${JSON.stringify(fields ?? {})}`);
  return { lines, debug: keep('debug'), info: keep('info'), warn: keep('warn'), error: keep('error') };
}

const unique = (local: string, domain: string) => `${local}-${randomBytes(4).toString('hex')}@${domain}`;

let relay: TestRelay;
let s: TestServer;
const log = keptLog();

beforeAll(async () => {
  relay = await startRelay();
  s = await startTestServer({
    relayUrl: relay.url,
    relayAllow: ['*@example.com', 'boss@example.org', '*@rules.example.com'],
    // A rule whose recipients the allow-list does not admit relays nothing.
    relayMatching: ['*@rules.example.com', '*@blocked.example.net'],
    log,
  });
});
afterAll(async () => {
  await s.close();
  await relay.close();
});

async function sendLive(to: string | string[], key = s.seed!.api_key_live) {
  const r = await s.call('POST', '/v1/emails', {
    token: key,
    body: { from: 'Shop <orders@example.test>', to, subject: 'Your order', text: 'It ships today.' },
  });
  expect(r.status, r.text).toBe(202);
  await s.settle();
  return r.body.id as string;
}

const timeline = async (id: string) => {
  const m = await s.admin('GET', `/sandbox/messages/${id}`);
  expect(m.status, m.text).toBe(200);
  return m.body.events as { type: string; detail: Record<string, unknown> }[];
};

describe('a release', () => {
  it('sends the caught bytes untouched to the addresses given, its DKIM signature valid on arrival', async () => {
    const msg = await sendLive(unique('caught', 'dest.example'));
    const to = unique('qa', 'example.com');
    const arrived = relay.next();
    const r = await s.admin('POST', `/sandbox/messages/${msg}/release`, { to });
    expect(r.status, r.text).toBe(200);
    expect(r.body).toMatchObject({ to: [to], relay: `smtp://relay-user:***@127.0.0.1:${relay.port}` });
    expect(r.body.response).toMatch(/^250/);
    const got = await arrived;
    expect(got.rcptTo).toEqual([to]);
    expect(got.user).toBe('relay-user');
    expect(got.mailFrom).toBe(`bounces+${msg}@bounces.example.test`);
    const raw = await fetch(`${s.origin}/sandbox/messages/${msg}/raw`, {
      headers: { authorization: `Bearer ${s.adminToken}` },
    });
    expect(Buffer.from(await raw.arrayBuffer()).equals(got.raw)).toBe(true);
    expect(await verifyDkim(got.raw, (name, rrtype) => s.core.resolver.resolve(name, rrtype))).toBe('pass');
    const events = await timeline(msg);
    expect(events.at(-1)).toMatchObject({ type: 'relay.released', detail: { to: [to] } });
    expect(events.map((e) => e.type)).toContain('email.delivered');
  });

  it('takes the eml_… id and several addresses, the allow-list admitting each', async () => {
    await sendLive(unique('several', 'dest.example'));
    const list = await s.admin('GET', '/sandbox/messages?limit=1');
    const id = list.body.data[0].id as string;
    const to = [unique('a', 'example.com'), 'Boss <boss@example.org>'];
    const r = await s.admin('POST', `/sandbox/messages/${id}/release`, { to });
    expect(r.status, r.text).toBe(200);
    expect(r.body.to).toEqual([to[0], 'boss@example.org']);
    expect(relay.received.at(-1)!.rcptTo).toEqual([to[0], 'boss@example.org']);
  });

  it('refuses a recipient outside the allow-list, naming it, and sends nothing', async () => {
    const msg = await sendLive(unique('allow', 'dest.example'));
    const before = relay.received.length;
    const r = await s.admin('POST', `/sandbox/messages/${msg}/release`, {
      to: [unique('ok', 'example.com'), 'someone@elsewhere.net'],
    });
    expect(r.status, r.text).toBe(403);
    expect(r.body.code).toBe('relay_recipient_not_allowed');
    expect(r.body.detail).toContain('someone@elsewhere.net');
    expect(r.body.detail).toContain('--relay-allow *@example.com, boss@example.org, *@rules.example.com');
    expect(relay.received.length).toBe(before);
  });

  it('answers the relay’s refusal as a 502 quoting its reply, and keeps it on the timeline', async () => {
    const msg = await sendLive(unique('refused', 'dest.example'));
    relay.answer = { code: 550, text: 'No such user here' };
    try {
      const r = await s.admin('POST', `/sandbox/messages/${msg}/release`, { to: unique('x', 'example.com') });
      expect(r.status, r.text).toBe(502);
      expect(r.body.code).toBe('relay_refused');
      expect(r.body.detail).toContain('550 No such user here');
      expect(r.body.smtp_code).toBe(550);
    } finally {
      relay.answer = 'accept';
    }
    expect((await timeline(msg)).at(-1)).toMatchObject({
      type: 'relay.release_refused',
      detail: { smtp_code: 550, response: '550 No such user here' },
    });
  });

  it('a bad address or body is a 422 or 400, never a 5xx', async () => {
    const msg = await sendLive(unique('bad', 'dest.example'));
    const r = await s.admin('POST', `/sandbox/messages/${msg}/release`, { to: 'not an address' });
    expect(r.status, r.text).toBe(422);
    const empty = await s.admin('POST', `/sandbox/messages/${msg}/release`, { to: [] });
    expect(empty.status, empty.text).toBe(422);
    const none = await s.admin('POST', '/sandbox/messages/eml_nope/release', { to: 'a@example.com' });
    expect(none.status, none.text).toBe(404);
  });
});

describe('a relay rule', () => {
  it('relays live mail to its matching recipients as it is caught, and the timeline shows it', async () => {
    const matching = unique('rule', 'rules.example.com');
    const other = unique('other', 'dest.example');
    const msg = await sendLive([matching, other]);
    await s.settle();
    const got = relay.received.find((m) => m.rcptTo.includes(matching))!;
    expect(got.rcptTo).toEqual([matching]);
    const list = await s.admin('GET', `/sandbox/messages?to=${encodeURIComponent(matching)}`);
    const raw = await fetch(`${s.origin}/sandbox/messages/${list.body.data[0].id}/raw`, {
      headers: { authorization: `Bearer ${s.adminToken}` },
    });
    expect(Buffer.from(await raw.arrayBuffer()).equals(got.raw)).toBe(true);
    expect(await verifyDkim(got.raw, (name, rrtype) => s.core.resolver.resolve(name, rrtype))).toBe('pass');
    expect((await timeline(msg)).at(-1)).toMatchObject({ type: 'relay.relayed', detail: { to: [matching] } });
  });

  it('relays nothing to a matching recipient the allow-list does not admit', async () => {
    const to = unique('blocked', 'blocked.example.net');
    const msg = await sendLive(to);
    await s.settle();
    expect(relay.received.filter((m) => m.rcptTo.includes(to))).toEqual([]);
    expect((await timeline(msg)).map((e) => e.type).filter((t) => t.startsWith('relay.'))).toEqual([]);
  });

  it('never relays test-key mail', async () => {
    const to = unique('testkey', 'rules.example.com');
    const msg = await sendLive(to, s.seed!.api_key_test);
    await s.settle();
    expect(relay.received.filter((m) => m.rcptTo.includes(to))).toEqual([]);
    expect((await timeline(msg)).map((e) => e.type).filter((t) => t.startsWith('relay.'))).toEqual([]);
  });

  it('defers on a 4xx, on the job retry policy, and relays once the relay takes it', async () => {
    relay.answer = { code: 451, text: 'Try again later' };
    const to = unique('deferred', 'rules.example.com');
    const msg = await sendLive(to);
    await s.settle();
    relay.answer = 'accept';
    expect(relay.received.filter((m) => m.rcptTo.includes(to))).toEqual([]);
    const deferred = (await timeline(msg)).at(-1)!;
    expect(deferred).toMatchObject({ type: 'relay.deferred', detail: { smtp_code: 451, attempt: 1 } });
    expect(deferred.detail.response).toBe('451 Try again later');
    // The first retry is 2 s on (core/rules/retry-policy.ts jobRetryDelay).
    await s.advance(1);
    expect(relay.received.filter((m) => m.rcptTo.includes(to))).toEqual([]);
    await s.advance(1);
    await s.settle();
    expect(relay.received.filter((m) => m.rcptTo.includes(to))).toHaveLength(1);
    expect((await timeline(msg)).at(-1)).toMatchObject({ type: 'relay.relayed', detail: { attempt: 2 } });
  });

  it('ends refused on a 5xx, without retrying', async () => {
    relay.answer = { code: 554, text: 'Relay access denied' };
    const to = unique('final', 'rules.example.com');
    const msg = await sendLive(to);
    await s.settle();
    relay.answer = 'accept';
    await s.advance(60);
    expect(relay.received.filter((m) => m.rcptTo.includes(to))).toEqual([]);
    const types = (await timeline(msg)).map((e) => e.type).filter((t) => t.startsWith('relay.'));
    expect(types).toEqual(['relay.refused']);
  });

  it('never shows the relay’s password in a log line, the ready line or an answer', async () => {
    expect(JSON.stringify(s.ready)).not.toContain(RELAY_PASS);
    expect(s.ready.relay).toEqual({
      url: `smtp://relay-user:***@127.0.0.1:${relay.port}`,
      allow: ['*@example.com', 'boss@example.org', '*@rules.example.com'],
      matching: ['*@rules.example.com', '*@blocked.example.net'],
    });
    const info = await s.admin('GET', '/sandbox/relay');
    expect(info.body).toEqual({
      configured: true,
      relay: `smtp://relay-user:***@127.0.0.1:${relay.port}`,
      from: null,
      allow: ['*@example.com', 'boss@example.org', '*@rules.example.com'],
      matching: ['*@rules.example.com', '*@blocked.example.net'],
    });
    expect(log.lines.join('\n')).not.toContain(RELAY_PASS);
    expect(log.lines.some((l) => l.includes('job failed, will retry'))).toBe(true);
  });
});

describe('a relay that refuses the credentials', () => {
  it('answers 502 relay_refused quoting its 535, the password given never shown', async () => {
    const t = await startTestServer({ relayUrl: `smtp://relay-user:wrong-pass-123@127.0.0.1:${relay.port}` });
    try {
      const sent = await t.call('POST', '/v1/emails', {
        token: t.seed!.api_key_test,
        body: { from: 'orders@example.test', to: 'a@dest.example', subject: 'Login', text: 'x' },
      });
      await t.settle();
      const r = await t.admin('POST', `/sandbox/messages/${sent.body.id}/release`, { to: 'a@example.com' });
      expect(r.status, r.text).toBe(502);
      expect(r.body).toMatchObject({ code: 'relay_refused', smtp_code: 535 });
      expect(r.body.detail).toContain('535');
      expect(r.text).not.toContain('wrong-pass-123');
      const m = await t.admin('GET', `/sandbox/messages/${sent.body.id}`);
      expect(m.text).not.toContain('wrong-pass-123');
      expect(m.body.events.at(-1)).toMatchObject({ type: 'relay.release_refused', detail: { smtp_code: 535 } });
    } finally {
      await t.close();
    }
  });
});

describe('a relay that is down', () => {
  let down: TestServer;
  beforeAll(async () => {
    down = await startTestServer({
      relayUrl: `smtp://user:hunter2@127.0.0.1:${await closedPort()}`,
      relayMatching: ['*@rules.example.com'],
      relayFrom: 'sandbox@example.test',
    });
  });
  afterAll(() => down.close());

  it('answers a release 502 relay_unreachable, and defers a relay rule, both on the timeline', async () => {
    const to = unique('down', 'rules.example.com');
    const sent = await down.call('POST', '/v1/emails', {
      token: down.seed!.api_key_live,
      body: { from: 'orders@example.test', to, subject: 'Down', text: 'x' },
    });
    await down.settle();
    const m = await down.admin('GET', `/sandbox/messages/${sent.body.id}`);
    expect(m.body.events.at(-1)).toMatchObject({
      type: 'relay.deferred',
      detail: { to: [to], mail_from: 'sandbox@example.test', attempt: 1 },
    });
    expect(m.body.events.at(-1).detail.response).toMatch(/ECONNREFUSED|connect/i);
    const r = await down.admin('POST', `/sandbox/messages/${sent.body.id}/release`, { to: 'a@example.com' });
    expect(r.status, r.text).toBe(502);
    expect(r.body.code).toBe('relay_unreachable');
    expect(r.body.detail).toContain('smtp://user:***@127.0.0.1');
    expect(r.text).not.toContain('hunter2');
    // The next attempt is due 2 s on: the rule's job runs again and defers again (attempt 2).
    await down.advance(2);
    await down.settle();
    const again = await down.admin('GET', `/sandbox/messages/${sent.body.id}`);
    const deferrals = again.body.events.filter((e: { type: string }) => e.type === 'relay.deferred');
    expect(deferrals.map((e: { detail: { attempt: number } }) => e.detail.attempt)).toEqual([1, 2]);
  });
});

describe('a relay offering STARTTLS with a self-signed certificate', () => {
  let tlsRelay: TestRelay;
  beforeAll(async () => {
    const { cert, key } = await makeCertificate(Date.now());
    tlsRelay = await startRelay({ disabledCommands: [], cert, key });
  });
  afterAll(() => tlsRelay.close());

  it('is used over STARTTLS with ?tls=skip-verify, and refused as unreachable without it', async () => {
    for (const [query, ok] of [
      ['?tls=skip-verify', true],
      ['', false],
    ] as const) {
      const t = await startTestServer({ relayUrl: `${tlsRelay.url}${query}` });
      try {
        const sent = await t.call('POST', '/v1/emails', {
          token: t.seed!.api_key_test,
          body: { from: 'orders@example.test', to: 'a@dest.example', subject: 'TLS', text: 'x' },
        });
        await t.settle();
        const r = await t.admin('POST', `/sandbox/messages/${sent.body.id}/release`, { to: 'tls@example.com' });
        if (ok) {
          expect(r.status, r.text).toBe(200);
          expect(tlsRelay.received.at(-1)).toMatchObject({ rcptTo: ['tls@example.com'], secure: true });
        } else {
          expect(r.status, r.text).toBe(502);
          expect(r.body.code).toBe('relay_unreachable');
          expect(r.body.detail).toMatch(/certificate/i);
        }
      } finally {
        await t.close();
      }
    }
  });
});

describe('without a relay', () => {
  let plain: TestServer;
  beforeAll(async () => {
    plain = await startTestServer();
  });
  afterAll(() => plain.close());

  it('a release is a 409 naming --relay-url', async () => {
    const sent = await plain.call('POST', '/v1/emails', {
      token: plain.seed!.api_key_test,
      body: { from: 'orders@example.test', to: 'a@dest.example', subject: 'No relay', text: 'x' },
    });
    await plain.settle();
    const r = await plain.admin('POST', `/sandbox/messages/${sent.body.id}/release`, { to: 'a@example.com' });
    expect(r.status, r.text).toBe(409);
    expect(r.body.code).toBe('relay_not_configured');
    expect(r.body.detail).toContain('--relay-url');
    expect((await plain.admin('GET', '/sandbox/relay')).body).toMatchObject({ configured: false, relay: null });
    expect(plain.ready.relay).toBeUndefined();
  });

  it('a bad relay URL or pattern refuses the start without showing the password', async () => {
    await expect(startTestServer({ relayUrl: 'http://user:pw-secret@host' })).rejects.toThrow(
      /--relay-url http:\/\/user:\*\*\*@host: give an smtp:\/\/ or smtps:\/\/ URL/,
    );
    await expect(startTestServer({ relayMatching: ['*@x.com'] })).rejects.toThrow(/needs a relay: give --relay-url/);
    await expect(startTestServer({ relayUrl: 'smtp://h:25', relayAllow: ['a b'] })).rejects.toThrow(
      /--relay-allow: "a b" is not an address pattern/,
    );
  });
});
