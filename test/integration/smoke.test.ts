import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.js';

describe('svc serve smoke', () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer();
  });
  afterAll(() => s.close());

  it('signs in the seeded owner and lists the seeded keys', async () => {
    const login = await s.call('POST', '/v1/auth/login', {
      body: { email: s.seed!.email, password: s.seed!.password },
    });
    expect(login.status).toBe(200);
    const keys = await s.call('GET', '/v1/api-keys', { token: login.body.access_token });
    expect(keys.status).toBe(200);
    expect(keys.body.data.map((k: { mode: string }) => k.mode).sort()).toEqual(['live', 'test']);
  });
});
