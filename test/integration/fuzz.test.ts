// A seeded, bounded fuzz of every route of the endpoint table and the sandbox (docs/api.md#errors,
// docs/errors.md): malformed JSON, wrong JSON types, empty strings, huge values, invalid UTF-8, null bytes, odd headers, odd
// query strings, odd path parameters and wrong methods, each with and without the right credential. Whatever is sent,
// the server never answers 5xx, and every error is a Problem. The routes come from the contract's tables, so a route
// added later is fuzzed too. Requests go out through node:http, which sends bytes and headers as given.
import { request, Agent } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { endpoints, type Endpoint } from '../../src/contract/endpoints.js';
import { REQUEST_ID, SERVICE_VERSION } from '../helpers/problems.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { prng } from '../helpers/prng.js';

/** The seed of this run; `FUZZ_SEED=n` replays another. */
const SEED = Number(process.env.FUZZ_SEED ?? 20260801);
/** Requests per route besides its wrong methods. */
const PER_ROUTE = 70;

/** Every error code (docs/errors.md), written out here so that the test checks the server against it. */
const CODES: Record<string, number> = {
  invalid_request: 400,
  invalid_json: 400,
  unsupported_content_type: 400,
  unsupported_version: 400,
  missing_credentials: 401,
  invalid_credentials: 401,
  invalid_api_key: 401,
  invalid_token: 401,
  invalid_refresh_token: 401,
  insufficient_scope: 403,
  ip_not_allowed: 403,
  workspace_suspended: 403,
  invite_required: 403,
  session_required: 403,
  api_key_required: 403,
  workspace_required: 403,
  not_a_member: 403,
  forbidden: 403,
  domain_not_allowed: 403,
  live_sending_locked: 403,
  relay_recipient_not_allowed: 403,
  not_found: 404,
  method_not_allowed: 405,
  idempotency_conflict: 409,
  relay_not_configured: 409,
  payload_too_large: 413,
  validation_failed: 422,
  password_too_short: 422,
  password_breached: 422,
  email_taken: 422,
  verification_token_invalid: 422,
  domain_not_verified: 422,
  domain_exists: 422,
  domain_in_use: 422,
  message_not_cancellable: 422,
  endpoint_limit_reached: 422,
  template_not_found: 422,
  rate_limited: 429,
  content_blocked: 451,
  internal_error: 500,
  relay_refused: 502,
  relay_unreachable: 502,
};

type Auth = Endpoint['auth'];
interface Route {
  name: string;
  method: string;
  path: string;
  auth: Auth;
  body?: z.ZodType;
  /** How an array body's items look (the batch). */
  describedBody?: z.ZodType;
  query?: z.ZodType;
}

// The `/v1` operations under /v1, the sandbox routes (`admin`) from the origin.
const routes: Route[] = (Object.entries(endpoints) as [string, Endpoint][]).map(([name, e]) => ({
  ...e,
  name,
  path: e.auth === 'admin' ? e.path : `/v1${e.path}`,
}));
const templates = routes.map((r) => ({
  method: r.method,
  pattern: new RegExp(`^${r.path.replace(/:\w+/g, '[^/]+')}$`),
}));
/** The methods the tables serve on a concrete path, as a URL parser resolves it (`/a/%2e%2e/b` is `/b`). */
function methodsOf(path: string): Set<string> {
  const resolved = new URL(path, 'http://localhost').pathname;
  return new Set(templates.filter((t) => t.pattern.test(resolved)).map((t) => t.method));
}

const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const deep = (n: number) => `${'{"a":'.repeat(n)}1${'}'.repeat(n)}`;
const jsonArray = (n: number, item: string) => `[${Array.from({ length: n }, () => item).join(',')}]`;

