// Wire basics (docs/api.md#basics, #errors, #versioning): content types, JSON parsing, body
// size, the version header, request ids, 404/405 Problems, Problem type/docs_url, the OpenAPI document, and no
// stack traces in responses.
import { Agent, fetch as undiciFetch } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Endpoint, endpoints, fillPath, isV1, type V1Endpoint } from '../../src/contract/endpoints.js';
import { REQUEST_ID, SERVICE_VERSION, expectProblem } from '../helpers/problems.js';
import { startTestServer, type Reply, type TestServer } from '../helpers/server.js';

const MAX_BODY = 40 * 1024 * 1024;
/** The `/v1` operations of the endpoint table (its sandbox routes are outside `/v1` and its OpenAPI document). */
const v1Entries = () =>
  (Object.entries(endpoints) as [string, Endpoint][]).filter((x): x is [string, V1Endpoint] => isV1(x[1]));

let s: TestServer;
let token: string;

beforeAll(async () => {
  s = await startTestServer();
  token = await freshToken();
});
afterAll(() => s.close());

async function freshToken(): Promise<string> {
  const r = await s.call('POST', '/v1/auth/login', { body: { email: s.seed!.email, password: s.seed!.password } });
  expect(r.status, r.text).toBe(200);
  return r.body.access_token;
}

function loginBody(): string {
  return JSON.stringify({ email: s.seed!.email, password: s.seed!.password });
}

function expectWireHeaders(r: { status: number; headers: Headers }) {
  expect(r.headers.get('service-version'), `status ${r.status}`).toBe(SERVICE_VERSION);
  expect(r.headers.get('x-request-id'), `status ${r.status}`).toMatch(REQUEST_ID);
}

/** One request on its own connection, so an early answer to a large upload cannot spoil a pooled socket. */
async function isolatedRequest(
  path: string,
  headers: Record<string, string>,
  body: Uint8Array | ReadableStream<Uint8Array>,
): Promise<Reply> {
  const agent = new Agent({ pipelining: 0 });
  try {
    const res = await undiciFetch(s.origin + path, {
      method: 'POST',
      headers,
      body,
      dispatcher: agent,
      ...(body instanceof ReadableStream ? { duplex: 'half' as const } : {}),
    });
    const text = await res.text();
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = undefined;
    }
    return { status: res.status, headers: res.headers as unknown as Headers, body: parsed as any, text };
  } finally {
    await agent.destroy().catch(() => {});
  }
}

/** `total` bytes of JSON whitespace in 1 MiB chunks, then `tail`, as a stream (sent chunked: no Content-Length). */
function chunkedBody(total: number, tail = ''): ReadableStream<Uint8Array> {
  let sent = 0;
  return new ReadableStream({
    pull(c) {
      if (sent >= total) {
        if (tail) c.enqueue(new TextEncoder().encode(tail));
        c.close();
        return;
      }
      const n = Math.min(1024 * 1024, total - sent);
      sent += n;
      c.enqueue(new Uint8Array(n).fill(0x20));
    },
  });
}

