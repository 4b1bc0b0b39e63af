// What a refused request tells its sender (docs/api.md#errors: error messages, Problem type/docs_url, ids,
// pagination; docs/errors.md): field messages in plain words, one rule for ids, the admin token named for what it is,
// and an error page behind every docs_url.
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ERROR_CODES, ERROR_HELP } from '../../src/contract/common.js';
import { expectProblem } from '../helpers/problems.js';
import { startTestServer, type Reply, type TestServer } from '../helpers/server.js';
import { sessionOf } from '../helpers/tenants.js';

let s: TestServer;
let session: string;

beforeAll(async () => {
  s = await startTestServer();
  session = await sessionOf(s);
});
afterAll(() => s.close());

const mail = (over: Record<string, unknown> = {}) => ({
  from: 'Shop <orders@example.test>',
  to: 'delivered@simulator.test',
  subject: 'Hi',
  text: 'Hello',
  ...over,
});
const send = (body: unknown) => s.call('POST', '/v1/emails', { token: s.seed!.api_key_test, body });
const errorsOf = (r: Reply) => r.body.errors as { path: string; code: string; message: string }[];

/** A well-formed id that names nothing. */
const unknownId = (prefix: string) => `${prefix}_${'0'.repeat(24)}`;

describe('field messages in plain words', () => {
  it('a missing field "is required", also when it may be a string or an array (to)', async () => {
    const r = await send({ from: 'orders@example.test', subject: 'Hi', text: 'Hello' });
    expectProblem(r, 400, 'invalid_request');
    expect(errorsOf(r)).toEqual([{ path: 'to', code: 'required', message: 'is required' }]);
    expect(r.body.detail).toBe('to: is required');
  });

  it('reply_to of a wrong type or with too many addresses says, once, what it must be', async () => {
    const r = await send(mail({ reply_to: 42 }));
    expectProblem(r, 400, 'invalid_request');
    expect(errorsOf(r)).toEqual([
      expect.objectContaining({ path: 'reply_to', message: 'must be an address or an array of at most 10 addresses' }),
    ]);
    // Too many says the same.
    const many = await send(mail({ reply_to: Array.from({ length: 11 }, (_, i) => `r${i}@b.test`) }));
    expectProblem(many, 422, 'validation_failed');
    expect(errorsOf(many)).toEqual([
      expect.objectContaining({ path: 'reply_to', message: 'must be an address or an array of at most 10 addresses' }),
    ]);
  });

  it('to of a wrong type, none or too many says what to must be', async () => {
    for (const [to, status] of [
      [42, 400],
      [{ a: 1 }, 400],
      [[], 422],
      [Array.from({ length: 51 }, (_, i) => `t${i}@b.test`), 422],
    ] as const) {
      const r = await send(mail({ to }));
      expectProblem(r, status);
      expect(errorsOf(r)).toEqual([
        expect.objectContaining({ path: 'to', message: 'must be an address or an array of 1 to 50 addresses' }),
      ]);
    }
  });

  it('a wrong JSON type says what the field must be', async () => {
    const r = await send(mail({ subject: 42, tracking: { opens: 'yes' }, cc: ['a@b.test', 7] }));
    expectProblem(r, 400, 'invalid_request');
    expect(errorsOf(r)).toEqual(
      expect.arrayContaining([
        { path: 'subject', code: 'invalid_type', message: 'must be a string' },
        { path: 'tracking.opens', code: 'invalid_type', message: 'must be true or false' },
        { path: 'cc.1', code: 'invalid_type', message: 'must be a string' },
      ]),
    );
  });

  it('too long, too many and too few are said in words with the number', async () => {
    const long = await send(mail({ subject: 's'.repeat(999) }));
    expectProblem(long, 422, 'validation_failed');
    expect(errorsOf(long)).toEqual([{ path: 'subject', code: 'too_big', message: 'must be at most 998 characters' }]);

    const attachment = { filename: 'a.txt', content: 'aGk=' };
    const many = await send(mail({ attachments: Array.from({ length: 21 }, () => attachment) }));
    expect(errorsOf(many)).toEqual([{ path: 'attachments', code: 'too_big', message: 'must have at most 20 items' }]);

    const key = await s.call('POST', '/v1/api-keys', { token: session, body: { name: '', scopes: [] } });
    expectProblem(key, 422, 'validation_failed');
    expect(errorsOf(key)).toEqual(
      expect.arrayContaining([
        { path: 'name', code: 'too_small', message: 'must not be empty' },
        { path: 'scopes', code: 'too_small', message: 'must have at least 1 item' },
      ]),
    );
  });

  it('an enum lists its values', async () => {
    const r = await s.call('POST', '/v1/api-keys', {
      token: session,
      body: { name: 'k', scopes: ['emails:send'], mode: 'production' },
    });
    expectProblem(r, 422, 'validation_failed');
    expect(errorsOf(r)).toEqual([{ path: 'mode', code: 'invalid_value', message: 'must be one of live, test' }]);
  });

  it('an unknown field names the nearest known one when it is close, and only then', async () => {
    const r = await send({ ...mail({ text: undefined }), htm: '<p>hi</p>', colour: 'blue', Subjet: 'x' });
    expectProblem(r, 400, 'invalid_request');
    expect(errorsOf(r)).toEqual(
      expect.arrayContaining([
        { path: 'htm', code: 'unknown_field', message: 'unknown field "htm"; did you mean "html"?' },
        { path: 'Subjet', code: 'unknown_field', message: 'unknown field "Subjet"; did you mean "subject"?' },
        { path: 'colour', code: 'unknown_field', message: 'unknown field "colour"' },
      ]),
    );
    expect(r.body.detail).toContain('unknown field "htm"; did you mean "html"?');
    // Inside a nested object too.
    const nested = await send(mail({ tracking: { open: true } }));
    expect(errorsOf(nested)).toEqual([
      expect.objectContaining({ path: 'tracking.open', message: 'unknown field "open"; did you mean "opens"?' }),
    ]);
  });

  it('a date-time and an email address say their format', async () => {
    const r = await send(mail({ scheduled_at: 'tomorrow' }));
    expect(errorsOf(r)).toEqual([
      expect.objectContaining({
        path: 'scheduled_at',
        message: expect.stringMatching(/^must be a date and time such as /),
      }),
    ]);
    const w = await s.admin('POST', '/sandbox/workspaces', { email: 'nope', name: 'X', role: 'owner' });
    expect(errorsOf(w)).toEqual([{ path: 'email', code: 'invalid_format', message: 'must be an email address' }]);
  });

  it('a body that is not a JSON object says so', async () => {
    const r = await s.call('POST', '/v1/auth/login', { body: [] });
    expectProblem(r, 400, 'invalid_request');
    expect(errorsOf(r)).toEqual([{ path: '(body)', code: 'invalid_type', message: 'must be a JSON object' }]);
  });

  it('a query parameter given twice "must be given once"; the detail says it is the query string', async () => {
    const r = await s.call('GET', '/v1/api-keys?limit=1&limit=2', { token: session });
    expectProblem(r, 400, 'invalid_request');
    expect(errorsOf(r)).toEqual([{ path: 'limit', code: 'repeated', message: 'must be given once' }]);
    expect(r.body.detail).toBe('Query string: limit: must be given once');
    const zero = await s.call('GET', '/v1/api-keys?limit=0', { token: session });
    expect(errorsOf(zero)).toEqual([
      expect.objectContaining({ path: 'limit', message: 'must be a whole number from 1 to 100' }),
    ]);
  });

  it('many errors are summarised, and errors[] stays bounded', async () => {
    const body: Record<string, unknown> = mail();
    for (let i = 0; i < 500; i++) body[`extra${i}`] = i;
    const r = await send(body);
    expectProblem(r, 400, 'invalid_request');
    expect(errorsOf(r)).toHaveLength(100);
    expect(r.body.detail).toMatch(/\(and 495 more\)$/);
  });
});