/** JSON texts put in place of one field (kept as text: some nest too deep for JSON.stringify). */
const NASTY_VALUES = [
  '""',
  '" "',
  '"\\u0000"',
  '"a\\u0000b"',
  '"\\ud800"',
  '"\\udfff\\ud800"',
  `"${'x'.repeat(200_000)}"`,
  '"ünïcödé ✉ 📧 مرحبا"',
  '1e308',
  '1e999',
  '-1',
  '0',
  '-0',
  '1.5',
  '9007199254740993',
  '123456789012345678901234567890',
  'true',
  'false',
  'null',
  '[]',
  '{}',
  '[null]',
  '[""]',
  '[[]]',
  '{"":""}',
  deep(100),
  deep(5000),
  `${'['.repeat(20_000)}${']'.repeat(20_000)}`,
  jsonArray(20_000, '"a@b.test"'),
  jsonArray(20_000, '1'),
  jsonArray(200, '{}'),
  `{${Array.from({ length: 5000 }, (_, i) => `"k${i}":${i}`).join(',')}}`,
  '"../../etc/passwd"',
  '"\'; DROP TABLE users; --"',
  '"<script>alert(1)</script>"',
  '"%s%n%x"',
  '"a@example.test\\r\\nBcc: x@y.test"',
  '"2026-13-45T99:99:99Z"',
  '"0000-01-01T00:00:00Z"',
  '"9999-12-31T23:59:59.999Z"',
  '"2026-08-01T00:00:00+25:00"',
  `"${'a@'.repeat(2000)}"`,
  '{"__proto__":{"polluted":true}}',
  '"__proto__"',
  '"constructor"',
  '"dom_000000000000000000000000"',
  '"ws_AAAAAAAAAAAAAAAAAAAAAAAA"',
  '"key_zzzzzzzzzzzzzzzzzzzzzzzz"',
  '"adm_x"',
  '"svc_test_x"',
];

/** Whole bodies that are not what the route takes. */
const NASTY_BODIES: (string | Buffer)[] = [
  '{',
  '{"a":}',
  "{'a':1}",
  '{"a":1,}',
  'nul',
  '{"a":1} {"b":2}',
  '',
  ' ',
  '[]',
  '"text"',
  '42',
  'true',
  'null',
  '\uFEFF{}',
  `${'['.repeat(100_000)}`,
  `${' '.repeat(1_500_000)}{}`,
  deep(10_000),
  '{"a":"\u0000"}',
  '{}\u0000',
  Buffer.from('{"name":"\xff\xfe"}', 'latin1'),
  Buffer.from('{"name":"\xc0\xaf"}', 'latin1'),
  Buffer.from('{"name":"\xe2\x82"}', 'latin1'),
  Buffer.from('{"name":"\xed\xa0\x80"}', 'latin1'),
  Buffer.from('\xff{}', 'latin1'),
  Buffer.from([0x7b, 0x7d, 0x00]),
  'a=1&b=2',
  '<xml/>',
];

const NASTY_CONTENT_TYPES: (string | string[])[] = [
  'application/json; charset=latin1',
  'APPLICATION/JSON',
  'application/jsonx',
  'text/plain',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=x',
  '',
  ';;;',
  `application/json; ${'x'.repeat(2000)}`,
  ['application/json', 'text/plain'],
  ['text/plain', 'application/json'],
];

const NASTY_QUERIES = [
  '?',
  '?limit=',
  '?limit=0',
  '?limit=101',
  '?limit=abc',
  '?limit=1&limit=2',
  '?limit=99999999999999999999999',
  '?limit=-1',
  '?after=',
  '?after=x',
  '?after=key_000000000000000000000000',
  '?after=dom_000000000000000000000000',
  '?after=eml_000000000000000000000000',
  '?after=%FF',
  '?%FF=1',
  '?a=%00',
  '?a=%',
  `?x=${'y'.repeat(4000)}`,
  '?bogus=1',
  '?to=&workspace_id=',
  '?workspace_id=ws_',
  '?workspace_id=ws_000000000000000000000000',
  '?since=yesterday',
  '?type=email.queued&type=bogus',
  '?host=&type=',
  '?host=a&type=A',
  '?__proto__=1',
  '?constructor=1',
  '?limit[]=1',
];

function nastyPathValues(prefix: string | undefined, rand: ReturnType<typeof prng>): string[] {
  const id = (p: string) => `${p}_${Array.from({ length: 24 }, () => rand.pick([...ALPHABET])).join('')}`;
  return [
    '',
    '.',
    '..',
    '%2F',
    '%2e%2e',
    'a%2Fb',
    '%C3%A9',
    '%E2%9C%89',
    '%FF',
    '%00',
    '%',
    '%zz',
    'x'.repeat(3000),
    '__proto__',
    'constructor',
    'null',
    '-1',
    '%20',
    id('zzz'),
    prefix ? id(prefix) : id('key'),
    prefix ? `${prefix}_` : 'x_',
  ];
}