describe('request bodies', () => {
  it('accepts application/json, with a charset parameter and in any case', async () => {
    for (const type of ['application/json', 'application/json; charset=utf-8', 'Application/JSON;charset=UTF-8']) {
      const r = await s.call('POST', '/v1/auth/login', { raw: loginBody(), headers: { 'content-type': type } });
      expect(r.status, `${type}: ${r.text}`).toBe(200);
    }
  });

  it('refuses any other Content-Type on a request with a body with 400 unsupported_content_type', async () => {
    for (const type of [
      'text/plain',
      'application/x-www-form-urlencoded',
      'multipart/form-data; boundary=x',
      'application/jsonx',
      'application/xml',
      'text/json',
    ]) {
      const r = await s.call('POST', '/v1/auth/login', { raw: loginBody(), headers: { 'content-type': type } });
      expectProblem(r, 400, 'unsupported_content_type');
    }
    // No Content-Type at all (a byte body gets none from fetch).
    const res = await fetch(`${s.origin}/v1/auth/login`, {
      method: 'POST',
      body: new TextEncoder().encode(loginBody()),
    });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { code: string }).code).toBe('unsupported_content_type');
    // Also on an authenticated operation, and on one that takes no body.
    expectProblem(
      await s.call('POST', '/v1/api-keys', {
        token,
        raw: '{"name":"k","scopes":["emails:send"]}',
        headers: { 'content-type': 'text/plain' },
      }),
      400,
      'unsupported_content_type',
    );
    expectProblem(
      await s.call('POST', '/v1/auth/resend-verification', {
        token,
        raw: 'hello',
        headers: { 'content-type': 'text/plain' },
      }),
      400,
      'unsupported_content_type',
    );
  });

  it('refuses unparsable JSON with 400 invalid_json', async () => {
    for (const raw of ['{', '{"email": }', "{'email': 'a'}", '{"email":"a",}', 'nul', '{"a":1} {"b":2}']) {
      const r = await s.call('POST', '/v1/auth/login', { raw, headers: { 'content-type': 'application/json' } });
      expectProblem(r, 400, 'invalid_json');
    }
  });

  it('refuses a JSON body that is not an object with 400 invalid_request', async () => {
    for (const raw of ['[]', '[{"email":"a"}]', '"text"', '42', 'true', 'null']) {
      const r = await s.call('POST', '/v1/auth/login', { raw, headers: { 'content-type': 'application/json' } });
      expectProblem(r, 400, 'invalid_request');
      expect(r.body.errors.length).toBeGreaterThan(0);
    }
  });

  it('refuses a body on an operation that takes none when it has fields, and accepts {}', async () => {
    expect((await s.call('POST', '/v1/auth/resend-verification', { token, body: {} })).status).toBe(202);
    const r = await s.call('POST', '/v1/auth/resend-verification', { token, body: { force: true } });
    expectProblem(r, 400, 'invalid_request');
    expect(r.body.errors.map((e: { path: string }) => e.path)).toContain('force');
  });
});

describe('body size', () => {
  const sendHeaders = () => ({ 'content-type': 'application/json', authorization: `Bearer ${s.seed!.api_key_test}` });

  it('answers 413 payload_too_large for a send over 40 MiB declared with Content-Length', async () => {
    const r = await isolatedRequest('/v1/emails', sendHeaders(), new Uint8Array(MAX_BODY + 1).fill(0x20));
    expectProblem(r, 413, 'payload_too_large');
    expect(r.body.detail).toContain('40 MiB');
    expectWireHeaders(r);
  });

  it('answers 413 for a chunked send that grows over 40 MiB', async () => {
    const r = await isolatedRequest('/v1/emails', sendHeaders(), chunkedBody(MAX_BODY + 1024 * 1024));
    expectProblem(r, 413, 'payload_too_large');
    expectWireHeaders(r);
  });

  it('reads a send of exactly 40 MiB, with Content-Length or chunked', async () => {
    // 40 MiB of JSON whitespace ending in `{}`: parsed, then refused for its missing fields — not for its size.
    const bytes = new Uint8Array(MAX_BODY).fill(0x20);
    bytes.set(new TextEncoder().encode('{}'), MAX_BODY - 2);
    expectProblem(await isolatedRequest('/v1/emails', sendHeaders(), bytes), 400, 'invalid_request');
    expectProblem(
      await isolatedRequest('/v1/emails', sendHeaders(), chunkedBody(MAX_BODY - 2, '{}')),
      400,
      'invalid_request',
    );
  });

  it('operations without attachments take 64 KiB: a declared length over it is refused before the credential is looked at', async () => {
    const small = 64 * 1024;
    const credentials: Record<string, string | null> = {
      '/v1/auth/login': null,
      '/v1/domains': s.seed!.api_key_test,
      '/v1/api-keys': token,
      '/sandbox/invites': s.adminToken,
    };
    for (const [path, credential] of Object.entries(credentials)) {
      // No credential at all: still 413, as the size is checked first.
      const declared = await isolatedRequest(
        path,
        { 'content-type': 'application/json' },
        new Uint8Array(small + 1).fill(0x20),
      );
      expectProblem(declared, 413, 'payload_too_large');
      expect(declared.body.detail).toContain('64 KiB');
      expect(declared.headers.get('connection')).toBe('close');
      // Chunked, the size shows while reading, which starts once the credential is accepted.
      const headers: Record<string, string> = { 'content-type': 'application/json' };
      if (credential) headers.authorization = `Bearer ${credential}`;
      expectProblem(await isolatedRequest(path, headers, chunkedBody(small + 1)), 413, 'payload_too_large');
    }
    // Just under the limit, the body is read: whitespace then an empty object, refused for what it lacks.
    const bytes = new Uint8Array(small).fill(0x20);
    bytes.set(new TextEncoder().encode('{}'), small - 2);
    expectProblem(
      await isolatedRequest('/v1/auth/login', { 'content-type': 'application/json' }, bytes),
      400,
      'invalid_request',
    );
    // A send with a bad credential is refused without its 40 MiB being read.
    const r = await isolatedRequest(
      '/v1/emails',
      { 'content-type': 'application/json', authorization: 'Bearer nope' },
      chunkedBody(MAX_BODY),
    );
    expectProblem(r, 401);
    expect(r.headers.get('connection')).toBe('close');
  });

  it('keeps serving after refusing a large body', async () => {
    const r = await s.call('GET', '/v1/openapi.json');
    expect(r.status).toBe(200);
  });
});