describe('ids', () => {
  it('POST /v1/api-keys with domain_id "" is a 422 naming domain_id, not a 500', async () => {
    const r = await s.call('POST', '/v1/api-keys', {
      token: session,
      body: { name: 'k', scopes: ['emails:send'], domain_id: '' },
    });
    expectProblem(r, 422, 'validation_failed');
    expect(errorsOf(r)).toEqual([
      {
        path: 'domain_id',
        code: 'invalid_format',
        message: 'must be a domain id: dom_ followed by 24 letters and digits',
      },
    ]);
  });

  it('an id of the wrong shape in a body is a 422 naming the field; of the wrong JSON type a 400', async () => {
    for (const domain_id of [
      'dom_short',
      s.seed!.workspace_id,
      `${s.seed!.domain_id} `,
      'DOM_000000000000000000000000',
    ]) {
      const r = await s.call('POST', '/v1/api-keys', {
        token: session,
        body: { name: 'k', scopes: ['emails:send'], domain_id },
      });
      expectProblem(r, 422, 'validation_failed');
      expect(errorsOf(r).map((e) => e.path)).toEqual(['domain_id']);
    }
    const typed = await s.call('POST', '/v1/api-keys', {
      token: session,
      body: { name: 'k', scopes: ['emails:send'], domain_id: 7 },
    });
    expectProblem(typed, 400, 'invalid_request');
    expect(errorsOf(typed)).toEqual([
      expect.objectContaining({ path: 'domain_id', message: expect.stringContaining('must be a domain id') }),
    ]);
  });

  it('a well-formed id naming nothing is refused by the rule that looks it up', async () => {
    const key = await s.call('POST', '/v1/api-keys', {
      token: session,
      body: { name: 'k', scopes: ['emails:send'], domain_id: unknownId('dom') },
    });
    expectProblem(key, 422, 'validation_failed');
    expect(errorsOf(key)).toEqual([expect.objectContaining({ path: 'domain_id', code: 'not_found' })]);
    const login = await s.call('POST', '/v1/auth/login', {
      body: { email: s.seed!.email, password: s.seed!.password, workspace_id: unknownId('ws') },
    });
    expectProblem(login, 403, 'not_a_member');
  });

  it('workspace_id at login or refresh must be a workspace id (it was silently ignored when empty)', async () => {
    const login = await s.call('POST', '/v1/auth/login', {
      body: { email: s.seed!.email, password: s.seed!.password, workspace_id: '' },
    });
    expectProblem(login, 422, 'validation_failed');
    expect(errorsOf(login)).toEqual([
      expect.objectContaining({
        path: 'workspace_id',
        message: expect.stringContaining('must be a workspace id: ws_'),
      }),
    ]);
    const signedIn = await s.call('POST', '/v1/auth/login', {
      body: { email: s.seed!.email, password: s.seed!.password },
    });
    const refresh = await s.call('POST', '/v1/auth/refresh', {
      body: { refresh_token: signedIn.body.refresh_token, workspace_id: '' },
    });
    expectProblem(refresh, 422, 'validation_failed');
    expect(errorsOf(refresh).map((e) => e.path)).toEqual(['workspace_id']);
  });

  it('after must be an id of the listed kind (400), and one naming no item of the list is a 400 too', async () => {
    const cases: [string, string, RegExp][] = [
      ['/v1/api-keys', session, /must be an API key id: key_/],
      ['/v1/domains', s.seed!.api_key_test, /must be a domain id: dom_/],
      ['/sandbox/messages', s.adminToken, /must be a caught message id: eml_/],
    ];
    for (const [path, token, message] of cases) {
      for (const after of ['', 'nope', unknownId('msg')]) {
        const r = await s.call('GET', `${path}?after=${after}`, { token });
        expectProblem(r, 400, 'invalid_request');
        expect(errorsOf(r)).toEqual([
          expect.objectContaining({ path: 'after', message: expect.stringMatching(message) }),
        ]);
      }
    }
    const unknown = await s.call('GET', `/v1/domains?after=${unknownId('dom')}`, { token: s.seed!.api_key_test });
    expectProblem(unknown, 400, 'invalid_request');
    expect(errorsOf(unknown)).toEqual([expect.objectContaining({ path: 'after', code: 'not_found' })]);
  });

  it('the sandbox messages query checks workspace_id and refuses an empty to', async () => {
    const ws = await s.admin('GET', '/sandbox/messages?workspace_id=acme');
    expectProblem(ws, 400, 'invalid_request');
    expect(errorsOf(ws)).toEqual([
      expect.objectContaining({ path: 'workspace_id', message: expect.stringContaining('workspace id') }),
    ]);
    const to = await s.admin('GET', '/sandbox/messages?to=');
    expectProblem(to, 400, 'invalid_request');
    expect(errorsOf(to)).toEqual([{ path: 'to', code: 'too_small', message: 'must not be empty' }]);
  });

  it('a path id of the wrong shape, or naming nothing, is a 404', async () => {
    const cases: [string, string, string | null][] = [
      ['GET', '/v1/domains/', s.seed!.api_key_test],
      ['DELETE', '/v1/api-keys/', session],
      ['GET', '/v1/emails/', s.seed!.api_key_test],
      ['POST', '/sandbox/workspaces/', s.adminToken],
      ['GET', '/sandbox/messages/', s.adminToken],
    ];
    for (const [method, base, token] of cases) {
      const suffix = base.includes('workspaces') ? '/suspend' : '';
      for (const id of ['x', '..%2Fx', '%C3%A9', 'dom_', unknownId('zzz'), 'a'.repeat(2000)]) {
        expectProblem(await s.call(method, `${base}${id}${suffix}`, { token }), 404, 'not_found');
      }
    }
  });
});

