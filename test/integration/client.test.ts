// The API client of src/client against the real server: typed calls from the endpoint table, Problems as errors.
import { createServer } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiError, ConnectionError, createClient, type RetryInfo } from '../../src/client/index.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

describe('the API client', () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer();
  });
  afterAll(() => s.close());

  it('signs in, manages keys with the session and sends with a key, on the paths and methods of the contract', async () => {
    const anon = createClient({ baseUrl: s.api });
    const login = await anon.call('login', { body: { email: s.seed!.email, password: s.seed!.password } });
    expect(login.status).toBe(200);
    expect(login.headers.get('service-version')).toBe('2026-08-01');

    const session = createClient({ baseUrl: `${s.api}/`, token: login.body.access_token });
    expect((await session.call('getMe')).body.user.email).toBe(s.seed!.email);
    const created = await session.call('createApiKey', {
      body: { name: 'ci', scopes: ['emails:send', 'emails:read'] },
    });
    expect(created.status).toBe(201);
    const page = await session.call('listApiKeys', { query: { limit: 1 } });
    expect(page.body.data).toHaveLength(1);
    expect(page.body.has_more).toBe(true);

    const ci = createClient({ baseUrl: s.api, token: () => created.body.key });
    const sent = await ci.call('sendEmail', {
      body: { from: 'Shop <orders@example.test>', to: 'client@example.com', subject: 'Typed', text: 'hello' },
      headers: { 'Idempotency-Key': 'client-test-1' },
    });
    expect(sent.status).toBe(202);
    expect(sent.body.status).toBe('queued');
    await s.settle();
    const message = await ci.call('getEmail', { params: { id: sent.body.id } });
    expect(message.body.status).toBe('delivered');
    const replay = await ci.call('sendEmail', {
      body: { from: 'Shop <orders@example.test>', to: 'client@example.com', subject: 'Typed', text: 'hello' },
      headers: { 'Idempotency-Key': 'client-test-1' },
    });
    expect(replay.body.id).toBe(sent.body.id);
    expect(replay.headers.get('idempotent-replay')).toBe('true');
  });

  it('turns a refusal into an ApiError carrying the Problem', async () => {
    const anon = createClient({ baseUrl: s.api });
    const noCredential = await anon.call('getMe').catch((e: unknown) => e);
    expect(noCredential).toBeInstanceOf(ApiError);
    expect(noCredential).toMatchObject({
      status: 401,
      problem: { code: 'missing_credentials', request_id: expect.stringMatching(/^req_/) },
    });

    const key = createClient({ baseUrl: s.api, token: s.seed!.api_key_test });
    // A path parameter is encoded: an id with a slash is an unknown message, not another route.
    const odd = await key.call('getEmail', { params: { id: 'msg_x/cancel' } }).catch((e: unknown) => e);
    expect(odd).toMatchObject({ status: 404, problem: { code: 'not_found' } });

    const bad = await key
      .call('sendEmail', { body: { from: 'Shop <orders@example.test>', to: [], subject: 'x', text: 'x' } })
      .catch((e: unknown) => e);
    expect(bad).toBeInstanceOf(ApiError);
    expect((bad as ApiError).problem.errors?.map((e) => e.path)).toContain('to');
    expect((bad as ApiError).message).toMatch(/\(4\d\d [a-z_]+\)/);
  });

  it('says which address it could not reach, and how to start a local service', async () => {
    const port = await new Promise<number>((resolve) => {
      const probe = createServer().listen(0, '127.0.0.1', () => {
        const p = (probe.address() as { port: number }).port;
        probe.close(() => resolve(p));
      });
    });
    const gone = createClient({ baseUrl: `http://127.0.0.1:${port}/v1` });
    const err = await gone.call('getOpenApi').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConnectionError);
    expect((err as Error).message).toContain(`http://127.0.0.1:${port}/v1`);
    expect((err as Error).message).toContain('ECONNREFUSED');
    expect((err as Error).message).toContain('svc serve');
  });

  it('tells onRetry of each retry (what failed, which retry, the wait) and prints nothing itself', async () => {
    const chaos = await s.admin('PUT', '/sandbox/chaos', {
      rules: [{ match: { path: '/v1/emails' }, action: { status: 503, retry_after: 0 }, times: 2 }],
    });
    expect(chaos.status).toBe(200);
    const told: RetryInfo[] = [];
    const waited: number[] = [];
    const c = createClient({
      baseUrl: s.api,
      apiKey: s.seed!.api_key_test!,
      onRetry: (r) => told.push(r),
      sleep: async (ms) => void waited.push(ms),
    });
    const sent = await c.call('sendEmail', { body: { from: 'hello@example.test', to: 'r@example.org', text: 'hi' } });
    expect(sent.status).toBe(202);
    const retry = (n: number) => ({
      method: 'POST',
      url: `${s.api}/emails`,
      status: 503,
      code: 'unavailable',
      retry: n,
      retries: 3,
      delayMs: 0,
    });
    expect(told).toEqual([retry(1), retry(2)]);
    expect(waited).toEqual([0, 0]);

    // A refused connection: its code, and the backoff's wait.
    const port = await new Promise<number>((resolve) => {
      const probe = createServer().listen(0, '127.0.0.1', () => {
        const p = (probe.address() as { port: number }).port;
        probe.close(() => resolve(p));
      });
    });
    told.length = 0;
    const gone = createClient({
      baseUrl: `http://127.0.0.1:${port}/v1`,
      retries: 1,
      onRetry: (r) => told.push(r),
      sleep: async () => {},
    });
    await expect(gone.call('getOpenApi')).rejects.toBeInstanceOf(ConnectionError);
    expect(told).toEqual([
      {
        method: 'GET',
        url: `http://127.0.0.1:${port}/v1/openapi.json`,
        code: 'ECONNREFUSED',
        retry: 1,
        retries: 1,
        delayMs: expect.any(Number),
      },
    ]);
  });
});