const NASTY_AUTH = [
  'Bearer',
  'Bearer ',
  'Bearer  a b',
  'Basic dXNlcjpwYXNz',
  `Bearer ${'A'.repeat(4000)}`,
  'Bearer svc_test_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx',
  'Bearer eyJhbGciOiJub25lIn0.e30.',
  'Bearer adm_nope',
  'Bearer \xff\xfe',
  'Token abc',
  'Bearer rt_abc',
];

/** The values every field of every body is tried with. */
const CORE_VALUES = [
  '""',
  '" "',
  '"a\\u0000b"',
  '"\\ud800"',
  `"${'x'.repeat(100_000)}"`,
  '1e308',
  '-1',
  '1.5',
  'true',
  'null',
  '[]',
  '{}',
  deep(10_000),
  jsonArray(10_000, '"a@b.test"'),
  '"dom_000000000000000000000000"',
  '"ws_000000000000000000000000"',
  '"\'; DROP TABLE users; --"',
  '"a@example.test\\r\\nBcc: x@y.test"',
];
/** The query strings every query parameter is tried with (`P` stands for the parameter). */
const CORE_QUERY_VALUES = [
  'P=',
  'P=x',
  'P=0',
  'P=-1',
  'P=1&P=2',
  `P=${'9'.repeat(400)}`,
  'P=%FF',
  'P=%00',
  'P=key_000000000000000000000000',
  'P=eml_000000000000000000000000',
  'P=ws_000000000000000000000000',
  'P[]=1',
];

/** The JSON text of `body` with `field` (of its first item, for an array body) holding the JSON text `value`. */
function withValue(body: unknown, field: string, value: string): string {
  const target = (Array.isArray(body) ? body[0] : body) as Record<string, unknown> | undefined;
  if (!target || typeof target !== 'object') return value;
  // An own property even for `__proto__`, which plain assignment would take as the prototype.
  Object.defineProperty(target, field, {
    value: '\u0001FUZZ\u0001',
    enumerable: true,
    writable: true,
    configurable: true,
  });
  return JSON.stringify(body).replace('"\\u0001FUZZ\\u0001"', () => value);
}

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
}