describe('credentials', () => {
  it('the admin token on /v1 says it is the sandbox admin token and what /v1 takes', async () => {
    for (const [method, path] of [
      ['GET', '/v1/api-keys'],
      ['GET', '/v1/domains'],
      ['POST', '/v1/emails'],
    ] as const) {
      const r = await s.call(method, path, { token: s.adminToken, body: method === 'POST' ? mail() : undefined });
      expectProblem(r, 401, 'invalid_token');
      expect(r.body.detail).toMatch(/sandbox admin token/);
      expect(r.body.detail).toMatch(/\/sandbox routes and the inbox page/);
      expect(r.body.detail).toMatch(/API key or a session access token/);
    }
  });

  it('a missing credential says which kind the operation takes', async () => {
    const session = await s.call('GET', '/v1/api-keys');
    expectProblem(session, 401, 'missing_credentials');
    expect(session.body.detail).toMatch(/takes a session: sign in with `svc login`/);
    const key = await s.call('POST', '/v1/emails', { body: mail() });
    expect(key.body.detail).toMatch(/takes an API key/);
    const sandbox = await s.call('GET', '/sandbox/clock');
    expectProblem(sandbox, 401, 'missing_credentials');
    expect(sandbox.body.detail).toMatch(/admin token/);
  });

  it('an API key on a sandbox route is refused as not the admin token', async () => {
    const r = await s.call('GET', '/sandbox/clock', { token: s.seed!.api_key_test });
    expectProblem(r, 401, 'invalid_token');
    expect(r.body.detail).toMatch(/not the admin token/);
  });
});

