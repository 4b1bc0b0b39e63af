// Chaos on demand (docs/local-server.md#chaos): rules put with PUT /sandbox/chaos make the real server refuse, delay or
// drop /v1 requests, and its real SMTP sink refuse stages of a session — the service's own deliveries included, so a
// deferral and its retry happen for real. Driven with the package's own client, whose retries meet them.
import { get as httpGet, type IncomingHttpHeaders } from 'node:http';
import nodemailer from 'nodemailer';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { ApiError, ConnectionError, createClient } from '../../src/client/index.js';
import type { LogFields, Logger } from '../../src/lib/log.js';
import { errorPaths, expectProblem } from '../helpers/problems.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { rcpt } from './emails-helpers.js';

/** A logger that keeps what it is told, to see what the server's log says. */
function keptLog() {
  const lines: { level: string; msg: string; fields: LogFields }[] = [];
  const keep =
    (level: string) =>
    (msg: string, fields: LogFields = {}) =>
      void lines.push({ level, msg, fields });
  const log: Logger = { debug: keep('debug'), info: keep('info'), warn: keep('warn'), error: keep('error') };
  return { log, lines };
}

describe('chaos', () => {
  let s: TestServer;
  const kept = keptLog();
  beforeAll(async () => {
    s = await startTestServer({ log: kept.log });
  });
  afterAll(() => s?.close());
  beforeEach(async () => {
    // No delivery of an earlier test still on its way to meet this test's rules.
    await s.settle();
    expect((await s.admin('DELETE', '/sandbox/chaos')).status).toBe(204);
  });

  /** The package's client with the seeded test key, whose waits between retries are recorded, not waited. */
  const client = (o: { retries?: number } = {}) => {
    const slept: number[] = [];
    const c = createClient({
      baseUrl: s.api,
      apiKey: s.seed!.api_key_test,
      adminToken: s.adminToken,
      retries: o.retries,
      sleep: async (ms) => void slept.push(ms),
    });
    return { c, slept };
  };
  const setRules = async (rules: unknown[], seed?: number) => {
    const r = await s.admin('PUT', '/sandbox/chaos', { rules, ...(seed !== undefined ? { seed } : {}) });
    expect(r.status, r.text).toBe(200);
    return r.body as { rules: { remaining: number | null }[]; seed: number };
  };
  const listRules = async () => {
    const r = await s.admin('GET', '/sandbox/chaos');
    expect(r.status, r.text).toBe(200);
    return r.body as { rules: { remaining: number | null }[]; seed: number };
  };
  const mail = (to: string) => ({ from: 'Shop <orders@example.test>', to, subject: 'Chaos', text: 'Hello' });
  const eventsOf = async (id: string) => {
    const r = await s.call('GET', `/v1/emails/${id}`, { token: s.seed!.api_key_test });
    expect(r.status, r.text).toBe(200);
    return r.body as { status: string; events: { type: string; occurred_at: string; detail: Record<string, any> }[] };
  };
  const caught = async (to: string) =>
    (await s.admin('GET', `/sandbox/messages?to=${encodeURIComponent(to)}`)).body.data as unknown[];

  describe('on /v1', () => {
    it('503 twice: the client’s send succeeds on its third try, and exactly one message is created', async () => {
      await setRules([{ match: { method: 'POST', path: '/v1/emails' }, action: { status: 503 }, times: 2 }]);
      const to = rcpt('chaos503');
      const { c, slept } = client();
      const sent = await c.call('sendEmail', { body: mail(to) });
      expect(sent.status).toBe(202);
      expect(sent.headers.get('idempotent-replay')).toBeNull();
      // Two 503s, each with Retry-After: 1, waited out by the client (through its sleep, here not waited).
      expect(slept).toEqual([1000, 1000]);
      expect(sent.headers.get('svc-chaos')).toBeNull();
      const listed = (await s.admin('GET', '/sandbox/chaos')).body;
      expect(listed.rules[0].remaining).toBe(0);

      await s.settle();
      expect(await caught(to)).toHaveLength(1);
      const events = await c.call('listEvents', { query: { type: 'email.queued', limit: 100 } });
      expect(events.body.data.filter((e) => e.data.message_id === sent.body.id)).toHaveLength(1);
      expect(events.body.data.filter((e) => JSON.stringify(e.data.to) === JSON.stringify([to]))).toHaveLength(1);
      expect((await eventsOf(sent.body.id)).status).toBe('delivered');
    });

    it('429 with retry_after 7: the client waits the 7 s it is told, then sends', async () => {
      await setRules([{ match: { path: '/v1/emails' }, action: { status: 429, retry_after: 7 }, times: 1 }]);
      const { c, slept } = client();
      const sent = await c.call('sendEmail', { body: mail(rcpt('chaos429')) });
      expect(sent.status).toBe(202);
      expect(slept).toEqual([7000]);
    });

    it('answers a Problem of the rule’s status, with Svc-Chaos, a fitting code and how to clear it', async () => {
      await setRules([
        { match: { method: 'GET', path: '/v1/emails/{id}' }, action: { status: 502 } },
        { match: { method: 'POST', path: '/v1/emails' }, action: { status: 503 } },
        { match: { path: '/v1/openapi.json' }, action: { status: 429, retry_after: 0 } },
      ]);
      const refused = await s.call('POST', '/v1/emails', { token: s.seed!.api_key_test, body: mail(rcpt()) });
      expectProblem(refused, 503, 'unavailable');
      expect(refused.headers.get('svc-chaos')).toBe('1');
      expect(refused.headers.get('retry-after')).toBe('1');
      expect(refused.body.title).toBe('Service unavailable');
      expect(refused.body.detail).toMatch(/chaos rule 1 answered this request with 503 on purpose/);
      expect(refused.body.detail).toContain('svc sandbox chaos clear');

      const gateway = await s.call('GET', '/v1/emails/msg_000000000000000000000000', { token: s.seed!.api_key_test });
      expectProblem(gateway, 502, 'internal_error');
      expect(gateway.body.title).toBe('Bad Gateway');
      expect(gateway.headers.get('svc-chaos')).toBe('0');
      expect(gateway.headers.get('retry-after')).toBeNull();

      const limited = await s.call('GET', '/v1/openapi.json');
      expectProblem(limited, 429, 'rate_limited');
      expect([limited.headers.get('svc-chaos'), limited.headers.get('retry-after')]).toEqual(['2', '0']);

      // Before the credential is looked at: no key, the same answer.
      const anonymous = await s.call('POST', '/v1/emails', { body: mail(rcpt()) });
      expectProblem(anonymous, 503, 'unavailable');

      // A request no rule matches is untouched, and carries no Svc-Chaos.
      const other = await s.call('GET', '/v1/domains', { token: s.seed!.api_key_test });
      expect(other.status).toBe(200);
      expect(other.headers.get('svc-chaos')).toBeNull();

      // The server's log says which rule answered.
      const line = kept.lines.find(
        (l) => l.msg === 'request' && l.fields.request_id === refused.headers.get('x-request-id'),
      );
      expect(line?.fields).toMatchObject({
        method: 'POST',
        path: '/v1/emails',
        status: 503,
        chaos: 'rule 1: answered 503',
      });
    });

    it('lets a delayed request go at once when the server stops, rather than holding the stop for the delay', async () => {
      const own = await startTestServer();
      try {
        const r = await own.admin('PUT', '/sandbox/chaos', {
          rules: [{ match: { path: '/v1/domains' }, action: { delay_ms: 60_000 } }],
        });
        expect(r.status, r.text).toBe(200);
        const held = own.call('GET', '/v1/domains', { token: own.seed!.api_key_test });
        // A request on a connection of its own has come back: the held one is in the server, waiting out its delay.
        expect((await own.call('GET', '/v1/openapi.json')).status).toBe(200);
        await own.close();
        // Without the early end, the close and this answer would wait the whole minute (past the test's time).
        expect((await held).status).toBe(200);
      } finally {
        await own.close();
      }
    });

    it('holds a request until its delay has passed, then handles it as usual, with Svc-Chaos', async () => {
      // A minute: the delay's timer is this process's, faked, so it fires only when the test moves it on (a real minute
      // would outlast the test). The held request goes through node:http on a connection of its own, whose timers are
      // not the global ones: while the fake clock jumps a minute, nothing of the client's can time out under it.
      await setRules([{ match: { method: 'GET', path: '/v1/domains' }, action: { delay_ms: 60_000 }, times: 1 }]);
      vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
      try {
        let settled: string | undefined;
        const held = plainGet(`${s.origin}/v1/domains`, s.seed!.api_key_test).then(
          (r) => ((settled = `answered ${r.status}`), r),
          (err: Error) => {
            settled = `failed: ${err.message}`;
            throw err;
          },
        );
        // The rule has taken the request (its one use is spent), and the request waits out its delay. Not vi.waitFor:
        // under fake timers it moves the clock on by its interval at every look.
        while ((await listRules()).rules[0]!.remaining !== 0) await new Promise((r) => setImmediate(r));
        vi.advanceTimersByTime(59_999);
        // A request on a connection of its own comes and goes: the held one is still unanswered 1 ms short of its delay.
        expect((await s.call('GET', '/v1/openapi.json')).status).toBe(200);
        expect(settled).toBeUndefined();
        vi.advanceTimersByTime(1);
        const r = await held;
        expect(r.status).toBe(200);
        expect(r.body.data.map((d: { name: string }) => d.name)).toContain('example.test');
        expect(r.headers['svc-chaos']).toBe('0');
        const line = kept.lines.find((l) => l.fields.request_id === r.headers['x-request-id']);
        expect(line?.fields).toMatchObject({ status: 200, chaos: 'rule 0: delayed 60000 ms' });
      } finally {
        vi.useRealTimers();
      }
      const again = await s.call('GET', '/v1/domains', { token: s.seed!.api_key_test });
      expect(again.headers.get('svc-chaos')).toBeNull();
    });

    it('reset drops the connection: the client sees a network error, and the server goes on', async () => {
      await setRules([{ match: { path: '/v1/openapi.json' }, action: { reset: true } }]);
      const once = client({ retries: 0 });
      const err = await once.c.call('getOpenApi').catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ConnectionError);
      expect(once.slept).toEqual([]);
      // A GET is safe to repeat: the client tries three more times, then gives up the same way.
      const retried = client();
      expect(await retried.c.call('getOpenApi').catch((e: unknown) => e)).toBeInstanceOf(ConnectionError);
      expect(retried.slept).toHaveLength(3);
      await expect(fetch(`${s.api}/openapi.json`)).rejects.toThrow(TypeError);
      const line = kept.lines.filter((l) => l.msg === 'request' && l.fields.path === '/v1/openapi.json').at(-1);
      expect(line?.fields).toMatchObject({ status: 'reset', chaos: 'rule 0: reset' });

      expect((await s.admin('DELETE', '/sandbox/chaos')).status).toBe(204);
      expect((await retried.c.call('getOpenApi')).status).toBe(200);
    });

    it('never touches /sandbox routes, health or the inbox page, even with a rule for every /v1 request', async () => {
      await setRules([{ match: {}, action: { status: 503 } }]);
      expect((await s.call('GET', '/v1/openapi.json')).status).toBe(503);
      expect((await s.admin('GET', '/sandbox/clock')).status).toBe(200);
      expect((await s.admin('GET', '/sandbox/messages')).status).toBe(200);
      expect((await s.call('GET', '/livez')).status).toBe(200);
      expect((await s.call('GET', '/readyz')).status).toBe(200);
      const page = await s.call('GET', '/', { headers: { cookie: 'x=1' } });
      expect(page.status).not.toBe(503);
      expect(page.headers.get('svc-chaos')).toBeNull();
      expect((await s.call('GET', '/docs/errors/unavailable')).status).toBe(200);
    });

    it('draws probabilities from the seed: the same seed fails the same requests on two runs', async () => {
      const run = async (seed: number) => {
        await setRules([{ match: { path: '/v1/openapi.json' }, action: { status: 500 }, probability: 0.5 }], seed);
        let statuses = '';
        for (let i = 0; i < 24; i++) statuses += (await s.call('GET', '/v1/openapi.json')).status === 500 ? 'x' : '.';
        return statuses;
      };
      const first = await run(7);
      expect(await run(7)).toBe(first);
      expect(first).toMatch(/x/);
      expect(first).toMatch(/\./);
      expect(await run(8)).not.toBe(first);
    });
  });

  describe('PUT, GET and DELETE /sandbox/chaos', () => {
    it('replaces the rules and lists them with remaining and the seed; DELETE removes them', async () => {
      const rules = [
        { match: { method: 'post', path: '/v1/emails' }, action: { status: 503, retry_after: 2 }, times: 2 },
        { match: { smtp: 'rcpt' }, action: { code: 451, message: 'Greylisted' }, probability: 0.25 },
        { match: { path: '/v1/emails/{id}' }, action: { delay_ms: 10 } },
      ];
      const put = await s.admin('PUT', '/sandbox/chaos', { rules, seed: 42 });
      expect(put.status, put.text).toBe(200);
      const listed = {
        rules: [
          {
            match: { method: 'POST', path: '/v1/emails' },
            action: { status: 503, retry_after: 2 },
            times: 2,
            remaining: 2,
          },
          { match: { smtp: 'rcpt' }, action: { code: 451, message: 'Greylisted' }, probability: 0.25, remaining: null },
          { match: { path: '/v1/emails/{id}' }, action: { delay_ms: 10 }, remaining: null },
        ],
        seed: 42,
      };
      expect(put.body).toEqual(listed);
      expect((await s.admin('GET', '/sandbox/chaos')).body).toEqual(listed);

      // A second PUT replaces them all; without a seed one is chosen, and reported.
      const next = await s.admin('PUT', '/sandbox/chaos', { rules: [{ match: {}, action: { reset: true } }] });
      expect(next.body.rules).toEqual([{ match: {}, action: { reset: true }, remaining: null }]);
      expect(next.body.seed).toEqual(expect.any(Number));

      const del = await s.admin('DELETE', '/sandbox/chaos');
      expect(del.status).toBe(204);
      expect((await s.admin('GET', '/sandbox/chaos')).body.rules).toEqual([]);
    });

    it('takes the admin token only', async () => {
      expectProblem(await s.call('GET', '/sandbox/chaos'), 401, 'missing_credentials');
      expectProblem(
        await s.call('PUT', '/sandbox/chaos', { body: { rules: [] }, token: s.seed!.api_key_test }),
        401,
        'invalid_token',
      );
      expectProblem(await s.call('DELETE', '/sandbox/chaos', { token: 'adm_nope' }), 401, 'invalid_token');
    });

    it('refuses a broken rule with 422 naming the field, and keeps the rules it had', async () => {
      await setRules([{ match: { path: '/v1/emails' }, action: { status: 503 } }]);
      const refused = async (rule: unknown, path: string) => {
        const r = await s.admin('PUT', '/sandbox/chaos', { rules: [rule] });
        expectProblem(r, 422, 'validation_failed');
        expect(errorPaths(r), r.text).toContain(path);
        return r;
      };
      const http = { path: '/v1/emails' };
      await refused({ match: http, action: { status: 600 } }, 'rules.0.action.status');
      await refused({ match: http, action: { status: 302 } }, 'rules.0.action.status');
      await refused({ match: http, action: { status: 503, retry_after: -1 } }, 'rules.0.action.retry_after');
      await refused({ match: http, action: { status: 503, retry_after: 1.5 } }, 'rules.0.action.retry_after');
      await refused({ match: http, action: { delay_ms: 60_001 } }, 'rules.0.action.delay_ms');
      await refused({ match: http, action: { status: 503 }, probability: 1.5 }, 'rules.0.probability');
      await refused({ match: http, action: { status: 503 }, times: 0 }, 'rules.0.times');
      await refused({ match: http, action: { status: 503 }, times: 2.5 }, 'rules.0.times');
      await refused({ match: { smtp: 'rcpt' }, action: { code: 399 } }, 'rules.0.action.code');
      await refused({ match: { smtp: 'rcpt' }, action: { status: 503 } }, 'rules.0.action.status');
      await refused({ match: { smtp: 'rcpt' }, action: { reset: true } }, 'rules.0.action.reset');
      await refused({ match: { smtp: 'data', path: '/v1/emails' }, action: { code: 451 } }, 'rules.0.match.path');
      await refused({ match: http, action: { code: 451 } }, 'rules.0.action.code');
      await refused({ match: http, action: { status: 503, delay_ms: 5 } }, 'rules.0.action.delay_ms');
      await refused({ match: http, action: {} }, 'rules.0.action');
      await refused({ match: http, action: { delay_ms: 5, retry_after: 1 } }, 'rules.0.action.retry_after');
      await refused({ match: { path: '/v2/emails' }, action: { status: 503 } }, 'rules.0.match.path');
      await refused({ match: { method: 'FETCH' }, action: { status: 503 } }, 'rules.0.match.method');
      const noRoute = await refused({ match: { path: '/v1/email' }, action: { status: 503 } }, 'rules.0.match.path');
      expect(noRoute.body.detail).toMatch(/no \/v1 route has this path/);
      const noMethod = await refused(
        { match: { method: 'GET', path: '/v1/emails' }, action: { status: 503 } },
        'rules.0.match.method',
      );
      expect(noMethod.body.detail).toMatch(/\/v1\/emails takes POST, not GET/);
      // A shape error (an unknown field) is a 400, still naming it.
      const unknown = await s.admin('PUT', '/sandbox/chaos', {
        rules: [{ match: http, action: { status: 503, retry: 1 } }],
      });
      expectProblem(unknown, 400, 'invalid_request');
      expect(errorPaths(unknown)).toContain('rules.0.action.retry');

      expect((await s.admin('GET', '/sandbox/chaos')).body.rules).toEqual([
        { match: { path: '/v1/emails' }, action: { status: 503 }, remaining: null },
      ]);
    });
  });

  describe('on the SMTP sink', () => {
    it('451 at RCPT once: the delivery is deferred (email.deferred), and delivered when the clock passes the retry', async () => {
      await setRules([{ match: { smtp: 'rcpt' }, action: { code: 451 }, times: 1 }]);
      const to = rcpt('chaos451');
      const { c } = client();
      const sent = await c.call('sendEmail', { body: mail(to) });
      await s.settle();

      const deferred = await eventsOf(sent.body.id);
      expect(deferred.status).toBe('queued');
      expect(deferred.events.map((e) => e.type)).toEqual(['email.queued', 'email.deferred']);
      const detail = deferred.events[1]!.detail;
      expect(detail).toMatchObject({
        to,
        smtp_code: '451',
        reason: expect.stringMatching(
          /^The sandbox sink answered 451 .*chaos rule 0.*; the message will be tried again\.$/,
        ),
      });
      // The job's own next attempt: 2 s after this one, on the service clock.
      expect(Date.parse(detail.next_attempt_at)).toBe(Date.parse(deferred.events[1]!.occurred_at) + 2000);
      expect(await caught(to)).toEqual([]);
      const listed = await c.call('listEvents', { query: { type: 'email.deferred', limit: 100 } });
      expect(listed.body.data.some((e) => e.data.message_id === sent.body.id && e.data.smtp_code === '451')).toBe(true);
      expect(kept.lines.some((l) => l.msg === 'smtp chaos' && l.fields.chaos === 'rule 0: answered 451')).toBe(true);

      await s.advance(1);
      expect((await eventsOf(sent.body.id)).status).toBe('queued');
      await s.advance(1);
      const delivered = await eventsOf(sent.body.id);
      expect(delivered.status).toBe('delivered');
      expect(delivered.events.map((e) => e.type)).toEqual([
        'email.queued',
        'email.deferred',
        'email.sent',
        'email.delivered',
      ]);
      expect(await caught(to)).toHaveLength(1);
    });

    it('refuses every recipient of the message a RCPT rule falls on, so it is deferred whole', async () => {
      await setRules([{ match: { smtp: 'rcpt' }, action: { code: 450, message: 'Mailbox busy' }, times: 1 }]);
      const [a, b] = [rcpt('two-a'), rcpt('two-b')];
      const { c } = client();
      const sent = await c.call('sendEmail', { body: { ...mail(a), to: [a, b] } });
      await s.settle();
      const m = await eventsOf(sent.body.id);
      expect(m.events.filter((e) => e.type === 'email.deferred').map((e) => e.detail.to)).toEqual([a, b]);
      expect(m.events[1]!.detail.reason).toContain('450 Mailbox busy');
      await s.advance(2);
      expect((await eventsOf(sent.body.id)).status).toBe('delivered');
      const [one] = (await caught(a)) as { id: string }[];
      const whole = (await s.admin('GET', `/sandbox/messages/${one!.id}`)).body;
      expect(whole.envelope.rcpt_to.sort()).toEqual([a, b].sort());
    });

    it('a 5xx at DATA ends the message failed at once; 451 at MAIL defers it', async () => {
      await setRules([{ match: { smtp: 'data' }, action: { code: 554, message: 'Rejected by policy' }, times: 1 }]);
      const { c } = client();
      const failedTo = rcpt('chaos554');
      const failed = await c.call('sendEmail', { body: mail(failedTo) });
      await s.settle();
      const f = await eventsOf(failed.body.id);
      expect(f.status).toBe('failed');
      expect(f.events.at(-1)!.detail.reason).toMatch(/^The sandbox sink refused the message: 554 Rejected by policy/);
      expect(await caught(failedTo)).toEqual([]);

      await setRules([{ match: { smtp: 'mail' }, action: { code: 451 }, times: 1 }]);
      const to = rcpt('chaos-mail');
      const sent = await c.call('sendEmail', { body: mail(to) });
      await s.settle();
      const m = await eventsOf(sent.body.id);
      expect(m.events.map((e) => e.type)).toEqual(['email.queued', 'email.deferred']);
      expect(m.events[1]!.detail.smtp_code).toBe('451');
      await s.advance(2);
      expect((await eventsOf(sent.body.id)).status).toBe('delivered');
      expect(await caught(to)).toHaveLength(1);
    });

    it('421 at connect defers the delivery that opened the connection (the service reuses its connections)', async () => {
      // A server of its own: its first delivery opens the service's first connection to the sink.
      const fresh = await startTestServer();
      try {
        const put = await fresh.admin('PUT', '/sandbox/chaos', {
          rules: [{ match: { smtp: 'connect' }, action: { code: 421 }, times: 1 }],
        });
        expect(put.status, put.text).toBe(200);
        const to = rcpt('chaos-connect');
        const sent = await fresh.call('POST', '/v1/emails', { token: fresh.seed!.api_key_test, body: mail(to) });
        expect(sent.status, sent.text).toBe(202);
        await fresh.settle();
        const get = async () =>
          (await fresh.call('GET', `/v1/emails/${sent.body.id}`, { token: fresh.seed!.api_key_test })).body;
        const m = await get();
        expect(m.events.map((e: { type: string }) => e.type)).toEqual(['email.queued', 'email.deferred']);
        expect(m.events[1].detail.smtp_code).toBe('421');
        expect((await fresh.admin('GET', '/sandbox/chaos')).body.rules[0].remaining).toBe(0);
        await fresh.advance(2);
        expect((await get()).status).toBe('delivered');
      } finally {
        await fresh.close();
      }
    });

    it('answers any program handing mail to the sink the same way', async () => {
      await setRules([{ match: { smtp: 'rcpt' }, action: { code: 452, message: 'Too much mail' }, times: 1 }]);
      const smtp = nodemailer.createTransport({ host: '127.0.0.1', port: s.smtpPort, secure: false, ignoreTLS: true });
      try {
        const err = await smtp
          .sendMail({ from: 'app@example.org', to: 'ada@example.org', subject: 'x', text: 'x' })
          .catch((e: { responseCode?: number; response?: string }) => e);
        expect(err).toMatchObject({ responseCode: 452, response: expect.stringContaining('Too much mail') });
        await smtp.sendMail({ from: 'app@example.org', to: 'ada@example.org', subject: 'x', text: 'x' });
      } finally {
        smtp.close();
      }
    });
  });

  it('answers the client’s own ApiError after its retries when a rule does not retire', async () => {
    await setRules([{ match: { path: '/v1/emails' }, action: { status: 503, retry_after: 0 } }]);
    const { c, slept } = client();
    const err = await c.call('sendEmail', { body: mail(rcpt()) }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect(err).toMatchObject({ status: 503, problem: { code: 'unavailable' } });
    expect(slept).toEqual([0, 0, 0]);
  });

  it('left no error in the server’s log (a reset connection included); the retries are warnings', () => {
    expect(kept.lines.filter((l) => l.level === 'error')).toEqual([]);
    expect(kept.lines.filter((l) => l.level === 'warn').map((l) => l.msg)).toContain('job failed, will retry');
  });
});

/** A GET through node:http on a new connection (no agent, no timeout of its own), its JSON body parsed. */
function plainGet(url: string, token: string) {
  return new Promise<{ status: number; headers: IncomingHttpHeaders; body: any }>((resolve, reject) => {
    const req = httpGet(url, { agent: false, headers: { authorization: `Bearer ${token}` } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('error', reject);
      res.on('end', () =>
        resolve({ status: res.statusCode!, headers: res.headers, body: JSON.parse(Buffer.concat(chunks).toString()) }),
      );
    });
    req.on('error', reject);
  });
}