describe('Service-Version and X-Request-Id', () => {
  it('are on every response: success, no content, errors, 404 and 405, sandbox routes', async () => {
    const created = await s.call('POST', '/v1/api-keys', { token, body: { name: 'wire', scopes: ['domains:read'] } });
    expect(created.status).toBe(201);
    const replies: Reply[] = [
      await s.call('GET', '/v1/openapi.json'),
      created,
      await s.call('DELETE', `/v1/api-keys/${created.body.id}`, { token }),
      await s.call('GET', '/v1/api-keys', { token }),
      await s.call('GET', '/v1/domains', { token: s.seed!.api_key_test }),
      await s.call('POST', '/v1/auth/login', { raw: '{', headers: { 'content-type': 'application/json' } }),
      await s.call('GET', '/v1/auth/me'),
      await s.call('GET', '/v1/auth/me', { token: s.seed!.api_key_test }),
      await s.call('POST', '/v1/api-keys', { token, body: { name: '', scopes: ['emails:send'] } }),
      await s.call('GET', '/v1/no-such-thing'),
      await s.call('GET', '/elsewhere'),
      await s.call('PUT', '/v1/api-keys', { token }),
      await s.admin('GET', '/sandbox/clock'),
      await s.call('GET', '/sandbox/clock'),
      await s.call('GET', '/v1/auth/me', { headers: { 'service-version': 'garbage' } }),
    ];
    const statuses = replies.map((r) => r.status);
    expect(statuses).toEqual([200, 201, 204, 200, 200, 400, 401, 403, 422, 404, 404, 405, 200, 401, 400]);
    for (const r of replies) expectWireHeaders(r);
    const ids = replies.map((r) => r.headers.get('x-request-id'));
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('accepts the supported version sent explicitly', async () => {
    const r = await s.call('GET', '/v1/api-keys', { token, headers: { 'service-version': SERVICE_VERSION } });
    expect(r.status).toBe(200);
    expectWireHeaders(r);
  });

  it('refuses any other version, malformed ones included, with 400 unsupported_version and never substitutes', async () => {
    for (const v of ['2025-01-01', '2026-08-02', '2027-01-01', 'garbage', 'latest', '2026-8-1', '20260801', '']) {
      // On an operation that would succeed, so the refusal is the version's.
      const r = await s.call('GET', '/v1/api-keys', { token, headers: { 'service-version': v } });
      expectProblem(r, 400, 'unsupported_version');
      expectWireHeaders(r);
    }
    // Also on operations without credentials and with a body: nothing is done.
    const login = await s.call('POST', '/v1/auth/login', {
      raw: loginBody(),
      headers: { 'content-type': 'application/json', 'service-version': '2025-01-01' },
    });
    expectProblem(login, 400, 'unsupported_version');
    expectProblem(
      await s.call('GET', '/v1/openapi.json', { headers: { 'service-version': '2025-01-01' } }),
      400,
      'unsupported_version',
    );
  });

  it('repeats the X-Request-Id of a Problem in its request_id', async () => {
    for (const r of [
      await s.call('GET', '/v1/auth/me'),
      await s.call('GET', '/v1/nowhere'),
      await s.call('POST', '/v1/auth/login', { raw: '[]', headers: { 'content-type': 'application/json' } }),
    ]) {
      expect(r.body.request_id).toMatch(REQUEST_ID);
      expect(r.body.request_id).toBe(r.headers.get('x-request-id'));
    }
  });
});

describe('unknown routes and methods', () => {
  it('answers an unknown route with a 404 Problem', async () => {
    for (const path of ['/v1/nope', '/v1/webhooks', '/v1/api-keys/key_x/extra', '/v2/api-keys', '/nope']) {
      const r = await s.call('GET', path);
      expectProblem(r, 404, 'not_found');
      expectWireHeaders(r);
    }
    expectProblem(await s.call('POST', '/v1/nope', { body: {} }), 404, 'not_found');
  });

  it('answers a wrong method on a known path with a 405 Problem and an Allow header, for every path of the table', async () => {
    const all = (Object.values(endpoints) as Endpoint[]).filter(isV1);
    const pattern = (p: string) => new RegExp(`^${p.replace(/:(\w+)/g, '[^/]+')}$`);
    const byPath = new Map<string, Set<string>>();
    for (const e of all) {
      const p = fillPath(e.path, { id: 'x_000000000000000000000000' });
      // Every operation whose path template matches (e.g. GET /emails/:id also matches /emails/batch).
      byPath.set(p, new Set(all.filter((o) => pattern(o.path).test(p)).map((o) => o.method)));
    }
    for (const [path, methods] of byPath) {
      const wrong = ['PUT', 'PATCH', 'DELETE', 'POST', 'GET'].find((m) => !methods.has(m))!;
      const r = await s.call(wrong, `/v1${path}`, { token });
      expectProblem(r, 405, 'method_not_allowed');
      expectWireHeaders(r);
      const allow = (r.headers.get('allow') ?? '')
        .split(',')
        .map((m) => m.trim())
        .filter(Boolean);
      expect(new Set(allow), `${wrong} ${path}`).toEqual(methods);
    }
  });
});

describe('Problem type and docs_url', () => {
  it('are absolute URIs, the same for every Problem of one code and different between codes', async () => {
    const pairs: [Reply, Reply][] = [
      [await s.call('GET', '/v1/a'), await s.call('GET', '/v1/b')],
      [await s.call('GET', '/v1/auth/me'), await s.call('GET', '/v1/api-keys')],
      [
        await s.call('POST', '/v1/auth/login', { raw: '{', headers: { 'content-type': 'application/json' } }),
        await s.call('POST', '/v1/auth/signup', { raw: '{"', headers: { 'content-type': 'application/json' } }),
      ],
      [
        await s.call('POST', '/v1/auth/login', { body: [] }),
        await s.call('POST', '/v1/auth/login', { body: { email: 'a' } }),
      ],
      [
        await s.call('POST', '/v1/api-keys', { token, body: { name: '', scopes: ['emails:send'] } }),
        await s.call('POST', '/v1/api-keys', { token, body: { name: 'k', scopes: [] } }),
      ],
    ];
    const typeByCode = new Map<string, string>();
    for (const [a, b] of pairs) {
      expect(a.body.code).toBe(b.body.code);
      for (const r of [a, b]) {
        for (const field of ['type', 'docs_url']) {
          const u = new URL(r.body[field]); // throws unless absolute
          expect(u.protocol).toMatch(/^https?:$/);
          expect(u.host).not.toBe('');
        }
      }
      expect(a.body.type).toBe(b.body.type);
      expect(a.body.docs_url).toBe(b.body.docs_url);
      typeByCode.set(a.body.code, a.body.type);
    }
    expect(typeByCode.size).toBe(pairs.length);
    expect(new Set(typeByCode.values()).size).toBe(pairs.length);
  });
});

describe('GET /v1/openapi.json', () => {
  let doc: any;
  beforeAll(async () => {
    const r = await s.call('GET', '/v1/openapi.json');
    expect(r.status, r.text).toBe(200);
    expect(r.headers.get('content-type')).toMatch(/^application\/json/);
    expectWireHeaders(r);
    doc = r.body;
  });

  it('needs no credential and is OpenAPI 3.1', () => {
    expect(doc.openapi).toMatch(/^3\.1\.\d+$/);
    expect(doc.info.version).toBe(SERVICE_VERSION);
    expect(doc.servers[0].url).toBe(s.api);
  });

  it('lists every operation of the endpoint table', () => {
    const ops = v1Entries();
    expect(ops.length).toBeGreaterThan(0);
    for (const [name, e] of ops) {
      const path = e.path.replace(/:(\w+)/g, '{$1}');
      const op = doc.paths?.[path]?.[e.method.toLowerCase()];
      expect(op, `${e.method} ${e.path}`).toBeDefined();
      expect(op.operationId).toBe(name);
      expect(op.responses[String(e.success[0])], `${name} success`).toBeDefined();
      for (const status of e.errors) expect(op.responses[String(status)], `${name} ${status}`).toBeDefined();
      for (const [, param] of e.path.matchAll(/:(\w+)/g)) {
        expect(
          op.parameters?.some((p: { name: string; in: string }) => p.name === param && p.in === 'path'),
          `${name} :${param}`,
        ).toBe(true);
      }
      if (e.auth === 'none') expect(op.security ?? []).toEqual([]);
      else expect(op.security?.length, `${name} security`).toBeGreaterThan(0);
    }
    // Nothing listed that is not served.
    const listed = Object.entries(doc.paths).flatMap(([p, methods]) =>
      Object.keys(methods as object).map((m) => `${m} ${p}`),
    );
    expect(listed).toHaveLength(ops.length);
  });

  it('describes request bodies with schemas that reject unknown fields', () => {
    const withBody = v1Entries().filter(([, e]) => e.body);
    expect(withBody.length).toBeGreaterThan(0);
    for (const [name, e] of withBody) {
      const op = doc.paths[e.path.replace(/:(\w+)/g, '{$1}')][e.method.toLowerCase()];
      const schema = op.requestBody?.content?.['application/json']?.schema;
      expect(schema, name).toBeDefined();
      expect(op.requestBody.required, name).toBe(true);
      if (schema.type === 'array') continue; // checked below
      expect(schema.type, name).toBe('object');
      expect(schema.additionalProperties, name).toBe(false);
    }
    const create = doc.paths['/api-keys'].post.requestBody.content['application/json'].schema;
    expect([...create.required].sort()).toEqual(['name', 'scopes']);
  });

  it('describes the items of an array body (the batch) with closed fields too', () => {
    for (const [name, e] of v1Entries()) {
      if (!e.body) continue;
      const schema =
        doc.paths[e.path.replace(/:(\w+)/g, '{$1}')][e.method.toLowerCase()].requestBody.content['application/json']
          .schema;
      if (schema.type !== 'array') continue;
      expect(schema.items?.type, `${name}: items schema ${JSON.stringify(schema.items)}`).toBe('object');
      expect(schema.items.additionalProperties, name).toBe(false);
    }
  });

  it('lists the pagination parameters of list operations', () => {
    for (const [name, e] of v1Entries()) {
      if (!e.query || e.method !== 'GET' || !e.summary.toLowerCase().includes('list')) continue;
      const names = doc.paths[e.path.replace(/:(\w+)/g, '{$1}')].get.parameters.map((p: { name: string }) => p.name);
      expect(names, name).toEqual(expect.arrayContaining(['limit', 'after']));
    }
  });
});

describe('internal errors', () => {
  it('answer 500 internal_error as a Problem without a stack trace or the error message', async () => {
    // Break one operation from the outside (the route calls core.keys.list at request time); src has no test hook.
    const keys = s.core.keys as { list: (...args: unknown[]) => unknown };
    const original = keys.list;
    const marker = 'SECRET-INTERNAL-DETAIL /srv/app/src/server/core/keys.ts:42';
    keys.list = () => {
      throw new Error(marker);
    };
    try {
      const r = await s.call('GET', '/v1/api-keys', { token });
      expectProblem(r, 500, 'internal_error');
      expectWireHeaders(r);
      expect(r.text).not.toContain('SECRET-INTERNAL-DETAIL');
      expect(r.text).not.toMatch(/\n\s+at |\bat .*:\d+:\d+|\.ts:\d+|node_modules|Error:/);
    } finally {
      keys.list = original;
    }
    expect((await s.call('GET', '/v1/api-keys', { token })).status).toBe(200);
  });

  it('never put a stack trace in the Problems of the other refusals', async () => {
    for (const r of [
      await s.call('POST', '/v1/auth/login', { raw: '{"email":', headers: { 'content-type': 'application/json' } }),
      await s.call('POST', '/v1/auth/login', { body: { email: 1, password: [] } }),
      await s.call('GET', '/v1/auth/me', { token: 'eyJhbGciOiJub25lIn0.e30.' }),
      await s.call('GET', '/v1/api-keys?limit=zzz', { token }),
    ]) {
      expect(r.status).toBeGreaterThanOrEqual(400);
      expect(r.text).not.toMatch(/\n\s+at |\bat .*:\d+:\d+|\.ts:\d+|node_modules/);
    }
  });
});
