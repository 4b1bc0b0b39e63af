// One HTTP exchange of the client, as undici's `request` makes one: redirects are answered, not followed; no answer
// within `headersMs` fails with UND_ERR_HEADERS_TIMEOUT, and `idleMs` without a byte of the body with
// UND_ERR_BODY_TIMEOUT (the codes a ConnectionError names).
//
// Through Node's own http and https modules. Node's fetch would load undici (a hundred modules) and compile its
// WebAssembly parser twice, the second time, optimised, on a thread that holds the process at exit: a command-line
// run spent more on that than on the rest of its work (bench/cli-start). With an undici dispatcher (a connection pool,
// a proxy, or a MockAgent in tests), the request goes through fetch, which takes one.
import type { IncomingHttpHeaders } from 'node:http';
import type { Dispatcher } from 'undici';

/** A response as the transport has it: its status and headers, and its body still to be read. */
export interface TransportResponse {
  status: number;
  headers: IncomingHttpHeaders | Headers;
  /** The body, a chunk at a time, each within the idle timeout. */
  body: AsyncIterable<Uint8Array>;
}

export interface Outgoing {
  method: string;
  headers: Record<string, string>;
  body?: string;
}

export interface SendOptions {
  headersMs: number;
  idleMs: number;
  signal?: AbortSignal;
  dispatcher?: Dispatcher;
}

export function send(url: URL, init: Outgoing, o: SendOptions): Promise<TransportResponse> {
  return o.dispatcher ? viaFetch(url, init, o) : viaHttp(url, init, o);
}

function viaHttp(url: URL, init: Outgoing, o: SendOptions): Promise<TransportResponse> {
  const { request } = process.getBuiltinModule(url.protocol === 'https:' ? 'node:https' : 'node:http');
  return new Promise((resolve, reject) => {
    if (o.signal?.aborted) return reject(o.signal.reason);
    const req = request(url, { method: init.method, headers: init.headers });
    let res: import('node:http').IncomingMessage | undefined;
    const stop = (err: unknown) => {
      req.destroy(err as Error);
      res?.destroy(err as Error);
    };
    const onAbort = () => stop(o.signal!.reason);
    o.signal?.addEventListener('abort', onAbort, { once: true });
    let timer = setTimeout(
      () => stop(timeoutError('UND_ERR_HEADERS_TIMEOUT', 'Headers Timeout Error')),
      o.headersMs,
    ).unref();
    const done = () => {
      clearTimeout(timer);
      o.signal?.removeEventListener('abort', onAbort);
    };
    // After the answer has come, a failure reaches the body's reader instead.
    req.on('error', (err) => {
      if (res) return;
      done();
      reject(err);
    });
    req.once('response', (answer) => {
      res = answer;
      clearTimeout(timer);
      const idle = () => {
        clearTimeout(timer);
        timer = setTimeout(() => stop(timeoutError('UND_ERR_BODY_TIMEOUT', 'Body Timeout Error')), o.idleMs).unref();
      };
      const body = timedBody(answer, idle, () => {
        done();
        // A reader that stops early (an event stream closed by its consumer) lets the connection go.
        if (!answer.complete) answer.destroy();
      });
      resolve({ status: answer.statusCode ?? 0, headers: answer.headers, body });
    });
    req.end(init.body);
  });
}

async function viaFetch(url: URL, init: Outgoing, o: SendOptions): Promise<TransportResponse> {
  const timeout = new AbortController();
  let timer = setTimeout(
    () => timeout.abort(timeoutError('UND_ERR_HEADERS_TIMEOUT', 'Headers Timeout Error')),
    o.headersMs,
  ).unref();
  const response = await fetch(url, {
    ...init,
    redirect: 'manual',
    signal: o.signal ? AbortSignal.any([o.signal, timeout.signal]) : timeout.signal,
    // Node's fetch is typed with undici-types' Dispatcher, the undici package's own under another name.
    dispatcher: o.dispatcher,
  } as RequestInit).finally(() => clearTimeout(timer));
  const idle = () => {
    clearTimeout(timer);
    timer = setTimeout(
      () => timeout.abort(timeoutError('UND_ERR_BODY_TIMEOUT', 'Body Timeout Error')),
      o.idleMs,
    ).unref();
  };
  const body = timedBody(response.body ?? NO_BODY, idle, () => clearTimeout(timer));
  return { status: response.status, headers: response.headers, body };
}

/** The body of a response that has none (a 204, a 304). */
const NO_BODY: AsyncIterable<Uint8Array> = {
  [Symbol.asyncIterator]: () => ({ next: async () => ({ done: true, value: undefined }) }),
};

/**
 * `source` a chunk at a time, `idle` called as its reading starts and after each chunk (the body's idle timeout starts
 * again), `end` once when it ends: read to the end, failed, or left early by its reader.
 *
 * A plain iterator, not an async generator around `source`'s own: with the generator, V8's collections of the young
 * generation found each response's objects still alive and moved them on to the old generation, a sixth of all a
 * request allocated, so that each of those collections took 7 ms instead of 0.4 (measured alone: 20,000 requests to a
 * local server; bench/README.md, bench:latency). A test waiting on mail makes such requests all along.
 */
function timedBody(source: AsyncIterable<Uint8Array>, idle: () => void, end: () => void): AsyncIterable<Uint8Array> {
  return {
    [Symbol.asyncIterator]() {
      const chunks = source[Symbol.asyncIterator]();
      let ended = false;
      const over = () => {
        if (ended) return;
        ended = true;
        end();
      };
      idle();
      return {
        async next() {
          try {
            const r = await chunks.next();
            if (r.done) over();
            else idle();
            return r;
          } catch (err) {
            over();
            throw err;
          }
        },
        async return() {
          over();
          await chunks.return?.();
          return { done: true, value: undefined };
        },
      };
    },
  };
}

/** The whole body in one piece. */
export async function readAll(r: TransportResponse): Promise<Uint8Array> {
  const parts: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of r.body) {
    parts.push(chunk);
    size += chunk.byteLength;
  }
  const [only] = parts;
  if (only && parts.length === 1) return only;
  const bytes = new Uint8Array(size);
  let at = 0;
  for (const p of parts) {
    bytes.set(p, at);
    at += p.byteLength;
  }
  return bytes;
}

/** A timeout with the code undici gives its own, so that a ConnectionError names it the same way. */
function timeoutError(code: string, message: string): Error {
  return Object.assign(new Error(message), { code });
}
