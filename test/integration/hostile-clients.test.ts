// Clients that never finish: stalled uploads cannot hold the server's memory or keep it from answering, and requests
// that fail below the router still get a Problem.
import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REQUEST_ID, SERVICE_VERSION } from '../helpers/problems.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

const MiB = 1024 * 1024;

/** A raw connection: what it has received so far, and a promise of its end. */
function open(s: TestServer): { socket: Socket; received: () => string; closed: Promise<void> } {
  const socket = connect(s.port, '127.0.0.1');
  let received = '';
  socket.setEncoding('latin1').on('data', (d: string) => (received += d));
  socket.on('error', () => {});
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  return { socket, received: () => received, closed };
}

/** Parses the one HTTP response a raw connection received. */
function response(raw: string) {
  const [head, ...rest] = raw.split('\r\n\r\n');
  const [statusLine, ...lines] = head!.split('\r\n');
  const headers = Object.fromEntries(
    lines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]),
  );
  return { status: Number(statusLine!.split(' ')[1]), headers, body: JSON.parse(rest.join('\r\n')) };
}

function expectRawProblem(raw: string, status: number, code: string) {
  const r = response(raw);
  expect(r.status, raw).toBe(status);
  expect(r.headers['content-type']).toMatch(/^application\/problem\+json/);
  expect(r.headers['service-version']).toBe(SERVICE_VERSION);
  expect(r.headers['x-request-id']).toMatch(REQUEST_ID);
  expect(r.body).toMatchObject({ status, code, request_id: r.headers['x-request-id'] });
  expect(r.body.detail).toBeTypeOf('string');
  return r;
}

describe('stalled uploads', () => {
  let s: TestServer;
  beforeAll(async () => {
    // The production limits, with the idle and header timeouts shortened so the test need not wait for them, yet long
    // enough that a loaded machine's pauses are not taken for a stalled client. (The memory they leave the server with
    // is measured on the real binary: test/e2e/stalled-uploads.test.ts.)
    s = await startTestServer({
      bodyLimits: { totalBytes: 48 * MiB, idleMs: 3_000 },
      httpTimeouts: { headersMs: 3_000, requestMs: 60_000 },
    });
  });
  afterAll(() => s?.close());

  it('100 uploads that stop midway leave the server answering, fill its body budget (429), and are closed when they stall', async () => {
    const send = (extra: Record<string, unknown> = {}) =>
      s.call('POST', '/v1/emails', {
        token: s.seed!.api_key_test,
        body: { from: 'orders@example.test', to: 'someone@example.com', subject: 'Hi', text: 'Hello', ...extra },
      });
    expect((await send()).status).toBe(202);

    // 50 sign-ins sending 60 KiB of a chunked body, and 50 sends declaring 40 MiB and sending 2 MiB of it.
    const chunk60k = Buffer.alloc(60 * 1024, 0x20);
    const twoMiB = Buffer.alloc(2 * MiB, 0x20);
    const logins = Array.from({ length: 50 }, () => {
      const c = open(s);
      c.socket.write(
        'POST /v1/auth/login HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n',
      );
      c.socket.write(`${chunk60k.length.toString(16)}\r\n`);
      c.socket.write(chunk60k);
      return c;
    });
    const sends = Array.from({ length: 50 }, () => {
      const c = open(s);
      c.socket.write(
        `POST /v1/emails HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${s.seed!.api_key_test}\r\n` +
          `Content-Type: application/json\r\nContent-Length: ${40 * MiB}\r\n\r\n`,
      );
      c.socket.write(twoMiB);
      return c;
    });
    // 100 MiB of send bodies is more than the 48 MiB the server holds at once: the first refusals prove it is full.
    await expect
      .poll(() => sends.filter((c) => c.received().startsWith('HTTP/1.1 429')).length, { timeout: 10_000 })
      .toBeGreaterThan(0);

    // Full, and still answering.
    expect((await s.call('GET', '/v1/openapi.json')).status).toBe(200);
    expect((await send()).status).toBe(202);
    const refused = sends.filter((c) => c.received().startsWith('HTTP/1.1 429'));
    expectRawProblem(refused[0]!.received(), 429, 'rate_limited');
    expect(response(refused[0]!.received()).headers['retry-after']).toBe('1');

    // Every stalled upload is answered and closed once nothing has arrived for the idle timeout.
    await Promise.all([...logins, ...sends].map((c) => c.closed));
    const stalled = expectRawProblem(logins[0]!.received(), 400, 'invalid_request');
    expect(stalled.body.detail).toMatch(/stopped arriving/);

    // The memory they held is free again: a 30 MB attachment goes through.
    const big = await send({
      attachments: [{ filename: 'big.bin', content: Buffer.alloc(30 * 1000 * 1000, 1).toString('base64') }],
    });
    expect(big.status, big.text).toBe(202);
  }, 60_000);

  it('a connection that never finishes its headers is answered with a Problem and closed', async () => {
    const c = open(s);
    c.socket.write('POST /v1/auth/login HTTP/1.1\r\nHost: x\r\nContent-Type: app');
    await c.closed;
    const r = expectRawProblem(c.received(), 400, 'invalid_request');
    expect(r.body.detail).toMatch(/did not arrive in time/);
  });
});

