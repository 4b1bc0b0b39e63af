// The node:http(s) server around the Hono app: timeouts for headers and whole requests, and a Problem answer (with
// Service-Version and X-Request-Id) for requests that fail before they reach the app — a request line, headers or a
// chunked body node cannot parse, headers over the size limit, a CONNECT, a path or Host header the adapter cannot
// turn into a URL.
import { getRequestListener } from '@hono/node-server';
import { createServer as createHttpServer, STATUS_CODES, type Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { Duplex } from 'node:stream';
import type { Hono } from 'hono';
import { SERVICE_VERSION, VERSION_HEADER } from '../../contract/common.js';
import { SANDBOX_HEADER } from '../../contract/sandbox-headers.js';
import { newId } from '../../lib/ids.js';
import type { Logger } from '../../lib/log.js';
import { ServiceError } from '../core/errors.js';
import { problemBody } from '../core/problem.js';
import { problemResponse } from './problem.js';
import { responseOn } from './socket-response.js';

export interface HttpTimeouts {
  /** The request line and headers must arrive within this (ms). */
  headersMs: number;
  /** The body must arrive within this (ms) once the headers have (408 otherwise). */
  requestMs: number;
}

export const DEFAULT_TIMEOUTS: HttpTimeouts = { headersMs: 10_000, requestMs: 60_000 };

/**
 * What a parse error of node's HTTP parser means for the client, and the fix. Every one is a 400 `invalid_request`
 * (headers too large included: 431 has no code in the contract's list, and 400 covers any malformed request).
 */
function refusal(err: NodeJS.ErrnoException): string {
  switch (err.code) {
    case 'HPE_HEADER_OVERFLOW':
      return 'The request headers are larger than 16 KiB; send fewer or shorter headers.';
    case 'HPE_INVALID_METHOD':
      return 'The request method is not one HTTP knows; use GET, POST, PUT, PATCH or DELETE.';
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return 'The request did not arrive in time; send it again in one go.';
    case 'HPE_UNEXPECTED_CONTENT_LENGTH':
    case 'HPE_INVALID_CONTENT_LENGTH':
    case 'HPE_INVALID_TRANSFER_ENCODING':
      return 'The request framing is ambiguous (Content-Length repeated, or beside Transfer-Encoding); send one Content-Length or chunked encoding.';
    case 'HPE_INVALID_CHUNK_SIZE':
    case 'HPE_CHUNK_EXTENSIONS_OVERFLOW':
    case 'HPE_STRICT':
      return 'The chunked request body is malformed (a chunk size that is not hexadecimal, or a chunk not ended by CRLF); send it again, or with a Content-Length.';
    default:
      return `The request could not be parsed as HTTP/1.1 (${err.code ?? err.message}).`;
  }
}

/** A whole HTTP/1.1 response carrying a 400 Problem, for a socket no response object owns. */
function rawProblem(detail: string, origin: string): string {
  const requestId = newId('req');
  const body = JSON.stringify(problemBody(new ServiceError('invalid_request', detail), requestId, origin));
  return [
    `HTTP/1.1 400 ${STATUS_CODES[400]}`,
    'Content-Type: application/problem+json',
    `Content-Length: ${Buffer.byteLength(body)}`,
    `${VERSION_HEADER}: ${SERVICE_VERSION}`,
    `X-Request-Id: ${requestId}`,
    `${SANDBOX_HEADER}: 1`,
    'Connection: close',
    '',
    body,
  ].join('\r\n');
}

export function createServer(
  // biome-ignore lint/suspicious/noExplicitAny: any Hono app, whatever its bindings
  app: Hono<any>,
  opts: { log: Logger; origin: () => string; tls?: { cert: Buffer; key: Buffer }; timeouts?: HttpTimeouts },
): Server & { closeUnusedConnections(): void } {
  const timeouts = opts.timeouts ?? DEFAULT_TIMEOUTS;
  const listener = getRequestListener(app.fetch, {
    // The adapter could not build a Request (a `\` in the path, a Host header that is not a host, none at all).
    errorHandler: (err) => {
      const requestId = newId('req');
      const detail = `The request's URL (its path and Host header) is malformed: ${(err as Error).message}.`;
      opts.log.info('request refused before routing', { request_id: requestId, error: (err as Error).message });
      return problemResponse(new ServiceError('invalid_request', detail), requestId, opts.origin(), {
        [VERSION_HEADER]: SERVICE_VERSION,
        'X-Request-Id': requestId,
        [SANDBOX_HEADER]: '1',
        Connection: 'close',
      });
    },
  });
  const options = {
    // A request without Host reaches the adapter, which refuses it with a Problem like any other bad URL.
    requireHostHeader: false,
    headersTimeout: timeouts.headersMs,
    // A backstop only: the app answers a body that has not arrived within requestMs with a 408 (http/body.ts) while
    // the client is still there; node's own limit would drop the connection without a word.
    requestTimeout: timeouts.headersMs + timeouts.requestMs,
    // How often node looks for connections past those timeouts (its default, 30 s, would triple a 10 s limit).
    connectionsCheckingInterval: Math.min(2_000, timeouts.headersMs),
  };
  const server = opts.tls
    ? createHttpsServer({ ...options, cert: opts.tls.cert, key: opts.tls.key }, listener)
    : createHttpServer(options, listener);
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Duplex) => {
    // A response already under way (or a socket gone) cannot carry another one. A request whose headers were taken but
    // whose body then failed to parse (a chunk size that is no number) has a response not yet begun: the Problem goes
    // in its place, and the connection ends, so the app's answer (if it comes) has nowhere to go.
    const response = responseOn(socket);
    if (err.code === 'ECONNRESET' || !socket.writable || response?.headersSent) {
      socket.destroy();
      return;
    }
    opts.log.info('request refused before routing', { status: 400, error: err.code ?? err.message });
    socket.end(rawProblem(refusal(err), opts.origin()));
  });
  // CONNECT asks for a tunnel, which node hands to this event instead of the app; a server that is no proxy says so.
  server.on('connect', (req: { method?: string }, socket: Duplex) => {
    opts.log.info('request refused before routing', { status: 400, method: req.method });
    socket.on('error', () => socket.destroy());
    socket.end(
      rawProblem(
        'CONNECT asks for a tunnel, and this is the svc API, not a proxy; send GET, POST, PUT, PATCH or DELETE to its /v1 routes.',
        opts.origin(),
      ),
    );
  });
  // Connections that have not sent a request yet. server.close() ends those idle between requests, but not these: a
  // client's pool may open one ahead and leave it unused (fetch does after a response it aborted, such as the inbox
  // stream a wait for mail reads), and the close would wait until the client gives it up, seconds later.
  const unused = new Set<Duplex>();
  server.on(opts.tls ? 'secureConnection' : 'connection', (socket: Duplex) => {
    unused.add(socket);
    socket.once('close', () => unused.delete(socket));
  });
  server.on('request', (req: { socket: Duplex }) => unused.delete(req.socket));
  return Object.assign(server, {
    /** Ends every connection that has not sent a request (for a shutdown, after close()). */
    closeUnusedConnections() {
      for (const socket of unused) socket.destroy();
    },
  });
}