describe('request bodies', () => {
  it('a body that is not UTF-8 is 400 invalid_json, not decoded into something else', async () => {
    const bytes = Buffer.concat([
      Buffer.from('{"email":"a'),
      Buffer.from([0xff, 0xfe]),
      Buffer.from('@b.test","password":"x"}'),
    ]);
    const r = await rawPost('/v1/auth/login', bytes);
    expect(r.status).toBe(400);
    expect(r.body.code).toBe('invalid_json');
    expect(r.body.detail).toMatch(/UTF-8/);
  });

  it('JSON nested deeper than 64 levels is refused before anything walks it (it was a 500 under an Idempotency-Key)', async () => {
    const deep = `${'{"a":'.repeat(10_000)}1${'}'.repeat(10_000)}`;
    const raw = JSON.stringify(mail()).replace(/}$/, `,"template_data":${deep}}`);
    const r = await s.call('POST', '/v1/emails', {
      token: s.seed!.api_key_test,
      raw,
      headers: { 'content-type': 'application/json', 'idempotency-key': 'deep-1' },
    });
    expectProblem(r, 400, 'invalid_request');
    expect(errorsOf(r)).toEqual([
      { path: '(body)', code: 'too_deep', message: 'must not nest objects and arrays more than 64 levels deep' },
    ]);
    // 64 levels are fine.
    const ok = JSON.stringify(mail()).replace(/}$/, `,"template_data":${'{"a":'.repeat(62)}1${'}'.repeat(62)}}`);
    const accepted = await s.call('POST', '/v1/emails', {
      token: s.seed!.api_key_test,
      raw: ok,
      headers: { 'content-type': 'application/json', 'idempotency-key': 'deep-2' },
    });
    expect(accepted.status, accepted.text).toBe(202);
  });
});