describe('a body that trickles in', () => {
  let s: TestServer;
  const lines: { msg: string; fields?: Record<string, unknown> }[] = [];
  beforeAll(async () => {
    // A body may take 2.5 s here (60 s in production), and may pause 1.5 s: a byte every 0.3 s never pauses that long.
    const log = {
      debug: () => {},
      info: (msg: string, fields?: Record<string, unknown>) => lines.push({ msg, fields }),
      warn: () => {},
      error: (msg: string, fields?: Record<string, unknown>) => lines.push({ msg, fields }),
    };
    s = await startTestServer({
      httpTimeouts: { headersMs: 1_500, requestMs: 2_500 },
      bodyLimits: { totalBytes: 48 * MiB, idleMs: 1_500 },
      log,
    });
  });
  afterAll(() => s?.close());

  it('is answered 408 request_timeout while the client is still there, and logged as such (no 500)', async () => {
    const c = open(s);
    c.socket.write(
      'POST /v1/auth/login HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 500\r\n\r\n{',
    );
    const drip = setInterval(() => c.socket.writable && c.socket.write(' '), 300);
    try {
      await c.closed;
    } finally {
      clearInterval(drip);
    }
    const r = expectRawProblem(c.received(), 408, 'request_timeout');
    expect(r.body.detail).toMatch(/did not arrive within 2.5 s; send it again in one go/);
    expect(lines.filter((l) => l.msg === 'request' && l.fields?.status === 408)).toHaveLength(1);
    expect(lines.filter((l) => l.msg === 'unhandled error')).toEqual([]);
  });
});

describe('requests that fail below the router', () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer();
  });
  afterAll(() => s?.close());

  const raw = async (request: string | Buffer) => {
    const c = open(s);
    c.socket.end(request);
    await c.closed;
    return c.received();
  };

  it('still get a Problem body with Service-Version and X-Request-Id, each naming what to fix', async () => {
    const cases: [string | Buffer, RegExp][] = [
      ['GET /v1\\openapi.json HTTP/1.1\r\nHost: x\r\n\r\n', /path and Host header.*Backslash/],
      ['GET /v1/openapi.json HTTP/1.1\r\nHost: a b\r\n\r\n', /path and Host header/],
      ['GET /v1/openapi.json HTTP/1.1\r\n\r\n', /Host header.*Missing host/i],
      ['BREW /v1/openapi.json HTTP/1.1\r\nHost: x\r\n\r\n', /method is not one HTTP knows/],
      [
        `GET /v1/openapi.json HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`,
        /headers are larger than 16 KiB/,
      ],
      ['POST /v1/auth/login HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n{}', /Content-Length/],
      [
        'POST /v1/auth/login HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n{}',
        /Transfer-Encoding/,
      ],
    ];
    for (const [request, detail] of cases) {
      const r = expectRawProblem(await raw(request), 400, 'invalid_request');
      expect(r.body.detail, String(request).slice(0, 40)).toMatch(detail);
    }
  });

  it('a CONNECT and a chunked body whose chunk size is no number get a 400 Problem, not a closed socket', async () => {
    const connectTo = expectRawProblem(
      await raw('CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n'),
      400,
      'invalid_request',
    );
    expect(connectTo.body.detail).toMatch(/^CONNECT asks for a tunnel, and this is the svc API, not a proxy/);
    // The headers are taken (the request reaches the app, which waits for the body) before the body fails to parse.
    const heads = [
      `POST /v1/emails HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${s.seed!.api_key_test}\r\n`,
      'POST /v1/auth/login HTTP/1.1\r\nHost: x\r\n',
    ];
    for (const head of heads) {
      const chunked = expectRawProblem(
        await raw(`${head}Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n`),
        400,
        'invalid_request',
      );
      expect(chunked.body.detail).toMatch(/^The chunked request body is malformed/);
    }
    // Nothing was sent for it, and the server goes on answering.
    expect((await s.call('GET', '/v1/openapi.json')).status).toBe(200);
  });

  it('a path with dot segments is answered as sent, with a 404 Problem: never resolved to another route', async () => {
    const cases = [
      '/v1/%2e%2e',
      '/v1/%2E%2e/',
      '/v1/..',
      '/v1/emails/%2e%2e/api-keys',
      '/sandbox/.%2e/v1/openapi.json',
    ];
    for (const path of cases) {
      const r = expectRawProblem(
        await raw(`GET ${path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`),
        404,
        'not_found',
      );
      expect(r.body.detail, path).toBe(`No route GET ${path}; the API is under /v1 and GET /v1/openapi.json lists it.`);
    }
    // A dot inside a segment is no dot segment.
    const dotted = await raw('GET /v1/emails/a..b HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
    expect(response(dotted).status).toBe(401);
  });

  it('a method the service does not serve on a known path is 405 method_not_allowed with Allow', async () => {
    const r = expectRawProblem(
      await raw('PROPFIND /v1/openapi.json HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n'),
      405,
      'method_not_allowed',
    );
    expect(r.headers.allow).toBe('GET');
  });
});
