// What a real server cannot be made to do on demand — a 503 with Retry-After, a 500, a reset connection, an answer
// off the contract — played by undici's MockAgent (the client's `dispatcher`, which Node's fetch takes), to check how
// the client retries and what it refuses; a service that stops answering is a small server of the test's own.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Agent, MockAgent } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import {
  ApiError,
  BaseUrlError,
  ConnectionError,
  ContractError,
  createClient,
  isLoopbackHost,
  memorySessionStore,
  SessionEndedError,
} from './index.js';
import { API_CALL_BACKOFF, backoffDelay, RECONNECT_BACKOFF, retryAfterMs } from './backoff.js';
import { readAll, send } from './transport.js';

const ORIGIN = 'http://127.0.0.1:4010';
const problem = (status: number, code: string) => ({
  type: `https://docs.svc.dev/errors/${code}`,
  title: code,
  status,
  code,
  request_id: 'req_x',
});
const json = { 'content-type': 'application/json' };
const accepted = { id: 'msg_1', status: 'queued', created_at: '2026-08-01T12:00:00.000Z' };
const email = { from: 'Shop <o@example.test>', to: 'a@example.org', subject: 'Hi', text: 'hello' };

interface Seen {
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: string;
}

function setup(o: { retries?: number } = {}) {
  const agent = new MockAgent();
  agent.disableNetConnect();
  const pool = agent.get(ORIGIN);
  const slept: number[] = [];
  const seen: Seen[] = [];
  const record = (opts: { method: string; path: string; headers?: unknown; body?: unknown }) => {
    const h = opts.headers as Record<string, string>;
    seen.push({
      method: opts.method,
      path: opts.path,
      headers: Object.fromEntries(Object.entries(h).map(([k, v]) => [k.toLowerCase(), v])),
      body: opts.body as string,
    });
  };
  const client = createClient({
    baseUrl: `${ORIGIN}/v1`,
    apiKey: 'svc_test_0123456789abcdefghijklmnopqrstuv',
    dispatcher: agent,
    retries: o.retries,
    sleep: async (ms) => void slept.push(ms),
  });
  return { agent, pool, client, slept, seen, record };
}

let agents: MockAgent[] = [];
afterEach(async () => {
  for (const a of agents) await a.close();
  agents = [];
});