describe('routes and methods', () => {
  it('a trailing slash is another path: 404, never a 405 that allows the method it refuses', async () => {
    for (const [method, path] of [
      ['GET', '/v1/api-keys/'],
      ['POST', '/v1/api-keys/'],
      ['GET', '/sandbox/clock/'],
    ] as const) {
      const r = await s.call(method, path, { token: path.startsWith('/sandbox') ? s.adminToken : session });
      expectProblem(r, 404, 'not_found');
    }
  });

  it('a wrong method is 405 method_not_allowed with an Allow header, and its detail names the methods', async () => {
    const r = await s.call('PATCH', '/v1/api-keys', { token: session });
    expectProblem(r, 405, 'method_not_allowed');
    expect(r.headers.get('allow')).toBe('GET, POST');
    expect(r.body.detail).toBe('PATCH is not allowed on this path; use GET or POST.');
  });
});

describe('error pages', () => {
  it("every Problem's docs_url is the page of its code on the server's own origin, and the page answers", async () => {
    const problems = [
      await s.call('GET', '/v1/nowhere'),
      await s.call('GET', '/v1/api-keys'),
      await send(mail({ htm: 'x' })),
      await s.call('PATCH', '/v1/api-keys', { token: session }),
      await s.call('GET', '/v1/api-keys', { token: s.adminToken }),
    ];
    for (const p of problems) {
      expect(p.body.docs_url).toBe(`${s.origin}/docs/errors/${p.body.code}`);
      expect(p.body.type).toBe(`https://docs.svc.dev/errors/${p.body.code}`);
      const page = await fetch(p.body.docs_url);
      expect(page.status).toBe(200);
      expect(page.headers.get('content-type')).toMatch(/^text\/html/);
      expect(await page.text()).toContain(`<code>${p.body.code}</code>`);
    }
  });

  it('serves a short page per code: title, status, what it means, how to fix it, and a link to the index', async () => {
    /** The text a reader sees: tags dropped, character references decoded. */
    const textOf = (html: string) =>
      html.replace(/<[^>]+>/g, ' ').replace(/&#(\d+);/g, (_, n: string) => String.fromCharCode(Number(n)));
    for (const code of Object.keys(ERROR_CODES) as (keyof typeof ERROR_CODES)[]) {
      const page = await s.call('GET', `/docs/errors/${code}`);
      expect(page.status, code).toBe(200);
      expect(page.headers.get('content-type')).toMatch(/^text\/html/);
      const [status, title] = ERROR_CODES[code];
      expect(page.text).toMatch(/^<!doctype html><html lang="en">/);
      expect(textOf(/<title>(.*)<\/title>/.exec(page.text)![1]!)).toBe(`${code}: ${title} (${status})`);
      expect(page.text).toContain(`<h1><code>${code}</code>`);
      expect(page.text).toContain('<a href="/docs/errors">All error codes</a>');
      const text = textOf(page.text);
      expect(text).toContain(`HTTP status ${status}`);
      // Each heading followed by the table's text for the code.
      const words = (t: string) => t.replaceAll('`', ' ').replace(/\s+/g, ' ').trim();
      expect(words(text)).toContain(
        `What it means ${words(ERROR_HELP[code].meaning)} How to fix it ${words(ERROR_HELP[code].fix)}`,
      );
    }
    const command = await s.call('GET', '/docs/errors/invalid_api_key');
    expect(command.text).toContain('<code>svc keys create</code>');
  });

  it('serves an index linking every code', async () => {
    const index = await s.call('GET', '/docs/errors');
    expect(index.status).toBe(200);
    for (const code of Object.keys(ERROR_CODES))
      expect(index.text).toContain(`<a href="/docs/errors/${code}"><code>${code}</code></a>`);
  });

  it('an unknown code is a 404 Problem naming the index', async () => {
    for (const code of ['nope', '__proto__', 'constructor', 'toString', 'x'.repeat(500)]) {
      const r = await s.call('GET', `/docs/errors/${code}`);
      expectProblem(r, 404, 'not_found');
      expect(r.body.detail).toMatch(/listed at \/docs\/errors\.$/);
    }
  });
});

describe('messages', () => {
  // The first words of every command `svc` has (docs/commands.md).
  const COMMANDS = [
    'signup',
    'login',
    'logout',
    'whoami',
    'verify-email',
    'sessions revoke-all',
    'keys create',
    'keys list',
    'keys revoke',
    'domains add',
    'domains list',
    'domains get',
    'domains dns',
    'domains update',
    'domains delete',
    'domains verify',
    'emails send',
    'emails batch',
    'emails get',
    'emails cancel',
    'events list',
    'webhooks listen',
    'webhooks verify',
    'serve',
    'sandbox invites create',
    'sandbox workspaces create',
    'sandbox workspaces suspend',
    'sandbox workspaces activate',
    'sandbox workspaces close',
    'sandbox clock',
    'sandbox dns publish',
    'sandbox dns set',
    'sandbox dns remove',
    'sandbox webhooks add',
    'sandbox webhooks list',
    'sandbox webhooks remove',
    'sandbox webhooks rotate-secret',
    'sandbox webhooks enable',
    'sandbox messages clear',
    'sandbox chaos set',
    'sandbox chaos list',
    'sandbox chaos clear',
    'doctor',
    'inbox',
    'completion',
  ];
  /** Every `svc …` command quoted in backticks in a text. */
  const quoted = (text: string) => [...text.matchAll(/`svc ([^`]+)`/g)].map((m) => m[1]!);
  const known = (command: string) => COMMANDS.some((c) => command === c || command.startsWith(`${c} `));

  it('the error table names only commands svc has, and gives every code a meaning and a fix', () => {
    expect(Object.keys(ERROR_HELP).sort()).toEqual(Object.keys(ERROR_CODES).sort());
    for (const [code, help] of Object.entries(ERROR_HELP)) {
      expect(help.meaning.length, code).toBeGreaterThan(20);
      expect(help.fix.length, code).toBeGreaterThan(20);
      for (const command of quoted(`${help.meaning} ${help.fix}`))
        expect(known(command), `${code}: svc ${command}`).toBe(true);
    }
  });

  it('no message of the server names a command svc does not have', () => {
    const files = (dir: string): string[] =>
      readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
        e.isDirectory() ? files(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
      );
    const commands = files('src/server').flatMap((f) => quoted(readFileSync(f, 'utf8').replace(/\\`/g, '`')));
    expect(commands.length).toBeGreaterThan(10);
    expect(commands.filter((c) => !known(c))).toEqual([]);
  });
});

/** POST raw bytes as JSON (fetch would not send bytes that are not UTF-8 unchanged from a string). */
function rawPost(path: string, bytes: Buffer): Promise<{ status: number; body: any }> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port: s.port,
        method: 'POST',
        path,
        headers: { 'content-type': 'application/json', 'content-length': bytes.length },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({ status: res.statusCode!, body: JSON.parse(Buffer.concat(chunks).toString('utf8')) }),
        );
      },
    );
    req.on('error', reject);
    req.end(bytes);
  });
}
