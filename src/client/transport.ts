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
      async function* chunks(): AsyncGenerator<Uint8Array> {
        try {
          idle();
          for await (const chunk of answer) {
            idle();
            yield chunk as Buffer;
          }
        } finally {
          done();
          // A reader that stops early (an event stream closed by its consumer) lets the connection go.
          if (!answer.complete) answer.destroy();
        }
      }
      resolve({ status: answer.statusCode ?? 0, headers: answer.headers, body: chunks() });
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
  async function* chunks(): AsyncGenerator<Uint8Array> {
    if (!response.body) return;
    try {
      idle();
      for await (const chunk of response.body) {
        idle();
        yield chunk;
      }
    } finally {
      clearTimeout(timer);
    }
  }
  return { status: response.status, headers: response.headers, body: chunks() };
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