describe('fuzz', () => {
  let s: TestServer;
  let session = '';
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const ids: Record<string, string> = {};

  /** One request exactly as given; header values that are arrays are sent as repeated headers. */
  function send(
    method: string,
    path: string,
    headers: Record<string, string | string[]>,
    body?: string | Buffer,
  ): Promise<Answer> {
    return new Promise((resolve, reject) => {
      const req = request({ host: '127.0.0.1', port: s.port, method, path, agent }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({ status: res.statusCode!, headers: res.headers, text: Buffer.concat(chunks).toString('utf8') }),
        );
        res.on('error', reject);
      });
      req.on('error', reject);
      for (const [k, v] of Object.entries(headers)) req.setHeader(k, v);
      // node:http frames a GET or DELETE body only when told its length.
      if (body !== undefined) req.setHeader('content-length', Buffer.byteLength(body));
      req.end(body);
    });
  }

  async function login(): Promise<string> {
    for (;;) {
      const r = await s.call('POST', '/v1/auth/login', {
        body: { email: s.seed!.email, password: s.seed!.password, workspace_id: s.seed!.workspace_id },
      });
      if (r.status === 200) return r.body.access_token;
      // Fuzzed logins from this address may have hit the throttle: let its window pass on the service clock.
      expect(r.status, r.text).toBe(429);
      await s.advance(Number(r.headers.get('retry-after')) + 1);
    }
  }

  beforeAll(async () => {
    s = await startTestServer({ sendRate: 1_000_000 });
    session = await login();
    // Real ids for the routes that take one, so some fuzzed requests reach the handlers.
    const domain = await s.call('POST', '/v1/domains', { token: session, body: { name: 'fuzz-target.test' } });
    ids.domains = domain.body.id;
    const key = await s.call('POST', '/v1/api-keys', {
      token: session,
      body: { name: 'fuzz', scopes: ['emails:read'] },
    });
    ids['api-keys'] = key.body.id;
    const sent = await s.call('POST', '/v1/emails', {
      token: s.seed!.api_key_test,
      body: { from: 'fuzz@example.test', to: 'delivered@simulator.test', subject: 'fuzz', text: 'fuzz' },
    });
    ids.emails = sent.body.id;
    const ws = await s.admin('POST', '/sandbox/workspaces', { email: s.seed!.email, name: 'Fuzz', role: 'member' });
    ids.workspaces = ws.body.id;
    await s.settle();
    ids.messages = (await s.admin('GET', '/sandbox/messages?limit=1')).body.data[0].id;
    for (const [noun, id] of Object.entries(ids)) expect(id, noun).toMatch(/^[a-z]+_[0-9A-Za-z]{24}$/);
  });
  afterAll(async () => {
    agent.destroy();
    await s?.close();
  });

  /** A valid body where one is known, to mutate; `{}` for a route added later. */
  function baseBody(name: string, n: number): unknown {
    const mail = {
      from: 'Fuzz <fuzz@example.test>',
      to: 'delivered@simulator.test',
      subject: 'fuzz',
      text: 'hello',
      html: '<p>hi</p>',
      tags: [{ name: 'k', value: 'v' }],
      headers: { 'X-Fuzz': '1' },
      attachments: [{ filename: 'a.txt', content: 'aGk=' }],
    };
    const bases: Record<string, unknown> = {
      signup: {
        email: `fuzz-${n}@example.org`,
        password: 'plum-quartz-harbor-1987',
        workspace_name: 'Fuzz',
        invite_code: 'inv-x',
      },
      login: { email: 'fuzz@example.org', password: 'not the password', workspace_id: s.seed!.workspace_id },
      refreshSession: { refresh_token: 'rt_fuzz', workspace_id: s.seed!.workspace_id },
      logout: { refresh_token: 'rt_fuzz' },
      verifyEmail: { token: 'vt_fuzz' },
      createApiKey: { name: 'fuzz', scopes: ['emails:send'], domain_id: ids.domains, ip_allowlist: ['10.0.0.0/8'] },
      createDomain: { name: `fuzz-${n}.test`, purpose: ['sending'] },
      updateDomain: { purpose: ['sending'], mail_from_subdomain: 'bounces', tracking_host: 'links.fuzz-target.test' },
      sendEmail: mail,
      sendBatch: [mail, { ...mail, to: ['bounce@simulator.test'] }],
      createInvite: { max_uses: 2 },
      createSandboxWorkspace: { email: s.seed!.email, name: 'Fuzz', role: 'member' },
      moveClock: { advance_seconds: 1 },
      publishDomain: { kinds: ['dkim'], state: 'visible' },
      putDns: { host: 'fuzz.example.test', type: 'TXT', values: ['v=fuzz'] },
    };
    return structuredClone(bases[name] ?? {});
  }

  /** The field names a body schema knows (the items' for an array body). */
  function fieldsOf(schema: z.ZodType | undefined): string[] {
    if (!schema) return [];
    const json = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as {
      properties?: object;
      items?: { properties?: object };
    };
    return Object.keys(json.properties ?? json.items?.properties ?? {});
  }

  /** A body for the route: valid, one field replaced by a nasty value, another JSON type, or nasty bytes. */
  function bodyFor(r: Route, rand: ReturnType<typeof prng>, n: number): string | Buffer | undefined {
    const roll = rand.int(10);
    if (!r.body && roll < 5) return undefined;
    if (roll === 9) return rand.pick(NASTY_BODIES);
    const base = baseBody(r.name, n);
    if (roll < 3 && r.body) return JSON.stringify(base);
    const fields = fieldsOf(r.describedBody ?? r.body);
    const field = rand.chance(0.15)
      ? rand.pick(['extra', '__proto__', 'constructor', fields[0]?.slice(0, -1) ?? 'x'])
      : rand.pick(fields.length ? fields : ['x']);
    return withValue(base, field, rand.pick(NASTY_VALUES));
  }

  /** The credential a route takes: the admin token, a session, an API key, or none. */
  function rightCredential(r: Route, rand: ReturnType<typeof prng>): string | undefined {
    if (r.auth === 'admin') return s.adminToken;
    if (r.auth === 'session') return session;
    if (r.auth === 'key') return s.seed!.api_key_test;
    if (r.auth === 'either') return rand.pick([session, s.seed!.api_key_test]);
    return undefined;
  }

  /** Mostly the right credential; otherwise none, another kind, or a malformed Authorization header. */
  function credentialFor(r: Route, rand: ReturnType<typeof prng>): string | undefined {
    const roll = rand.int(10);
    if (roll < 6) {
      const right = rightCredential(r, rand);
      return right && `Bearer ${right}`;
    }
    if (roll === 6) return undefined;
    if (roll === 7) return `Bearer ${rand.pick([s.adminToken, session, s.seed!.api_key_test, s.seed!.api_key_live])}`;
    return rand.pick(NASTY_AUTH);
  }

  /** The route's path with each parameter a real id (when one is known and `realShare` says so) or a nasty value. */
  function pathFor(r: Route, rand: ReturnType<typeof prng>, realShare = 0.4, nasty?: string): string {
    return r.path.replace(/:(\w+)/g, (_m, _param, offset: number) => {
      const real =
        ids[
          r.path
            .slice(0, offset - 1)
            .split('/')
            .pop()!
        ];
      if (nasty !== undefined) return nasty;
      if (real && rand.chance(realShare)) return real;
      return rand.pick(nastyPathValues(real?.split('_')[0], rand));
    });
  }

  it(`answers every fuzzed request without a 5xx, every error a Problem (seed ${SEED})`, async () => {
    const rand = prng(SEED);
    const byStatus: Record<number, number> = {};
    const failures: string[] = [];
    const docsUrls = new Set<string>();
    let total = 0;

    async function check(
      method: string,
      path: string,
      headers: Record<string, string | string[]>,
      body?: string | Buffer,
    ) {
      const a = await send(method, path, headers, body);
      total++;
      byStatus[a.status] = (byStatus[a.status] ?? 0) + 1;
      const shown = `${method} ${path.slice(0, 120)} [${JSON.stringify(headers).slice(0, 160)}] body ${String(body ?? '').slice(0, 80)}`;
      const fail = (why: string) => failures.push(`${why}: ${shown} → ${a.status} ${a.text.slice(0, 300)}`);
      if (a.status >= 500) fail('5xx');
      if (a.headers['service-version'] !== SERVICE_VERSION) fail('no Service-Version');
      const requestId = a.headers['x-request-id'];
      if (typeof requestId !== 'string' || !REQUEST_ID.test(requestId)) fail('no X-Request-Id');
      if (a.status === 405) {
        const allow = String(a.headers.allow ?? '')
          .split(',')
          .map((m) => m.trim())
          .filter(Boolean);
        if (allow.length === 0 || allow.includes(method)) fail(`405 with Allow "${a.headers.allow}"`);
      }
      if (a.status < 400) {
        if (a.status === 207) {
          for (const item of JSON.parse(a.text).data)
            if (item.error) checkProblem(item.error, item.status, requestId, fail);
        }
        return a;
      }
      if (!/^application\/problem\+json\b/.test(String(a.headers['content-type'])))
        fail('not application/problem+json');
      else if (method !== 'HEAD') {
        try {
          checkProblem(JSON.parse(a.text), a.status, requestId, fail);
        } catch {
          fail('body is not JSON');
        }
      }
      return a;
    }

    function checkProblem(p: any, status: number, requestId: unknown, fail: (why: string) => void) {
      if (p.status !== status) fail(`status ${p.status} in the body`);
      if (!(typeof p.code === 'string' && Object.hasOwn(CODES, p.code)))
        fail(`code ${p.code} not among the error codes (docs/errors.md)`);
      else if (CODES[p.code] !== status) fail(`code ${p.code} with status ${status}`);
      if (p.request_id !== requestId) fail('request_id is not X-Request-Id');
      if (p.docs_url !== `${s.origin}/docs/errors/${p.code}`) fail(`docs_url ${p.docs_url}`);
      else docsUrls.add(p.docs_url);
      if (typeof p.type !== 'string' || !/^https?:\/\/[^/]+\/./.test(p.type)) fail(`type ${p.type}`);
      if (typeof p.title !== 'string' || p.title === '') fail('no title');
      if (/\n\s+at |node_modules|\.ts:\d+/.test(JSON.stringify(p))) fail('a stack trace');
    }

    /** A request with the right credential and a JSON content type, so that the value under test reaches the rules. */
    async function sendRight(r: Route, path: string, body?: string, idempotent = false) {
      const credential = rightCredential(r, rand);
      const headers: Record<string, string | string[]> = {};
      if (credential) headers.authorization = `Bearer ${credential}`;
      if (body !== undefined) headers['content-type'] = 'application/json';
      if (idempotent) headers['idempotency-key'] = `fuzz-${total}`;
      const a = await check(r.method, path, headers, body);
      // A fuzzed clock move may outlive the session's 15 minutes: sign in again to keep reaching the handlers.
      if (a.status === 401 && credential === session) session = await login();
    }

    // Every field of every body (and one unknown field), each holding every core value in turn.
    for (const r of routes.filter((route) => route.body)) {
      for (const field of [...fieldsOf(r.describedBody ?? r.body), 'htm']) {
        for (const value of CORE_VALUES) {
          await sendRight(r, pathFor(r, rand, 1), withValue(baseBody(r.name, total), field, value), total % 2 === 0);
        }
      }
    }
    // Every parameter of every query (and an unknown one), each holding every odd query value.
    for (const r of routes.filter((route) => route.query)) {
      for (const param of [...fieldsOf(r.query), 'bogus']) {
        for (const value of CORE_QUERY_VALUES)
          await sendRight(r, `${pathFor(r, rand, 1)}?${value.replaceAll('P', param)}`);
      }
    }
    // Every odd path parameter on every route that takes one.
    for (const r of routes.filter((route) => route.path.includes(':'))) {
      for (const nasty of nastyPathValues(ids[r.path.split('/:')[0]!.split('/').pop()!]?.split('_')[0], rand)) {
        await sendRight(r, pathFor(r, rand, 0, nasty), r.body ? JSON.stringify(baseBody(r.name, total)) : undefined);
      }
    }
    // Then random mixes of everything: credentials, bodies, content types, versions, idempotency keys, queries, paths.
    for (const r of routes) {
      for (let i = 0; i < PER_ROUTE; i++) {
        const headers: Record<string, string | string[]> = {};
        const auth = credentialFor(r, rand);
        if (auth !== undefined) headers.authorization = auth;
        const body = bodyFor(r, rand, total);
        if (body !== undefined)
          headers['content-type'] = rand.chance(0.8) ? 'application/json' : rand.pick(NASTY_CONTENT_TYPES);
        if (rand.chance(0.1))
          headers['service-version'] = rand.pick([
            '',
            '2026-08-01x',
            '2025-01-01',
            'x'.repeat(2000),
            '\xff',
            ['2026-08-01', '2026-08-01'],
          ]);
        if (rand.chance(0.2))
          headers['idempotency-key'] = rand.pick([
            'k'.repeat(300),
            '',
            '\xe9t\xe9',
            'k'.repeat(255),
            `fuzz-${rand.int(5)}`,
          ]);
        if (rand.chance(0.05)) headers['x-forwarded-for'] = rand.pick(['not an ip', '::1, 10.0.0.1', '']);
        const path = pathFor(r, rand) + (rand.chance(0.3) ? rand.pick(NASTY_QUERIES) : '');
        const a = await check(r.method, path, headers, body);
        if (a.status === 401 && auth === `Bearer ${session}`) session = await login();
      }
    }
    // The error pages: every code, and odd codes (a 404 Problem).
    for (const code of [...Object.keys(CODES), ...nastyPathValues(undefined, rand)])
      await check('GET', `/docs/errors/${code}`, {});
    // Every method a path does not serve is a 405 naming those it does.
    for (const r of routes) {
      const path = pathFor(r, rand, 1);
      const served = methodsOf(path);
      for (const method of ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'HEAD']) {
        if (served.has(method) || (method === 'HEAD' && served.has('GET'))) continue;
        const a = await check(method, path, { authorization: `Bearer ${s.adminToken}` });
        // A path that resolves to no route at all (`/sandbox/webhooks/%2e%2e` is `/sandbox/`) is a 404.
        const expected = served.size ? 405 : 404;
        if (a.status !== expected) failures.push(`${method} ${path}: ${a.status}, not ${expected}`);
      }
    }

    console.log(
      `fuzz seed ${SEED}: ${total} requests over ${routes.length} routes; by status ${JSON.stringify(byStatus)}`,
    );
    expect(failures.slice(0, 30)).toEqual([]);
    expect(Object.keys(byStatus).filter((st) => Number(st) >= 500)).toEqual([]);

    // Every docs_url handed out resolves to its page.
    expect(docsUrls.size).toBeGreaterThan(10);
    for (const url of docsUrls) {
      const page = await fetch(url);
      expect(page.status, url).toBe(200);
      expect(await page.text()).toContain(`<code>${url.split('/').pop()}</code>`);
    }

    // The server still does its work afterwards.
    const after = await s.call('POST', '/v1/emails', {
      token: s.seed!.api_key_test,
      body: {
        from: 'fuzz@example.test',
        to: 'delivered@simulator.test',
        subject: 'after the fuzz',
        text: 'still here',
      },
    });
    expect(after.status, after.text).toBe(202);
  }, 120_000);
});