describe('the client, against failures a real server does not produce on demand', () => {
  it('waits out a 503 Retry-After, then sends again with the same Idempotency-Key', async () => {
    const t = setup();
    agents.push(t.agent);
    t.pool.intercept({ path: '/v1/emails', method: 'POST' }).reply((o) => {
      t.record(o);
      return {
        statusCode: 503,
        data: problem(503, 'unavailable'),
        responseOptions: { headers: { 'retry-after': '7', ...json } },
      };
    });
    t.pool.intercept({ path: '/v1/emails', method: 'POST' }).reply((o) => {
      t.record(o);
      return { statusCode: 202, data: accepted, responseOptions: { headers: json } };
    });
    const r = await t.client.call('sendEmail', { body: email });
    expect(r.body).toEqual(accepted);
    expect(t.slept).toEqual([7000]);
    expect(t.seen).toHaveLength(2);
    const [first, second] = t.seen;
    expect(first!.headers['idempotency-key']).toMatch(/^[0-9a-f-]{36}$/);
    expect(second!.headers['idempotency-key']).toBe(first!.headers['idempotency-key']);
    expect(first!.headers['service-version']).toBe('2026-08-01');
    expect(first!.headers.authorization).toBe('Bearer svc_test_0123456789abcdefghijklmnopqrstuv');
  });

  it('keeps the Idempotency-Key it was given, across a reset connection', async () => {
    const t = setup();
    agents.push(t.agent);
    t.pool
      .intercept({ path: '/v1/emails', method: 'POST' })
      .replyWithError(Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' }));
    t.pool.intercept({ path: '/v1/emails', method: 'POST' }).reply((o) => {
      t.record(o);
      return { statusCode: 202, data: accepted, responseOptions: { headers: json } };
    });
    await t.client.call('sendEmail', { body: email, idempotencyKey: 'order-1042' });
    expect(t.seen[0]!.headers['idempotency-key']).toBe('order-1042');
    expect(t.slept).toHaveLength(1);
    expect(t.slept[0]).toBeGreaterThanOrEqual(250);
    expect(t.slept[0]).toBeLessThanOrEqual(500);
  });

  it('retries a GET after a 500 and after a reset, with growing waits', async () => {
    const t = setup();
    agents.push(t.agent);
    t.pool
      .intercept({ path: '/v1/emails/msg_1', method: 'GET' })
      .reply(500, problem(500, 'internal_error'), { headers: json });
    t.pool
      .intercept({ path: '/v1/emails/msg_1', method: 'GET' })
      .replyWithError(Object.assign(new Error('reset'), { code: 'ECONNRESET' }));
    t.pool.intercept({ path: '/v1/emails/msg_1', method: 'GET' }).reply(
      200,
      {
        ...accepted,
        plane: 'transactional',
        from: 'o@example.test',
        to: ['a@example.org'],
        cc: [],
        bcc: [],
        subject: 'Hi',
        tags: [],
        scheduled_at: null,
        events: [],
      },
      { headers: json },
    );
    const r = await t.client.call('getEmail', { params: { id: 'msg_1' } });
    expect(r.body.status).toBe('queued');
    expect(t.slept).toHaveLength(2);
    expect(t.slept[1]!).toBeGreaterThanOrEqual(500);
  });

  it('does not repeat a POST without an Idempotency-Key after a 500 or a reset: it may have acted', async () => {
    const t = setup();
    agents.push(t.agent);
    t.pool
      .intercept({ path: '/v1/api-keys', method: 'POST' })
      .reply(500, problem(500, 'internal_error'), { headers: json });
    const err = await t.client
      .call('createApiKey', { body: { name: 'ci', scopes: ['emails:send'] } })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect((err as ApiError).status).toBe(500);

    t.pool
      .intercept({ path: '/v1/auth/refresh', method: 'POST' })
      .replyWithError(Object.assign(new Error('reset'), { code: 'ECONNRESET' }));
    const reset = await t.client.call('refreshSession', { body: { refresh_token: 'rt_x' } }).catch((e: unknown) => e);
    expect(reset).toBeInstanceOf(ConnectionError);
    expect((reset as ConnectionError).code).toBe('ECONNRESET');
    expect(t.slept).toEqual([]);
  });

  it('retries a refused connection for any request (it never arrived), then says where it could not connect', async () => {
    const t = setup({ retries: 2 });
    agents.push(t.agent);
    for (let i = 0; i < 3; i++) {
      t.pool
        .intercept({ path: '/v1/auth/login', method: 'POST' })
        .replyWithError(Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }));
    }
    const err = await t.client
      .call('login', { body: { email: 'a@example.org', password: 'x' } })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConnectionError);
    expect((err as Error).message).toContain(`${ORIGIN}/v1`);
    expect((err as Error).message).toContain('ECONNREFUSED');
    expect(t.slept).toHaveLength(2);
  });

  it('gives up after --retries and answers with the last Problem; a Retry-After longer than a minute is not waited out', async () => {
    const t = setup({ retries: 1 });
    agents.push(t.agent);
    for (let i = 0; i < 2; i++) {
      t.pool
        .intercept({ path: '/v1/domains', method: 'GET' })
        .reply(429, problem(429, 'rate_limited'), { headers: { 'retry-after': '1', ...json } });
    }
    const err = await t.client.call('listDomains').catch((e: unknown) => e);
    expect(err).toMatchObject({ status: 429, problem: { code: 'rate_limited' } });
    expect((err as ApiError).retryAfter).toBe(1);
    expect(t.slept).toEqual([1000]);

    const u = setup();
    agents.push(u.agent);
    u.pool
      .intercept({ path: '/v1/auth/login', method: 'POST' })
      .reply(429, problem(429, 'rate_limited'), { headers: { 'retry-after': '840', ...json } });
    const throttled = await u.client
      .call('login', { body: { email: 'a@example.org', password: 'x' } })
      .catch((e: unknown) => e);
    expect(throttled).toMatchObject({ status: 429 });
    expect(u.slept).toEqual([]);
  });

  it('refuses a 2xx body off the contract, naming the field', async () => {
    const t = setup();
    agents.push(t.agent);
    t.pool
      .intercept({ path: '/v1/emails', method: 'POST' })
      .reply(202, { id: 'msg_1', status: 'sent' }, { headers: json });
    const err = await t.client.call('sendEmail', { body: email }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ContractError);
    expect((err as Error).message).toMatch(/sendEmail: .* answered 202 .*status/);

    t.pool
      .intercept({ path: '/v1/domains', method: 'GET' })
      .reply(200, '<html>a proxy page</html>', { headers: { 'content-type': 'text/html' } });
    const html = await t.client.call('listDomains').catch((e: unknown) => e);
    expect(html).toBeInstanceOf(ContractError);
    expect((html as Error).message).toContain('not JSON');
  });

  it('keeps unknown fields of a body for printing it unchanged, while the parsed body follows the contract', async () => {
    const t = setup();
    agents.push(t.agent);
    t.pool
      .intercept({ path: '/v1/emails', method: 'POST' })
      .reply(202, { ...accepted, added_later: 1 }, { headers: json });
    const r = await t.client.call('sendEmail', { body: email });
    expect(r.raw).toEqual({ ...accepted, added_later: 1 });
    expect(r.body).toEqual(accepted);
  });

  it('turns a non-Problem error body into an ApiError that still says what came back', async () => {
    const t = setup();
    agents.push(t.agent);
    // A DELETE may be repeated: the default three retries, then the last answer.
    t.pool
      .intercept({ path: '/v1/domains/dom_1', method: 'DELETE' })
      .reply(502, 'Bad gateway from the proxy', { headers: { 'x-request-id': 'req_p' } })
      .times(4);
    const err = (await t.client.call('deleteDomain', { params: { id: 'dom_1' } }).catch((e: unknown) => e)) as ApiError;
    expect(t.slept).toHaveLength(3);
    expect(err).toBeInstanceOf(ApiError);
    expect(err.problem).toMatchObject({
      status: 502,
      code: 'unexpected_response',
      title: 'Bad Gateway',
      detail: 'Bad gateway from the proxy',
      request_id: 'req_p',
    });
  });

  it('refreshes a session on a 401 invalid_token and stores the rotation; a refused refresh token ends the session', async () => {
    const t = setup();
    agents.push(t.agent);
    const store = memorySessionStore({
      access_token: 'at_old',
      refresh_token: 'rt_1',
      expires_at: '2999-01-01T00:00:00.000Z',
    });
    const client = createClient({
      baseUrl: `${ORIGIN}/v1`,
      session: store,
      dispatcher: t.agent,
      sleep: async () => {},
    });
    t.pool.intercept({ path: '/v1/auth/me', method: 'GET' }).reply((o) => {
      t.record(o);
      return { statusCode: 401, data: problem(401, 'invalid_token'), responseOptions: { headers: json } };
    });
    t.pool.intercept({ path: '/v1/auth/refresh', method: 'POST' }).reply((o) => {
      t.record(o);
      return {
        statusCode: 200,
        data: {
          access_token: 'at_new',
          refresh_token: 'rt_2',
          expires_at: '2999-01-01T00:00:00.000Z',
          user: { id: 'usr_1', email: 'a@example.org', email_verified: true },
          workspaces: [],
        },
        responseOptions: { headers: json },
      };
    });
    t.pool.intercept({ path: '/v1/auth/me', method: 'GET' }).reply((o) => {
      t.record(o);
      return {
        statusCode: 200,
        data: { user: { id: 'usr_1', email: 'a@example.org', email_verified: true } },
        responseOptions: { headers: json },
      };
    });
    const me = await client.call('getMe');
    expect(me.body.user.email).toBe('a@example.org');
    expect(t.seen.map((s) => `${s.method} ${s.path} ${s.headers.authorization ?? ''}`)).toEqual([
      'GET /v1/auth/me Bearer at_old',
      'POST /v1/auth/refresh ',
      'GET /v1/auth/me Bearer at_new',
    ]);
    expect(JSON.parse(t.seen[1]!.body!)).toEqual({ refresh_token: 'rt_1' });
    expect(await store.load()).toEqual({
      access_token: 'at_new',
      refresh_token: 'rt_2',
      expires_at: '2999-01-01T00:00:00.000Z',
    });

    // Expiring within the minute: refreshed before the call; the family is gone (a reused token) → the session ends.
    await store.save({
      access_token: 'at_new',
      refresh_token: 'rt_2',
      expires_at: new Date(Date.now() + 30_000).toISOString(),
    });
    t.pool
      .intercept({ path: '/v1/auth/refresh', method: 'POST' })
      .reply(401, problem(401, 'invalid_refresh_token'), { headers: json });
    const ended = await client.call('getMe').catch((e: unknown) => e);
    expect(ended).toBeInstanceOf(SessionEndedError);
    expect(await store.load()).toBeNull();
  });

  it('answers a redirect as it came, without following it', async () => {
    const t = setup();
    agents.push(t.agent);
    t.pool.intercept({ path: '/v1/domains', method: 'GET' }).reply((o) => {
      t.record(o);
      return {
        statusCode: 302,
        data: 'Moved',
        responseOptions: { headers: { location: 'https://elsewhere.example/v1/domains' } },
      };
    });
    const err = (await t.client.call('listDomains').catch((e: unknown) => e)) as ApiError;
    expect(err).toBeInstanceOf(ApiError);
    expect(err.problem).toMatchObject({ status: 302, code: 'unexpected_response', title: 'Found', detail: 'Moved' });
    expect(t.seen).toHaveLength(1);
  });

  it('through fetch (given a dispatcher), gives up at once on a port fetch will not connect to, and says why', async () => {
    const slept: number[] = [];
    const dispatcher = new Agent();
    const client = createClient({
      baseUrl: 'http://127.0.0.1:6000/v1',
      dispatcher,
      sleep: async (ms) => void slept.push(ms),
    });
    const err = await client.call('getOpenApi').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConnectionError);
    expect((err as ConnectionError).code).toBe('ERR_BAD_PORT');
    expect((err as Error).message).toContain(
      'could not reach http://127.0.0.1:6000/v1 (ERR_BAD_PORT: fetch connects to no port browsers block',
    );
    expect(slept).toEqual([]);
    await dispatcher.close();
  });

  it('lets a body go that its reader leaves early, through Node http and through fetch, and reads one sent in pieces whole', async () => {
    // A real server that sends an endless body a piece at a time (an event stream), and tells when its client is gone.
    const gone: string[] = [];
    const server = createServer((req, res) => {
      res.on('close', () => gone.push(req.url!));
      res.writeHead(200, { 'content-type': 'text/plain' });
      if (req.url === '/whole') {
        res.write('one ');
        setImmediate(() => res.end('two'));
        return;
      }
      res.write('first piece');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const dispatcher = new Agent();
    try {
      const { port } = server.address() as AddressInfo;
      const o = { headersMs: 5_000, idleMs: 5_000 };
      for (const [path, through] of [
        ['/http', o],
        ['/fetch', { ...o, dispatcher }],
      ] as const) {
        const r = await send(new URL(`http://127.0.0.1:${port}${path}`), { method: 'GET', headers: {} }, through);
        for await (const chunk of r.body) {
          expect(Buffer.from(chunk).toString()).toBe('first piece');
          break;
        }
        await expect.poll(() => gone).toContain(path);
      }
      const whole = await send(new URL(`http://127.0.0.1:${port}/whole`), { method: 'GET', headers: {} }, o);
      expect(Buffer.from(await readAll(whole)).toString()).toBe('one two');
    } finally {
      await dispatcher.close();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('times out a service that sends no answer, or stops in the middle of its body', async () => {
    // A real server that answers a list with nothing and a domain with half a body, then holds both connections.
    const server = createServer((req, res) => {
      if (req.url === '/v1/domains/dom_1') res.writeHead(200, { 'content-type': 'application/json' }).write('{"id":');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = server.address() as AddressInfo;
      const client = createClient({ baseUrl: `http://127.0.0.1:${port}/v1`, retries: 0 });
      const silent = await client.call('listDomains', { timeoutMs: 200 }).catch((e: unknown) => e);
      expect(silent).toBeInstanceOf(ConnectionError);
      expect((silent as ConnectionError).code).toBe('UND_ERR_HEADERS_TIMEOUT');
      const stalled = await client
        .call('getDomain', { params: { id: 'dom_1' }, timeoutMs: 200 })
        .catch((e: unknown) => e);
      expect(stalled).toBeInstanceOf(ConnectionError);
      expect((stalled as ConnectionError).code).toBe('UND_ERR_BODY_TIMEOUT');
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('through Node http (no dispatcher), retries a GET whose connection was reset and reads an answer sent in pieces', async () => {
    let requests = 0;
    const server = createServer((req, res) => {
      requests++;
      if (requests === 1) return void req.socket.destroy();
      res.writeHead(200, { 'content-type': 'application/json', 'set-cookie': ['a=1', 'b=2'] });
      const body = JSON.stringify({ data: [], has_more: false });
      res.write(body.slice(0, 5));
      setImmediate(() => res.end(body.slice(5)));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = server.address() as AddressInfo;
      const slept: number[] = [];
      const client = createClient({ baseUrl: `http://127.0.0.1:${port}/v1`, sleep: async (ms) => void slept.push(ms) });
      const r = await client.call('listDomains');
      expect(r.body).toEqual({ data: [], has_more: false });
      expect(r.headers.get('set-cookie')).toBe('a=1, b=2');
      expect(requests).toBe(2);
      expect(slept).toHaveLength(1);
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('refuses plain HTTP to a host that is not loopback, and a base URL that is not http(s)', () => {
    expect(() => createClient({ baseUrl: 'http://api.example.com/v1' })).toThrow(BaseUrlError);
    expect(() => createClient({ baseUrl: 'http://api.example.com/v1' })).toThrow(/use an https:\/\/ base URL/);
    expect(() => createClient({ baseUrl: 'ftp://127.0.0.1/v1' })).toThrow(/not an http\(s\) URL/);
    for (const ok of [
      'https://api.example.com/v1',
      'http://127.0.0.1:4010/v1',
      'http://localhost:4010/v1',
      'http://[::1]:4010/v1',
      'http://127.8.0.1/v1',
    ]) {
      expect(() => createClient({ baseUrl: ok }), ok).not.toThrow();
    }
  });
});

describe('backoff and loopback', () => {
  it('grows the wait from 250–500 ms, doubling, capped at 8 s', () => {
    expect(backoffDelay(API_CALL_BACKOFF, 0, () => 0)).toBe(250);
    expect(backoffDelay(API_CALL_BACKOFF, 0, () => 1)).toBe(500);
    expect(backoffDelay(API_CALL_BACKOFF, 2, () => 1)).toBe(2000);
    expect(backoffDelay(API_CALL_BACKOFF, 10, () => 1)).toBe(8000);
    // Reconnecting stops growing at 5 s.
    expect(backoffDelay(RECONNECT_BACKOFF, 10, () => 1)).toBe(5000);
  });

  it('reads Retry-After as seconds or as an HTTP date', () => {
    expect(retryAfterMs('3')).toBe(3000);
    expect(retryAfterMs('Wed, 01 Jan 2031 00:00:10 GMT', Date.parse('2031-01-01T00:00:00Z'))).toBe(10_000);
    expect(retryAfterMs('soon')).toBeUndefined();
    expect(retryAfterMs(null)).toBeUndefined();
  });

  it('knows loopback hosts written every way a URL allows', () => {
    for (const h of ['localhost', 'app.localhost', '127.0.0.1', '127.1.2.3', '[::1]', '::1', '[::ffff:127.0.0.1]'])
      expect(isLoopbackHost(h), h).toBe(true);
    for (const h of ['example.com', '10.0.0.1', '[::2]', 'localhost.example.com', '128.0.0.1'])
      expect(isLoopbackHost(h), h).toBe(false);
  });
});
